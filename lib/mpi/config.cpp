#include <cstdlib>
#include <cstring>

#include "core/byte_size.hpp"
#include "mpi/plugin.hpp"

namespace shmcoll::mpi {
namespace {

bool flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "no") == 0 || std::strcmp(v, "off") == 0 ||
           std::strcmp(v, "false") == 0);
}

std::uint64_t bytes(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const std::optional<long long> n = parse_byte_size(v);
  return n && *n >= 0 ? static_cast<std::uint64_t>(*n) : fallback;
}

}  // namespace

const char* coll_env_name(Coll c) {
  switch (c) {
    case Coll::kBcast:
      return "SHMCOLL_MPI_BCAST";
    case Coll::kScatter:
      return "SHMCOLL_MPI_SCATTER";
    case Coll::kScatterv:
      return "SHMCOLL_MPI_SCATTERV";
    case Coll::kGather:
      return "SHMCOLL_MPI_GATHER";
    case Coll::kGatherv:
      return "SHMCOLL_MPI_GATHERV";
    case Coll::kCount:
      break;
  }
  return "?";
}

const PluginConfig& load_config() {
  static const PluginConfig c = [] {
    PluginConfig p;
    p.enabled = flag("SHMCOLL_ENABLE", true);
    const char* names[] = {"SHMCOLL_MPI_BCAST", "SHMCOLL_MPI_SCATTER", "SHMCOLL_MPI_SCATTERV",
                           "SHMCOLL_MPI_GATHER", "SHMCOLL_MPI_GATHERV"};
    for (int i = 0; i < static_cast<int>(Coll::kCount); ++i)
      p.coll_enabled[i] = flag(names[i], true);
    p.verbose = flag("SHMCOLL_MPI_VERBOSE", false);
    p.budget_bytes = bytes("SHMCOLL_MPI_BUDGET", p.budget_bytes);
    if (const char* scope = std::getenv("SHMCOLL_MPI_BUDGET_SCOPE")) p.budget_scope = scope;
    return p;
  }();
  // release: a thread that loads the pointer sees the fields above (the static's guard orders
  // them for callers of this function).
  loaded_config.store(&c, std::memory_order_release);
  return c;
}

Stats& stats() {
  static Stats s;
  return s;
}

}  // namespace shmcoll::mpi
