// The per-communicator decision and team cache. The state lives in a communicator attribute
// whose delete callback destroys it, so MPI_Comm_free and MPI_Finalize release the team; dups
// start without one (MPI_COMM_NULL_COPY_FN) and decide again lazily.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

#include "mpi/error_codes.hpp"
#include "mpi/local_checks.hpp"
#include "mpi/mpi_bootstrap.hpp"
#include "mpi/node_map.hpp"
#include "mpi/plugin.hpp"
#include "mpi/reused_calls.hpp"
#include "mpi/spanning/spanning.hpp"
#include "shmcoll/introspection.hpp"

namespace shmcoll::mpi {
namespace {

// Bumped whenever a state is destroyed, which invalidates every thread's LastComm below.
std::atomic<std::uint64_t> states_deleted{0};

int delete_state(MPI_Comm, int, void* value, void*) {
  // relaxed: a thread can reuse this handle only for a communicator created after this free,
  // and whatever told it of that communicator happens after this increment, so its load in
  // state_of sees the new count (write-read coherence). A thread that uses a communicator
  // while another frees it was erroneous before the cache too.
  states_deleted.fetch_add(1, std::memory_order_relaxed);
  auto* state = static_cast<CommState*>(value);
  // The teams end with the communicator (MPI_Comm_free, MPI_Finalize): a rank that ran
  // another number of collectives on it than its peers is found now at the latest.
  auto leave = [](auto& served) {
    try {
      served.leave();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "shmcoll-mpi: when the communicator was freed: %s\n", e.what());
    }
  };
  if (state->spanning) leave(*state->spanning);
  if (state->team) {
    state->reused.reset();
    leave(*state->team);
    // The team's segment stays parked for the next communicator of the same processes
    // (introspection::charge_parked_segment), charged to the budget as long as it is.
    state->team.reset();
    if (state->reservation) {
      introspection::charge_parked_segment(
          std::make_shared<NodeBudget::Reservation>(std::move(*state->reservation)));
    }
  }
  delete state;
  return MPI_SUCCESS;
}

// The communicator of this thread's previous call and its state: most programs call their
// collectives on one communicator, and the attribute lookup (a hash table behind a lock in
// Open MPI) ran on every call, a large part of a small call's cost in the plugin. A handle can
// be reused only after its communicator is freed, and freeing it deletes the state first.
// All-zero at the start, which no communicator handle is (a pointer in Open MPI, a nonzero code
// in MPICH): Open MPI's MPI_COMM_NULL is an address, whose initialisation would be dynamic and
// put a guard before every access.
struct LastComm {
  MPI_Comm comm{};
  CommState* state = nullptr;
  std::uint64_t deleted = 0;  // states_deleted when it was looked up
};
// Initial-exec: the plugin is loaded with the program (LD_PRELOAD or linked), so its few bytes of
// thread-local storage sit in the static TLS block and an access is a load relative to the
// thread pointer instead of a __tls_get_addr call (about 30 instructions of every call).
thread_local LastComm last_comm __attribute__((tls_model("initial-exec")));

int keyval() {
  // Created on first use (after MPI_Init); std::call_once makes it safe under THREAD_MULTIPLE.
  static int key = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  std::call_once(
      once, [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &key, nullptr); });
  return key;
}

// The attribute lookup behind state_of, kept out of line so that the common case saves no
// registers.
[[gnu::noinline]] CommState* look_up_state(MPI_Comm comm, std::uint64_t deleted) {
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval(), &value, &found);
  auto* state = static_cast<CommState*>(value);
  if (!found) {
    state = new CommState;
    PMPI_Comm_set_attr(comm, keyval(), state);
  }
  last_comm = {comm, state, deleted};
  return state;
}

}  // namespace

CommState* state_of(MPI_Comm comm) {
  const std::uint64_t deleted = states_deleted.load(std::memory_order_relaxed);  // see above
  if (last_comm.comm == comm && last_comm.deleted == deleted) return last_comm.state;
  return look_up_state(comm, deleted);
}

