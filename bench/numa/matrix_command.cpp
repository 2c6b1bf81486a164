#include "numa/matrix_command.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "gnuplot.hpp"
#include "hwloc_topology.hpp"
#include "machine.hpp"
#include "numa/matrix_output.hpp"
#include "progress.hpp"
#include "record.hpp"
#include "revision.hpp"

namespace shmcoll::bench {

int run_numa_matrix(const MatrixCommand& command) {
  try {
    HwlocTopology topology;
    const MatrixPlan plan = plan_node_matrix(topology.get());
    const MatrixOptions options = MatrixOptions::for_topology(topology.get(), command.quick);
    std::printf("# shmcoll-bench --numa-matrix%s: %zu memory node(s) x %zu CPU node(s)\n",
                command.quick ? " --quick" : "", plan.memory_nodes.size(), plan.cpu_nodes.size());
    std::printf("# machine: %s\n# revision: %s\n", describe_machine().c_str(), source_revision());
    std::printf(
        "# copies: %zu bytes from a buffer to another on the memory node, %d repetitions; "
        "loads: %llu dependent loads over %zu bytes, %d repetitions\n",
        options.copy_bytes, options.copy_rounds,
        static_cast<unsigned long long>(options.chase_loads), options.chase_bytes,
        options.chase_rounds);
    std::fflush(stdout);
    NodeMatrix matrix;
    {
      ProgressLine progress;
      MatrixObserver observer;
      observer.estimated = [](double seconds) {
        std::printf("# estimated time: about %.0f s\n", seconds + 0.5);
        std::fflush(stdout);
      };
      observer.progressed = [&](int done, int total) {
        progress.update("cell " + std::to_string(done) + "/" + std::to_string(total),
                        static_cast<double>(done) / total);
      };
      matrix = measure_node_matrix(topology.get(), plan, options, observer);
    }
    std::fputs(matrix_tables(matrix, numa_distances(topology.get())).c_str(), stdout);
    std::fflush(stdout);
    if (!command.json_path.empty()) {
      nlohmann::ordered_json record = new_record("numa-matrix", topology.get());
      record["parameters"] = matrix_parameters(options);
      record["parameters"]["quick"] = command.quick;
      record["numa_matrix"] = matrix_json(matrix);
      write_record(record, command.json_path);
      std::printf("# record written to %s\n", command.json_path.c_str());
    }
    if (!command.png_path.empty()) {
      const std::string problem = tools::run_gnuplot(matrix_heatmap_script(
          matrix, "NUMA node matrix: " + describe_machine(), command.png_path));
      if (!problem.empty()) {
        std::fprintf(stderr, "shmcoll-bench: --png %s: %s\n", command.png_path.c_str(),
                     problem.c_str());
        return 1;
      }
      std::printf("# heatmap drawn into %s\n", command.png_path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shmcoll-bench: --numa-matrix: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace shmcoll::bench
