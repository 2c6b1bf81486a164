// The placement sweep's results: each placement's points (as the collectives sweep's), what
// placement costs (each placement's median latency over the best placement's, per collective
// and size), as text, as a record's "placements" and "placement_cost", and as plots.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "numa/placement_plan.hpp"
#include "sweep_output.hpp"

namespace shmcoll::bench {

struct PlacementResult {
  PlacementCase placement;
  std::vector<double> buffer_on_node;  // per rank: share of its buffer's pages on buffer_node
  std::vector<SweepPoint> points;      // the same collectives and sizes for every placement
};

// For point k (a collective at a size): the index of the fastest placement and each
// placement's median latency over the fastest's.
struct PlacementCost {
  std::string collective;
  std::uint64_t bytes = 0;
  int best = 0;
  std::vector<double> ratios;
};
std::vector<PlacementCost> placement_costs(const std::vector<PlacementResult>& results);

// A legend naming the placements P1, P2, ... and one row per collective and size.
std::string placement_cost_table(const std::vector<PlacementResult>& results,
                                 const std::vector<PlacementCost>& costs);

// {"placements": [{"ranks_mapped_by", "buffers", "root", "root_node", "ranks": [{"rank",
// "core", "numa_node", "buffer_node", "buffer_on_node"}], "collectives": sweep_json}],
// "placement_cost": [{"collective", "bytes", "best", "ratios"}]}
void add_placements(nlohmann::ordered_json& record, const std::vector<PlacementResult>& results,
                    const std::vector<PlacementCost>& costs);

// One panel per collective: each placement's ratio to the best against size.
std::string placement_plot_script(const std::vector<PlacementResult>& results,
                                  const std::vector<PlacementCost>& costs, const std::string& title,
                                  const std::string& png_path);

}  // namespace shmcoll::bench
