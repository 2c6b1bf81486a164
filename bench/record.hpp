// A benchmark run as a JSON record (--json FILE): what ran, from which source, on which
// machine, and its figures, so that runs can be kept and compared.
#pragma once

#include <hwloc.h>

#include <nlohmann/json.hpp>
#include <string>

#include "spread.hpp"

namespace shmcoll::bench {

// {"tool": "shmcoll-bench", "kind": kind, "revision": .., "created": UTC ISO 8601 time,
//  "machine": machine_record(topology)}; the caller adds "parameters" and the figures.
nlohmann::ordered_json new_record(const std::string& kind, hwloc_topology_t topology);

// {"min", "median", "max"}: how a record keeps a figure over its repetitions.
nlohmann::ordered_json spread_json(const Spread& s);

// Writes the record, indented; throws std::runtime_error naming the path when it cannot.
void write_record(const nlohmann::ordered_json& record, const std::string& path);

}  // namespace shmcoll::bench
