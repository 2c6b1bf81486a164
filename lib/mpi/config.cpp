#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

#include "mpi/plugin.hpp"
#include "mpi/plugin_parameters.hpp"
#include "shmcoll/byte_size.hpp"

namespace shmcoll::mpi {
namespace {

// A switch: 1/yes/on/true or 0/no/off/false. Anything else keeps the default and is reported.
bool flag(const PluginParameter& parameter, std::vector<std::string>& problems) {
  const char* name = parameter.name;
  const bool fallback = std::strcmp(parameter.default_value, "1") == 0;
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  for (const char* yes : {"1", "yes", "on", "true"})
    if (strcasecmp(v, yes) == 0) return true;
  for (const char* no : {"0", "no", "off", "false"})
    if (strcasecmp(v, no) == 0) return false;
  problems.push_back(std::string(name) + "='" + v +
                     "' must be 1, yes, on, true or 0, no, off, false; using the default, " +
                     (fallback ? "1" : "0"));
  return fallback;
}

std::uint64_t bytes(const PluginParameter& parameter, std::vector<std::string>& problems) {
  const char* name = parameter.name;
  const auto fallback = static_cast<std::uint64_t>(*parse_byte_size(parameter.default_value));
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const std::optional<long long> n = parse_byte_size(v);
  if (n && *n >= 0) return static_cast<std::uint64_t>(*n);
  problems.push_back(std::string(name) + "='" + v +
                     "' must be a byte count such as 536870912, 512M or 2G; using the default, " +
                     std::to_string(fallback));
  return fallback;
}

// A count of at least 0 that fits an int; anything else keeps the default and is reported.
int count(const PluginParameter& parameter, std::vector<std::string>& problems) {
  const char* name = parameter.name;
  const int fallback = std::atoi(parameter.default_value);
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (errno == 0 && *end == '\0' && n >= 0 && n <= std::numeric_limits<int>::max())
    return static_cast<int>(n);
  problems.push_back(std::string(name) + "='" + v + "' must be a count of 0 or more; using " +
                     "the default, " + std::to_string(fallback));
  return fallback;
}

}  // namespace

int fake_nodes_at_init() {
  std::vector<std::string> reported_by_the_configuration;
  return count(kFakeNodes, reported_by_the_configuration);
}

// The plugin's constants and handles are the MPI's it was built against; another MPI's handles
// mean something else (or nothing) there. So before the plugin passes any handle to the MPI it
// asks the library's name, which takes none, and stops the process on a mismatch.
void check_mpi_library() {
#if defined(OMPI_MAJOR_VERSION)
  constexpr bool built_for_open_mpi = true;
  constexpr const char* built_for = "Open MPI";
#else
  constexpr bool built_for_open_mpi = false;
  constexpr const char* built_for = "MPICH (and the MPIs that share its ABI)";
#endif
  // Room for the other MPI's longest version text, not only this one's: MPICH writes up to its
  // 8192 bytes where Open MPI's headers allow 256.
  static char version[std::max(MPI_MAX_LIBRARY_VERSION_STRING, 16384)] = {};
  int length = 0;
  if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) return;
  const std::string running(version, static_cast<std::size_t>(length));
  const bool runs_open_mpi = running.find("Open MPI") != std::string::npos;
  if (runs_open_mpi == built_for_open_mpi) return;
  // Its name and version: the text up to the first comma or line break.
  const std::string name = running.substr(0, running.find_first_of(",\n"));
  // Every rank stops; the rank the launcher numbers 0 (or a process it did not number) says why.
  const char* launcher_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (launcher_rank == nullptr) launcher_rank = std::getenv("PMI_RANK");
  if (launcher_rank == nullptr || std::strcmp(launcher_rank, "0") == 0) {
    std::fprintf(stderr,
                 "shmcoll: this plugin is built for %s, the program runs %s: preload "
                 "libshmcoll_mpi_%s.so instead\n",
                 built_for, name.c_str(), runs_open_mpi ? "openmpi" : "mpich");
    std::fflush(stderr);
  } else {
    // The launcher ends the whole job when the first rank exits: the others give rank 0 the
    // time to say why.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::_Exit(1);
}

const char* coll_env_name(Coll c) {
  static_assert(std::size(kCollectiveSwitches) == static_cast<std::size_t>(Coll::kCount));
  return c == Coll::kCount ? "?" : kCollectiveSwitches[static_cast<int>(c)].name;
}

const PluginConfig& load_config() {
  static const PluginConfig c = [] {
    check_mpi_library();
    PluginConfig p;
    p.enabled = flag(kEnable, p.problems);
    for (int i = 0; i < static_cast<int>(Coll::kCount); ++i)
      p.coll_enabled[i] = flag(kCollectiveSwitches[i], p.problems);
    p.verbose = flag(kVerbose, p.problems);
    p.budget_bytes = bytes(kBudget, p.problems);
    if (const char* scope = std::getenv(kBudgetScope.name)) p.budget_scope = scope;
    count(kFakeNodes, p.problems);  // used at MPI_Init (fake_nodes_at_init): checked here
    p.bcast_segments = flag(kBcastSegments, p.problems);
    p.options = Options::from_env(p.problems);
    for (std::string& unknown : unknown_variables(parameter_names()))
      p.problems.push_back(std::move(unknown));
    return p;
  }();
  // release: a thread that loads the pointer sees the fields above (the static's guard orders
  // them for callers of this function).
  loaded_config.store(&c, std::memory_order_release);
  return c;
}

void report_config_problems() {
  static std::once_flag once;
  std::call_once(once, [] {
    const PluginConfig& c = config();
    if (c.problems.empty()) return;
    int world_rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (world_rank != 0) return;
    for (const std::string& problem : c.problems)
      std::fprintf(stderr, "shmcoll-mpi: %s\n", problem.c_str());
  });
}

Stats& stats() {
  static Stats s;
  return s;
}

}  // namespace shmcoll::mpi