namespace {

// Each rank's node, from the node map, or else from the MPI's split by shared memory; the
// same on every rank. Collective over comm where the map does not answer.
std::vector<int> node_colors_of(MPI_Comm comm) {
  if (std::optional<std::vector<int>> colors = node_colors(comm)) return std::move(*colors);
  return node_colors_by_split(comm);
}

// Collective over comm. Every rank reaches the same verdict: the inputs are either the same on
// every rank or combined with an allreduce.
void decide(MPI_Comm comm, CommState& state) {
  auto fall_back = [&](std::string why) {
    state.mode = CommState::Mode::kFallback;
    state.fallback_reason = std::move(why);
  };
  report_config_problems();
  if (!config().enabled) return fall_back("SHMCOLL_ENABLE=0");
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return fall_back("intercommunicator");
  const std::vector<int> colors = node_colors_of(comm);
  if (std::any_of(colors.begin(), colors.end(), [&](int c) { return c != colors.front(); })) {
    std::string refusal;
    try {
      state.spanning = Spanning::form(comm, colors, refusal);
    } catch (const Error& e) {
      refusal = e.what();  // an MPI call failed on this rank: the others fail alike
    }
    if (!state.spanning) return fall_back("communicator spans nodes: " + refusal);
    state.mode = CommState::Mode::kSpanning;
    return;
  }
  std::string refusal;
  std::optional<NodeTeam> formed = form_node_team(comm, refusal);
  if (!formed) return fall_back(refusal);
  state.reservation = std::move(formed->reservation);
  state.team = std::move(formed->team);
  state.mode = CommState::Mode::kShmcoll;
}

}  // namespace

CommState::CommState() = default;
CommState::~CommState() = default;

std::optional<NodeTeam> form_node_team(MPI_Comm comm, std::string& refusal) {
  const Options& options = config().options;
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  // One segment per team: its rank 0 charges it to the node's budget, for all ranks.
  const std::uint64_t bytes = introspection::segment_size(size, options).total;
  NodeTeam formed;
  // Rank 0 asks the node's budget; every rank learns the answer.
  auto ask_budget = [&] {
    if (rank == 0) {
      NodeBudget::Outcome outcome =
          NodeBudget::reserve(bytes, config().budget_bytes, config().budget_scope);
      formed.reservation = std::move(outcome.reservation);
      refusal = std::move(outcome.refusal);
    }
    int fits = rank != 0 || formed.reservation ? 1 : 0;
    PMPI_Bcast(&fits, 1, MPI_INT, 0, comm);
    return fits != 0;
  };
  if (!ask_budget()) {
    // Segments parked by this communicator's processes (introspection.hpp) may hold what is
    // missing: every rank releases its own, which releases their charges, and rank 0 asks
    // again once all have.
    introspection::release_parked_segment();
    PMPI_Barrier(comm);
    if (!ask_budget()) {
      // The reason is known at rank 0, the rank that logs it.
      refusal = "over the node's shared-memory budget (SHMCOLL_MPI_BUDGET=" +
                std::to_string(config().budget_bytes) + "): " + refusal;
      return std::nullopt;
    }
  }
  try {
    MpiBootstrap bootstrap(comm);
    Options team_options = options;
    // Under MPI_THREAD_MULTIPLE a completion call in one thread advances this team's requests
    // while another thread may be calling a collective on it (requests.hpp).
    int thread_level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&thread_level);
    team_options.concurrent_calls = thread_level == MPI_THREAD_MULTIPLE;
    formed.team = std::make_unique<Team>(bootstrap, team_options);
  } catch (const Error& e) {
    // Team formation fails on every rank alike (its verdicts are exchanged), so the refusal
    // is collective too; the reservation goes with it.
    refusal = std::string("team formation failed: ") + e.what();
    return std::nullopt;
  }
  return formed;
}

// Decides the communicator's path if it is undecided, and forms a new team where a previous
// error left the last one unusable. Collective over `comm`, as the calls that ask are (the
// error that dropped the team reached every rank).
void ensure_decided(MPI_Comm comm, CommState& state) {
  if (state.mode == CommState::Mode::kShmcoll && !state.team)
    state.mode = CommState::Mode::kUndecided;
  if (state.mode == CommState::Mode::kUndecided) decide(comm, state);
}

Team* team_of(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return nullptr;
  CommState& state = *state_of(comm);
  ensure_decided(comm, state);
  return state.mode == CommState::Mode::kShmcoll ? state.team.get() : nullptr;
}

