#include "numa/matrix_output.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "gnuplot.hpp"
#include "record.hpp"

namespace shmcoll::bench {

namespace {

struct Figure {
  const char* title;       // the tables'
  const char* plot_title;  // the heatmaps'
  const char* format;
  std::function<Spread(const MatrixCell&)> of;
};

const std::vector<Figure>& figures() {
  static const std::vector<Figure> list = {
      {"copy bandwidth, one core (GB/s)", "copy GB/s, one core", "%.1f",
       [](const MatrixCell& c) { return c.copy_one_core_gbps; }},
      {"copy bandwidth, all cores of the CPU node (GB/s)", "copy GB/s, all cores", "%.1f",
       [](const MatrixCell& c) { return c.copy_all_cores_gbps; }},
      {"load latency, one core (ns)", "load latency ns, one core", "%.0f",
       [](const MatrixCell& c) { return c.latency_ns; }},
  };
  return list;
}

std::string formatted(const char* format, double v) {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

}  // namespace

std::string matrix_tables(const NodeMatrix& matrix, const NumaDistances& distances) {
  std::string out;
  char cell[64];
  auto header = [&](const char* title) {
    out += "\n# " + std::string(title) + ", median\n";
    out += "memory\\cpu";
    for (const CpuNode& c : matrix.plan.cpu_nodes) {
      std::snprintf(cell, sizeof cell, " %9d", c.numa_os_index);
      out += cell;
    }
    out += "\n";
  };
  for (const Figure& f : figures()) {
    header(f.title);
    for (const auto& row : matrix.rows) {
      std::snprintf(cell, sizeof cell, "%10d", row.front().memory_node);
      out += cell;
      for (const MatrixCell& c : row) {
        std::snprintf(cell, sizeof cell, " %9s", formatted(f.format, f.of(c).median).c_str());
        out += cell;
      }
      out += "\n";
    }
  }
  for (const auto& row : matrix.rows) {
    if (row.front().memory_on_node < 1) {
      std::snprintf(cell, sizeof cell, "%.0f%%", 100 * row.front().memory_on_node);
      out += "# warning: only " + std::string(cell) + " of the sampled pages for memory node " +
             std::to_string(row.front().memory_node) + " lie on it (move_pages)\n";
    }
  }
  if (distances.nodes.empty()) {
    out += "\n# NUMA distances: none given by the firmware\n";
  } else {
    out += "\n# NUMA distances from the firmware (relative, " + distances.meaning + ")\nnode\\node";
    for (int n : distances.nodes) {
      std::snprintf(cell, sizeof cell, " %5d", n);
      out += cell;
    }
    out += "\n";
    for (std::size_t i = 0; i < distances.nodes.size(); ++i) {
      std::snprintf(cell, sizeof cell, "%9d", distances.nodes[i]);
      out += cell;
      for (std::uint64_t v : distances.values[i]) {
        std::snprintf(cell, sizeof cell, " %5llu", static_cast<unsigned long long>(v));
        out += cell;
      }
      out += "\n";
    }
  }
  return out;
}

nlohmann::ordered_json matrix_json(const NodeMatrix& matrix) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : matrix.rows) {
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    for (const MatrixCell& c : row) {
      cells.push_back({{"memory_node", c.memory_node},
                       {"cpu_node", c.cpu_node},
                       {"bandwidth_gbps", c.copy_one_core_gbps.median},
                       {"bandwidth_all_cores_gbps", c.copy_all_cores_gbps.median},
                       {"latency_ns", c.latency_ns.median},
                       {"cores", c.cores},
                       {"memory_on_node", c.memory_on_node},
                       {"repetitions",
                        {{"bandwidth_gbps", spread_json(c.copy_one_core_gbps)},
                         {"bandwidth_all_cores_gbps", spread_json(c.copy_all_cores_gbps)},
                         {"latency_ns", spread_json(c.latency_ns)}}}});
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

nlohmann::ordered_json matrix_parameters(const MatrixOptions& o) {
  return {{"copy_bytes", o.copy_bytes},
          {"copy_repetitions", o.copy_rounds},
          {"chase_bytes", o.chase_bytes},
          {"chase_loads", o.chase_loads},
          {"chase_repetitions", o.chase_rounds}};
}

std::string matrix_heatmap_script(const NodeMatrix& matrix, const std::string& title,
                                  const std::string& png_path) {
  const std::size_t columns = matrix.plan.cpu_nodes.size(), rows = matrix.rows.size();
  const int panel =
      static_cast<int>(std::clamp<std::size_t>(90 * std::max(columns, rows), 320, 900));
  std::string s;
  s += "set terminal png size " + std::to_string(3 * panel) + "," + std::to_string(panel + 80) +
       "\n";
  s += "set output " + tools::gnuplot_quoted(png_path) + "\n";
  s += "set multiplot layout 1,3 title " + tools::gnuplot_quoted(title) + "\n";
  s += "unset key\nset xlabel 'CPU node'\nset ylabel 'memory node'\nset palette rgb 33,13,10\n";
  s += "set cbrange [0:*]\n";  // colours on an absolute scale, also for a single cell
  // Tics name the OS indexes; cells sit at their positions in the plan.
  std::string xtics = "set xtics (", ytics = "set ytics (";
  for (std::size_t j = 0; j < columns; ++j)
    xtics += (j ? ", " : "") + std::string("'") +
             std::to_string(matrix.plan.cpu_nodes[j].numa_os_index) + "' " + std::to_string(j);
  for (std::size_t i = 0; i < rows; ++i)
    ytics += (i ? ", " : "") + std::string("'") +
             std::to_string(matrix.rows[i].front().memory_node) + "' " + std::to_string(i);
  s += xtics + ")\n" + ytics + ")\n";
  s += "set xrange [-0.5:" + std::to_string(columns) + "-0.5]\n";
  s += "set yrange [" + std::to_string(rows) + "-0.5:-0.5]\n";
  int k = 0;
  for (const Figure& f : figures()) {
    const std::string block = "$f" + std::to_string(k++);
    s += block + " << EOD\n";
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < columns; ++j) {
        const double v = f.of(matrix.rows[i][j]).median;
        s += std::to_string(j) + " " + std::to_string(i) + " " + std::to_string(v) + " \"" +
             formatted(f.format, v) + "\"\n";
      }
    }
    s += "EOD\n";
    s += "set title " + tools::gnuplot_quoted(f.plot_title) + "\n";
    s += "plot " + block +
         " using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid noborder lc palette, " + block +
         " using 1:2:4 with labels font ',10'\n";
  }
  s += "unset multiplot\n";
  return s;
}

}  // namespace shmcoll::bench
