// Draws a topology tree as a PNG with gnuplot (shmcoll-info --png): ranks as labelled points,
// one row per depth, leaves spread left to right in serving order, each parent centred over
// its children, edges as lines. gnuplot is run as a child process; no library is linked.
#pragma once

#include <string>
#include <vector>

#include "shmcoll/introspection.hpp"

namespace shmcoll::tools {

// The gnuplot script that draws the team's tree into `png_path` (data inline, so it stands
// alone).
std::string tree_plot_script(const introspection::TeamPreview& team, const std::string& title,
                             const std::string& png_path);

// Runs gnuplot on the script; returns an error text, empty on success.
std::string draw_tree_png(const introspection::TeamPreview& team, const std::string& title,
                          const std::string& png_path);

}  // namespace shmcoll::tools