Call::Call(const char* function, Coll coll, MPI_Comm comm)
    : function_(function), coll_(coll), comm_(comm) {
  const PluginConfig& cfg = config();  // first: it checks which MPI runs (check_mpi_library)
  if (comm == MPI_COMM_NULL) {
    to_pmpi_ = true;  // PMPI reports it
    return;
  }
  state_ = state_of(comm);
  if (state_->mode == CommState::Mode::kFallback) {
    log_once("falls back to PMPI: " + state_->fallback_reason);
  } else if (!cfg.coll_enabled[static_cast<int>(coll)]) {
    log_once(std::string("falls back to PMPI: ") + coll_env_name(coll) + "=0");
  } else {
    return;
  }
  stats().fallback++;
  to_pmpi_ = true;
}

int Call::pmpi_rank() const {
  int rank = 0;
  PMPI_Comm_rank(comm_, &rank);
  return rank;
}

int Call::pmpi_size() const {
  int size = 0;
  PMPI_Comm_size(comm_, &size);
  return size;
}

int Call::reject(const ArgumentError& error, int root) {
  const std::string message = std::string(function_) + " on " + error.message;
  if (state_->team) {
    state_->team->abort(Status::kInvalidArgument, message, cause_of_class(error.mpi_class));
  }
  if (state_->spanning) {
    across_nodes_ = true;
    // The calls started before this one end first: their messages and team operations come
    // before its own.
    state_->spanning->drain();
    state_->spanning->abort(Status::kInvalidArgument, message, cause_of_class(error.mpi_class));
    if (root >= 0 && root < state_->spanning->size()) {
      const bool to_leaders = coll_ == Coll::kScatter || coll_ == Coll::kScatterv;
      const bool from_leaders = coll_ == Coll::kGather || coll_ == Coll::kGatherv;
      if (to_leaders || from_leaders) {
        state_->spanning->settle_rejected(
            to_leaders ? Spanning::Direction::kSend : Spanning::Direction::kReceive, root);
      }
    }
  }
  return report(error.mpi_class, message);
}

int Call::skip() {
  if (config().verbose) log_once("served by shmcoll (moves nothing: returns at once)");
  stats().served++;
  return MPI_SUCCESS;
}

Team* Call::engage_slow() {
  ensure_decided(comm_, *state_);
  if (state_->mode == CommState::Mode::kSpanning) {
    spanning_ = state_->spanning.get();
    return nullptr;
  }
  if (state_->mode == CommState::Mode::kFallback) {
    log_once("falls back to PMPI: " + state_->fallback_reason);
    stats().fallback++;
    return nullptr;
  }
  if (config().verbose) log_once("served by shmcoll");
  team_ = state_->team.get();
  stats().served++;
  return team_;
}

void Call::serve_across_nodes() {
  across_nodes_ = true;
  if (config().verbose) log_once("served by shmcoll");
  stats().served++;
}

void Call::log_once(std::string_view reason) {
  if (!config().verbose || state_ == nullptr || !state_->logged.emplace(reason).second) return;
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm_, &rank);
  PMPI_Comm_size(comm_, &size);
  if (rank != 0) return;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  PMPI_Comm_get_name(comm_, name, &len);
  const std::string nodes =
      state_->spanning ? " on " + std::to_string(state_->spanning->nodes()) + " nodes" : "";
  std::fprintf(stderr, "shmcoll-mpi: %s on %s (%d ranks%s) %.*s\n", function_,
               len > 0 ? name : "a communicator", size, nodes.c_str(),
               static_cast<int>(reason.size()), reason.data());
}

int Call::fail(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  const int mpi_class = error ? error_class_of(error->status(), error->cause()) : MPI_ERR_INTERN;
  return report(mpi_class, std::string(function_) + ": " + e.what(),
                dynamic_cast<const NodeTeamIntact*>(&e) != nullptr);
}

int Call::report(int mpi_class, const std::string& message, bool keep_team) {
  // The team is unusable after an error on any rank; the next call forms a new one.
  if (state_ != nullptr && state_->team) {
    state_->reused.reset();
    state_->team.reset();
    state_->reservation.reset();
  }
  if (state_ != nullptr && state_->spanning && across_nodes_ && !keep_team)
    state_->spanning->drop_team();
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm_, &handler);
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  if (fatal || config().verbose) std::fprintf(stderr, "shmcoll-mpi: %s\n", message.c_str());
  const int code = error_code_for(mpi_class, "shmcoll: " + message);
  PMPI_Comm_call_errhandler(comm_, code);
  return code;
}

void release_predefined_communicators() {
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval(), &value, &found);
    if (found) PMPI_Comm_delete_attr(comm, keyval());
  }
}

}  // namespace shmcoll::mpi
