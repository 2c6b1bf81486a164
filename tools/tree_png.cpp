#include "tree_png.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>

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
  s += "set output '" + png_path + "'\n";
  std::string quoted = title;  // gnuplot's single quotes take everything but a single quote
  std::replace(quoted.begin(), quoted.end(), '\'', '"');
  s += "set title '" + quoted + "'\n";
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
  // "command -v" first: popen succeeds without gnuplot too (the shell starts), and writing to
  // a shell that has exited would end this process with SIGPIPE mid-line.
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot is not installed (the setup script installs gnuplot-nox)";
  FILE* gp = popen("gnuplot 2>&1", "w");
  if (gp == nullptr) return "cannot start gnuplot";
  const std::string script = tree_plot_script(team, title, png_path);
  // Should gnuplot still stop early, the write fails with EPIPE instead of a signal.
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  std::fwrite(script.data(), 1, script.size(), gp);
  const int status = pclose(gp);
  sigaction(SIGPIPE, &previous, nullptr);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return "gnuplot failed (is it installed? the setup script installs gnuplot-nox)";
  }
  return "";
}

}  // namespace shmcoll::tools
