#include "tree_png.hpp"

#include <algorithm>
#include <functional>

#include "gnuplot.hpp"

namespace shmcoll::tools {

std::string tree_plot_script(const introspection::TeamPreview& team, const std::string& title,
                             const std::string& png_path) {
  const std::size_t n = team.parent.size();
  std::vector<double> x(n, 0.0);
  std::vector<int> depth(n, 0);
  double next_leaf = 0;
  // Leaves take the next column; a parent sits over the middle of its children.
  std::function<void(int, int)> place = [&](int r, int d) {
    const auto u = static_cast<std::size_t>(r);
    depth[u] = d;
    const auto& kids = team.children[u];
    if (kids.empty()) {
      x[u] = next_leaf++;
      return;
    }
    for (int c : kids) place(c, d + 1);
    x[u] =
        (x[static_cast<std::size_t>(kids.front())] + x[static_cast<std::size_t>(kids.back())]) / 2;
  };
  if (n > 0) place(team.root, 0);
  auto field = [](int v) { return v < 0 ? std::string("?") : std::to_string(v); };
  std::string s;
  s += "set terminal png size " + std::to_string(std::max(640, static_cast<int>(next_leaf) * 70)) +
       "," + std::to_string(220 + team.depth * 140) + "\n";
  s += "set output " + gnuplot_quoted(png_path) + "\n";
  s += "set title " + gnuplot_quoted(title) + "\n";
  s += "unset border; unset xtics; unset ytics; unset key\n";
  s += "set offsets 0.6, 0.6, 0.4, 0.6\n";
  s += "$edges << EOD\n";
  for (std::size_t r = 0; r < n; ++r) {
    const int p = team.parent[r];
    if (p < 0) continue;
    const auto pu = static_cast<std::size_t>(p);
    s += std::to_string(x[pu]) + " " + std::to_string(-depth[pu]) + " " +
         std::to_string(x[r] - x[pu]) + " " + std::to_string(depth[pu] - depth[r]) + "\n";
  }
  s += "EOD\n$ranks << EOD\n";
  for (std::size_t r = 0; r < n; ++r) {
    const introspection::RankPlace& p = team.places[r];
    s += std::to_string(x[r]) + " " + std::to_string(-depth[r]) + " \"" + std::to_string(r) +
         "\\nnuma " + field(p.numa) + "\\npkg " + field(p.package) + "\"\n";
  }
  s += "EOD\n";
  s += "plot $edges using 1:2:3:4 with vectors nohead lc rgb '#888888', \\\n"
       "     $ranks using 1:2 with points pt 7 ps 3 lc rgb '#3366aa', \\\n"
       "     $ranks using 1:2:3 with labels offset 0,-2.2 font ',9'\n";
  return s;
}

std::string draw_tree_png(const introspection::TeamPreview& team, const std::string& title,
                          const std::string& png_path) {
  return run_gnuplot(tree_plot_script(team, title, png_path));
}

}  // namespace shmcoll::tools
