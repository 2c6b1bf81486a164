#include "record.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "machine.hpp"
#include "revision.hpp"

namespace shmcoll::bench {

nlohmann::ordered_json new_record(const std::string& kind, hwloc_topology_t topology) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char created[32];
  std::strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {{"tool", "shmcoll-bench"},
          {"kind", kind},
          {"revision", source_revision()},
          {"created", created},
          {"machine", machine_record(topology)}};
}

nlohmann::ordered_json spread_json(const Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

void write_record(const nlohmann::ordered_json& record, const std::string& path) {
  std::ofstream out(path);
  out << record.dump(2) << '\n';
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace shmcoll::bench
