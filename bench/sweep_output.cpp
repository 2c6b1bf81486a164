#include "sweep_output.hpp"

#include "gnuplot.hpp"
#include "record.hpp"

namespace shmcoll::bench {

nlohmann::ordered_json sweep_json(const std::vector<SweepPoint>& points) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SweepPoint& p : points) {
    if (out.empty() || out.back()["collective"] != p.collective)
      out.push_back({{"collective", p.collective}, {"sizes", nlohmann::ordered_json::array()}});
    out.back()["sizes"].push_back(
        {{"bytes", p.bytes},
         {"iterations", p.iterations},
         {"latency_us", spread_json(p.slowest_us)},
         {"osu_average_us", p.osu_average_us},
         {"rank_mean_us", {{"min", p.rank_mean_min_us}, {"max", p.rank_mean_max_us}}},
         {"bandwidth_mbps", p.bandwidth_mbps},
         {"memcpy_us", spread_json(p.memcpy_us)},
         {"floor_us", spread_json(p.floor_us)},
         {"valid", p.valid}});
  }
  return out;
}

std::string sweep_plot_script(const std::vector<SweepPoint>& points, const std::string& title,
                              const std::string& png_path) {
  // One data block per collective: bytes, median latency, bandwidth, memcpy.
  std::vector<std::string> names;
  std::string data;
  for (const SweepPoint& p : points) {
    if (names.empty() || names.back() != p.collective) {
      if (!names.empty()) data += "EOD\n";
      names.push_back(p.collective);
      data += "$" + p.collective + " << EOD\n";
    }
    data += std::to_string(p.bytes) + " " + std::to_string(p.slowest_us.median) + " " +
            std::to_string(p.bandwidth_mbps) + " " + std::to_string(p.memcpy_us.median) + "\n";
  }
  if (!names.empty()) data += "EOD\n";
  std::string s = "set terminal png size 1400,560\n";
  s += "set output " + tools::gnuplot_quoted(png_path) + "\n";
  s += data;
  s += "set multiplot layout 1,2 title " + tools::gnuplot_quoted(title) + "\n";
  s += "set logscale x 2\nset format x '%.0b%B'\nset xlabel 'bytes per rank'\nset grid\n";
  s += "set key top left\n";
  auto plot = [&](const std::string& column, bool with_memcpy) {
    std::string line = "plot ";
    for (std::size_t i = 0; i < names.size(); ++i) {
      line += (i ? ", " : "") + std::string("$") + names[i] + " using 1:" + column +
              " with linespoints title '" + names[i] + "'";
    }
    if (with_memcpy && !names.empty())
      line += ", $" + names.front() + " using 1:4 with lines dashtype 2 lc rgb '#555555' " +
              "title 'memcpy'";
    return line + "\n";
  };
  s += "set logscale y\nset ylabel 'latency, median of the slowest rank (us)'\n";
  s += "set title 'latency'\n" + plot("2", true);
  s += "unset logscale y\nset logscale y 10\nset ylabel 'MB/s crossing processes'\n";
  s += "set title 'bandwidth'\nset key top left\n" + plot("3", false);
  s += "unset multiplot\n";
  return s;
}

}  // namespace shmcoll::bench
