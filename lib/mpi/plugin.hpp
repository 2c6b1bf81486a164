// Internals of the PMPI interposition plugin. Only the files under lib/mpi include <mpi.h>; the
// plugin is compiled once per MPI (their ABIs differ) into libshmcoll_mpi_<mpi>.so.
//
// Which path serves a call is decided per communicator, collectively, the first time the
// communicator is used for one of the five collectives: every rank then takes the same path.
// What depends on one rank's own arguments (a non-contiguous datatype) is handled locally by
// packing, never by switching paths, so ranks may use different type maps.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mpi/node_budget.hpp"
#include "shmcoll/shmcoll.hpp"

namespace shmcoll::mpi {

enum class Coll { kBcast, kScatter, kScatterv, kGather, kGatherv, kCount };
// SHMCOLL_MPI_BCAST and so on: the variable that enables each collective.
const char* coll_env_name(Coll coll);

// Read once from the environment: the plugin's parameters (plugin_parameters.hpp, whose
// defaults these are) and the core's SHMCOLL_* parameters. A value that is not accepted keeps
// its default and is listed in `problems`, which report_config_problems() prints.
struct PluginConfig {
  bool enabled = true;
  bool coll_enabled[static_cast<int>(Coll::kCount)] = {true, true, true, true, true};
  bool verbose = false;
  // Shared memory all teams of this user on this node may hold together (mpi/node_budget.hpp);
  // processes naming the same scope share one budget.
  std::uint64_t budget_bytes = 0;
  std::string budget_scope;
  bool bcast_segments = false;        // across nodes (spanning/bcast.cpp)
  Options options;                    // for every team the plugin forms
  std::vector<std::string> problems;  // one line per rejected setting
};
// SHMCOLL_MPI_FAKE_NODES as the environment says it now (MPI_Init records the node map before
// the configuration is read); 0 where it is unset or not accepted, which the configuration
// reports.
int fake_nodes_at_init();
// Stops the process with a clear message when the program runs another MPI than the one the
// plugin is built for; before any handle reaches the MPI (a library version takes none).
void check_mpi_library();
// The configuration, read on first use (load_config). Inline, because every intercepted call
// asks: after the first use it is one acquire load.
const PluginConfig& load_config();
inline std::atomic<const PluginConfig*> loaded_config{nullptr};
// Prints the rejected settings once per job, at MPI_COMM_WORLD's rank 0, without any verbose
// switch: a typo must not silently change what runs. Called where a communicator is decided.
void report_config_problems();
inline const PluginConfig& config() {
  // acquire: pairs with load_config's release store, which follows the fields' writes.
  const PluginConfig* c = loaded_config.load(std::memory_order_acquire);
  return c != nullptr ? *c : load_config();
}

class Spanning;
class ReusedCalls;

// What the plugin knows about one communicator; owned by the communicator's attribute.
struct CommState {
  // kShmcoll: one node's team serves it; kSpanning: it spans nodes, and `spanning` serves it.
  enum class Mode { kUndecided, kShmcoll, kSpanning, kFallback };
  Mode mode = Mode::kUndecided;
  std::string fallback_reason;
  // The team's segment charged to the node's budget; held at the communicator's rank 0.
  // (Declared before the team, so it is released after the team unmaps.)
  std::optional<NodeBudget::Reservation> reservation;
  std::unique_ptr<Team> team;
  // The calls kept for its non-blocking calls on the team (reused_calls.hpp), which end with the
  // team: reset first wherever the team is (and destroyed before it).
  std::unique_ptr<ReusedCalls> reused;
  std::unique_ptr<Spanning> spanning;
  std::set<std::string> logged;  // reasons already logged for this communicator
  CommState();
  ~CommState();
};

// The plugin's state of `comm` (not MPI_COMM_NULL), made on first use; nothing collective, as
// Call's lookup. It lives until the communicator is freed.
CommState* state_of(MPI_Comm comm);

struct ArgumentError;

// The state of one intercepted call. Constructed, it has looked the communicator up, nothing
// collective; engage() then decides the communicator's path (collectively, once per
// communicator) and gives the team, or nullptr when the call goes to PMPI.
class Call {
 public:
  Call(const char* function, Coll coll, MPI_Comm comm);
  // The call goes to PMPI without engaging: a null communicator, one decided for PMPI, or
  // the collective switched off.
  bool to_pmpi() const { return to_pmpi_; }
  // This rank and the communicator's size (the team's where one node's team serves it).
  int rank() const { return state_->team ? state_->team->rank() : pmpi_rank(); }
  int size() const { return state_->team ? state_->team->size() : pmpi_size(); }
  // Returns a local argument error through the communicator's error handler. A team that
  // serves the communicator ends with it, so that the other ranks get the error too instead of
  // waiting for this rank. Where the communicator spans nodes, this rank's messages between
  // nodes in a call with `root` (a valid one; -1 where the call has none) are settled
  // (Spanning::settle_rejected).
  int reject(const ArgumentError& error, int root);
  Team* engage();
  // After engage() gave no team: what serves the communicator where it spans nodes, else
  // nullptr. Then serve_across_nodes() counts the call as served.
  Spanning* spanning() const { return spanning_; }
  void serve_across_nodes();
  // Counts a call that moves nothing as served and returns MPI_SUCCESS (serve.hpp).
  int skip();
  Team* team() const { return team_; }
  // Reports a shmcoll error through the communicator's error handler; returns the MPI code.
  // The team is dropped, but where the error leaves it intact (NodeTeamIntact).
  int fail(const std::exception& e);
  // Logs once per communicator and reason, in verbose mode. (A view: the common "served"
  // case must not build a string on every call.)
  void log_once(std::string_view reason);

