// Draws a topology tree as a PNG with gnuplot (shmcoll-info --png): ranks as labelled points,
// one row per depth, leaves spread left to right in serving order, each parent centred over
// its children, edges as lines. gnuplot is run as a child process; no library is linked.
#pragma once

#include <string>
#include <vector>

#include "topology/hierarchy.hpp"

namespace shmcoll::tools {

// The gnuplot script that draws `tree` into `png_path` (data inline, so it stands alone).
std::string tree_plot_script(const topology::Tree& tree, const std::vector<topology::Place>& places,
                             const std::string& title, const std::string& png_path);

// Runs gnuplot on the script; returns an error text, empty on success.
std::string draw_tree_png(const topology::Tree& tree, const std::vector<topology::Place>& places,
                          const std::string& title, const std::string& png_path);

}  // namespace shmcoll::tools
