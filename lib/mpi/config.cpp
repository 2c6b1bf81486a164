#include <cstdlib>
#include <cstring>

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
  char* end = nullptr;
  std::uint64_t n = std::strtoull(v, &end, 10);
  switch (*end) {
    case 'k':
    case 'K':
      n <<= 10;
      break;
    case 'm':
    case 'M':
      n <<= 20;
      break;
    case 'g':
    case 'G':
      n <<= 30;
      break;
    default:
      break;
  }
  return n;
}

}  // namespace

const PluginConfig& config() {
  static const PluginConfig c = [] {
    PluginConfig p;
    p.enabled = flag("SHMCOLL_ENABLE", true);
    const char* names[] = {"SHMCOLL_MPI_BCAST", "SHMCOLL_MPI_SCATTER", "SHMCOLL_MPI_SCATTERV",
                           "SHMCOLL_MPI_GATHER", "SHMCOLL_MPI_GATHERV"};
    for (int i = 0; i < static_cast<int>(Coll::kCount); ++i)
      p.coll_enabled[i] = flag(names[i], true);
    p.verbose = flag("SHMCOLL_MPI_VERBOSE", false);
    p.budget_bytes = bytes("SHMCOLL_MPI_BUDGET", p.budget_bytes);
    return p;
  }();
  return c;
}

Stats& stats() {
  static Stats s;
  return s;
}

}  // namespace shmcoll::mpi
