// The node matrix as text tables, as the "numa_matrix" of a JSON record, and as a gnuplot
// heatmap.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "machine.hpp"
#include "numa/node_matrix.hpp"

namespace shmcoll::bench {

// Three tables of medians (rows: memory node, columns: CPU node): one-core copy GB/s, all-core
// copy GB/s, load latency ns; then the firmware's distances, or a line saying there are none.
std::string matrix_tables(const NodeMatrix& matrix, const NumaDistances& distances);

// One array per memory node, one object per CPU node: "memory_node", "cpu_node",
// "bandwidth_gbps" (one core, median), "bandwidth_all_cores_gbps" (median), "latency_ns"
// (median), "cores", "memory_on_node", and "repetitions": each figure's min, median and max.
nlohmann::ordered_json matrix_json(const NodeMatrix& matrix);

// The parameters of the measurement, for the record's "parameters".
nlohmann::ordered_json matrix_parameters(const MatrixOptions& options);

// A gnuplot script drawing the three figures as heatmaps side by side into `png_path`, each
// cell labelled with its value.
std::string matrix_heatmap_script(const NodeMatrix& matrix, const std::string& title,
                                  const std::string& png_path);

}  // namespace shmcoll::bench
