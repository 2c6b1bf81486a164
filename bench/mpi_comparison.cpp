#include "mpi_comparison.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace shmcoll::bench {

namespace {

constexpr const char* kHeader =
    "label,collective,ranks,bytes,iterations,avg_us,min_us,max_us,memcpy_us,floor_us";

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');) fields.push_back(f);
  return fields;
}

}  // namespace

std::vector<ComparedSeries> read_mpi_bench_csv(const std::string& path, int ranks) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("--compare " + path + ": cannot be read");
  std::string line;
  if (!std::getline(in, line) || line != kHeader)
    throw std::runtime_error("--compare " + path + ": not mpi-bench's CSV (its first line is '" +
                             std::string(kHeader) + "')");
  std::vector<ComparedSeries> series;
  for (int number = 2; std::getline(in, line); ++number) {
    const std::vector<std::string> f = fields_of(line);
    try {
      if (f.size() != 10) throw std::invalid_argument("10 fields expected");
      if (std::stoi(f[2]) != ranks) continue;
      ComparedSeries* s = nullptr;
      for (ComparedSeries& existing : series)
        if (existing.label == f[0]) s = &existing;
      if (s == nullptr) s = &series.emplace_back(ComparedSeries{f[0], path, {}});
      s->points.push_back({f[1], std::stoull(f[3]), std::stod(f[5])});
    } catch (const std::exception& e) {
      throw std::runtime_error("--compare " + path + " line " + std::to_string(number) + ": '" +
                               line + "' is not an mpi-bench row (" + e.what() + ")");
    }
  }
  if (series.empty())
    throw std::runtime_error("--compare " + path + ": no row for " + std::to_string(ranks) +
                             " ranks, the size of this run");
  return series;
}

nlohmann::ordered_json compared_json(const std::vector<ComparedSeries>& series) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ComparedSeries& s : series) {
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (const ComparedPoint& p : s.points)
      points.push_back(
          {{"collective", p.collective}, {"bytes", p.bytes}, {"osu_average_us", p.osu_average_us}});
    out.push_back({{"label", s.label}, {"file", s.file}, {"points", points}});
  }
  return out;
}

}  // namespace shmcoll::bench
