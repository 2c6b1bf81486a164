// Runs gnuplot as a child process on a script (the tools' --png options); no library is linked.
#pragma once

#include <string>

namespace shmcoll::tools {

// Feeds `script` to gnuplot; returns an error text, empty on success. The script names its
// own output ("set output ..."), so one call may draw several files.
std::string run_gnuplot(const std::string& script);

// `text` as a gnuplot single-quoted string, which takes everything but a single quote.
std::string gnuplot_quoted(std::string text);

}  // namespace shmcoll::tools