 private:
  // Calls the communicator's error handler with a code of `mpi_class` carrying `message`,
  // after dropping the team (unusable after an error on any rank; across nodes, the node's
  // team unless `keep_team`); returns the code.
  int report(int mpi_class, const std::string& message, bool keep_team = false);
  int pmpi_rank() const;
  int pmpi_size() const;
  // engage() where the communicator is undecided, has no team, or calls are logged.
  Team* engage_slow();

  const char* function_;
  Coll coll_;
  MPI_Comm comm_;
  CommState* state_ = nullptr;
  Team* team_ = nullptr;
  Spanning* spanning_ = nullptr;
  bool to_pmpi_ = false;
  bool across_nodes_ = false;  // served, or rejected, as a call across nodes
};

// Whether the program's threads may call the MPI at the same time (MPI_THREAD_MULTIPLE was
// provided): set by MPI_Init and MPI_Init_thread, true until then (and where the MPI was
// initialised past the plugin, as Open MPI's Fortran layer does).
inline std::atomic<bool> concurrent_mpi_calls{true};

// A count that the program's MPI calls keep. Below MPI_THREAD_MULTIPLE one thread at a time calls
// the MPI, in an order the program makes, so the count is a plain load and store; under
// MPI_THREAD_MULTIPLE it is an atomic increment (a locked instruction: about 20 cycles of
// every call that counts). Any thread may read it.
template <class T>
class CallCount {
 public:
  void add(T n) {
    if (concurrent_mpi_calls.load(std::memory_order_relaxed))
      value_.fetch_add(n, std::memory_order_relaxed);
    else
      value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void operator++(int) { add(1); }
  T load() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<T> value_{0};
};

// Counters of served and fallen-back calls, for tests and the verbose summary. `served` counts
// every form; `served_nonblocking` the non-blocking calls among them (requests.cpp),
// `served_persistent` the persistent inits and starts (persistent.cpp).
struct Stats {
  CallCount<std::uint64_t> served;
  CallCount<std::uint64_t> fallback;
  CallCount<std::uint64_t> served_nonblocking;
  CallCount<std::uint64_t> served_persistent;
};
Stats& stats();

inline Team* Call::engage() {
  // The common case inline: the communicator is served and its team stands.
  if (state_->mode == CommState::Mode::kShmcoll && state_->team && !config().verbose) [[likely]] {
    stats().served++;
    return team_ = state_->team.get();
  }
  return engage_slow();
}

// Releases the teams of MPI_COMM_WORLD and MPI_COMM_SELF (called before PMPI_Finalize).
void release_predefined_communicators();

// The team that serves `comm`, formed now if the communicator has not been used yet (so
// collective over `comm`, as the calls that ask are), or nullptr where its calls go to PMPI.
Team* team_of(MPI_Comm comm);

// Forgets every shared window the teams adopted (MPI_Finalize frees the windows themselves).
void forget_windows();

}  // namespace shmcoll::mpi
