#include "sweep_output.hpp"

#include <algorithm>

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

std::string sweep_plot_script(const std::vector<SweepPoint>& points,
                              const std::vector<ComparedSeries>& compared, int ranks,
                              const std::string& title, const std::string& png_path) {
  std::vector<std::string> collectives;
  for (const SweepPoint& p : points) {
    if (std::find(collectives.begin(), collectives.end(), p.collective) == collectives.end())
      collectives.push_back(p.collective);
  }
  const double crossing = std::max(1, ranks - 1);
  // Blocks: $s_<coll> (bytes, OSU average, MB/s, memcpy) and $c<i>_<coll> (bytes, average,
  // MB/s) for compared series i.
  std::string s;
  for (const std::string& name : collectives) {
    s += "$s_" + name + " << EOD\n";
    for (const SweepPoint& p : points) {
      if (p.collective != name) continue;
      s += std::to_string(p.bytes) + " " + std::to_string(p.osu_average_us) + " " +
           std::to_string(crossing * static_cast<double>(p.bytes) / p.osu_average_us) + " " +
           std::to_string(p.memcpy_us.median) + "\n";
    }
    s += "EOD\n";
    for (std::size_t i = 0; i < compared.size(); ++i) {
      s += "$c" + std::to_string(i) + "_" + name + " << EOD\n";
      for (const ComparedPoint& p : compared[i].points) {
        if (p.collective != name || p.bytes == 0 || p.osu_average_us <= 0) continue;
        s += std::to_string(p.bytes) + " " + std::to_string(p.osu_average_us) + " " +
             std::to_string(crossing * static_cast<double>(p.bytes) / p.osu_average_us) + "\n";
      }
      s += "EOD\n";
    }
  }
  const std::size_t columns = std::max<std::size_t>(1, collectives.size());
  s += "set terminal png size " + std::to_string(380 * columns + 100) + ",800\n";
  s += "set output " + tools::gnuplot_quoted(png_path) + "\n";
  s += "set multiplot layout 2," + std::to_string(columns) + " columnsfirst title " +
       tools::gnuplot_quoted(title) + "\n";
  s += "set logscale x 2\nset logscale y 10\nset xtics 1,32\nset format x '%.0b%B'\n";
  s += "set xlabel 'bytes per rank'\nset grid\n";
  s += "set key top left font ',8'\n";
  for (const std::string& name : collectives) {
    for (const bool latency : {true, false}) {
      const std::string column = latency ? "2" : "3";
      s += "set title " + tools::gnuplot_quoted(name + (latency ? ", latency" : ", bandwidth")) +
           "\n";
      s += std::string("set ylabel '") +
           (latency ? "OSU average latency (us)" : "MB/s crossing processes") + "'\n";
      s += "plot $s_" + name + " using 1:" + column + " with linespoints lw 2 title 'shmcoll'";
      for (std::size_t i = 0; i < compared.size(); ++i) {
        s += ", $c" + std::to_string(i) + "_" + name + " using 1:" + column +
             " with linespoints title " + tools::gnuplot_quoted(compared[i].label);
      }
      if (latency)
        s += ", $s_" + name + " using 1:4 with lines dashtype 2 lc rgb '#555555' title 'memcpy'";
      s += "\n";
    }
  }
  s += "unset multiplot\n";
  return s;
}

}  // namespace shmcoll::bench
