#include "numa/placement_output.hpp"

#include <algorithm>
#include <cstdio>

#include "gnuplot.hpp"

namespace shmcoll::bench {

std::vector<PlacementCost> placement_costs(const std::vector<PlacementResult>& results) {
  std::vector<PlacementCost> costs;
  if (results.empty()) return costs;
  for (std::size_t k = 0; k < results.front().points.size(); ++k) {
    PlacementCost c{results.front().points[k].collective, results.front().points[k].bytes, 0, {}};
    double best = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const double t = results[i].points[k].slowest_us.median;
      if (i == 0 || t < best) {
        best = t;
        c.best = static_cast<int>(i);
      }
    }
    for (const PlacementResult& r : results)
      c.ratios.push_back(best > 0 ? r.points[k].slowest_us.median / best : 1);
    costs.push_back(std::move(c));
  }
  return costs;
}

std::string placement_cost_table(const std::vector<PlacementResult>& results,
                                 const std::vector<PlacementCost>& costs) {
  std::string out =
      "\n# what placement costs: each placement's p50 over the best one's (1.00: "
      "the best)\n";
  for (std::size_t i = 0; i < results.size(); ++i)
    out += "# P" + std::to_string(i + 1) + ": " + results[i].placement.describe() + "\n";
  char cell[64];
  std::snprintf(cell, sizeof cell, "%-10s %12s", "collective", "bytes");
  out += cell;
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::snprintf(cell, sizeof cell, " %6s", ("P" + std::to_string(i + 1)).c_str());
    out += cell;
  }
  out += "\n";
  for (const PlacementCost& c : costs) {
    std::snprintf(cell, sizeof cell, "%-10s %12llu", c.collective.c_str(),
                  static_cast<unsigned long long>(c.bytes));
    out += cell;
    for (double r : c.ratios) {
      std::snprintf(cell, sizeof cell, " %6.2f", r);
      out += cell;
    }
    out += "\n";
  }
  return out;
}

void add_placements(nlohmann::ordered_json& record, const std::vector<PlacementResult>& results,
                    const std::vector<PlacementCost>& costs) {
  nlohmann::ordered_json placements = nlohmann::ordered_json::array();
  for (const PlacementResult& r : results) {
    const PlacementCase& p = r.placement;
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < p.ranks.size(); ++i) {
      ranks.push_back({{"rank", i},
                       {"core", p.ranks[i].core},
                       {"numa_node", p.ranks[i].numa_node},
                       {"buffer_node", p.ranks[i].buffer_node},
                       {"buffer_on_node", r.buffer_on_node[i]}});
    }
    placements.push_back({{"ranks_mapped_by", p.map_name()},
                          {"buffers", p.buffers_name()},
                          {"root", p.root},
                          {"root_node", p.ranks[static_cast<std::size_t>(p.root)].numa_node},
                          {"ranks", ranks},
                          {"collectives", sweep_json(r.points)}});
  }
  record["placements"] = placements;
  nlohmann::ordered_json cost = nlohmann::ordered_json::array();
  for (const PlacementCost& c : costs)
    cost.push_back(
        {{"collective", c.collective}, {"bytes", c.bytes}, {"best", c.best}, {"ratios", c.ratios}});
  record["placement_cost"] = cost;
}

std::string placement_plot_script(const std::vector<PlacementResult>& results,
                                  const std::vector<PlacementCost>& costs, const std::string& title,
                                  const std::string& png_path) {
  std::vector<std::string> collectives;
  for (const PlacementCost& c : costs) {
    if (std::find(collectives.begin(), collectives.end(), c.collective) == collectives.end())
      collectives.push_back(c.collective);
  }
  std::string s = "set terminal png size 1500,900\n";
  s += "set output " + tools::gnuplot_quoted(png_path) + "\n";
  // One block per collective: bytes, then each placement's ratio.
  for (const std::string& name : collectives) {
    s += "$" + name + " << EOD\n";
    for (const PlacementCost& c : costs) {
      if (c.collective != name) continue;
      s += std::to_string(c.bytes);
      for (double r : c.ratios) s += " " + std::to_string(r);
      s += "\n";
    }
    s += "EOD\n";
  }
  s += "set multiplot layout 2,3 title " + tools::gnuplot_quoted(title) + "\n";
  s += "set logscale x 2\nset format x '%.0b%B'\nset xlabel 'bytes per rank'\nset grid\n";
  s += "set ylabel 'p50 / best placement'\nset yrange [0.9:*]\nset key top left font ',8'\n";
  for (const std::string& name : collectives) {
    s += "set title " + tools::gnuplot_quoted(name) + "\nplot ";
    for (std::size_t i = 0; i < results.size(); ++i) {
      s += (i ? ", " : "") + std::string("$") + name + " using 1:" + std::to_string(i + 2) +
           " with linespoints title " +
           tools::gnuplot_quoted("P" + std::to_string(i + 1) + ": " +
                                 results[i].placement.describe());
    }
    s += "\n";
  }
  s += "unset multiplot\n";
  return s;
}

}  // namespace shmcoll::bench
