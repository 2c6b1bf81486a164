// The public Team API. A blocking call validates, builds the collective's state machine on the
// stack and drives it to completion, after the outstanding non-blocking ones; a non-blocking
// call builds the same machine on the heap, inside its request's state, and hands it to the
// progress engine; a persistent request's (persistent.cpp) is built again at every start. Any
// error is recorded team-wide before it propagates.
#include "shmcoll/team.hpp"

#include <cstdio>

#include "coll/barrier.hpp"
#include "coll/bcast/bcast.hpp"
#include "coll/gather/gather.hpp"
#include "coll/operation_choice.hpp"
#include "coll/scatter/scatter.hpp"
#include "coll/team_algorithms.hpp"
#include "protocol/team_impl.hpp"
#include "team/progress_engine.hpp"

namespace shmcoll {
namespace {

// Runs the operation to its end, after the outstanding non-blocking ones. The caller holds
// the engine's lock, with which the choice of a v-form's operation class (operation_choice.hpp)
// reads the team's caches that the progress thread fills too.
template <class Op, class... Args>
void run_locked(TeamAlgorithms& algorithms, ProgressEngine& engine, Args&&... args) {
  TeamImpl& team = algorithms.team();
  if (!engine.idle()) engine.drain();  // operation k is the k-th call on every rank
  try {
    team.check_aborted();
    Op op(algorithms, std::forward<Args>(args)...);
    team.run(op);
  } catch (const Error& e) {
    team.record_abort(e.status(), e.what(), e.cause());
    throw;
  } catch (const std::exception& e) {
    team.record_abort(Status::kInternal, e.what());
    throw;
  }
}

template <class Op, class... Args>
void run_op(TeamAlgorithms& algorithms, ProgressEngine& engine, Args&&... args) {
  auto guard = engine.lock();
  run_locked<Op>(algorithms, engine, std::forward<Args>(args)...);
}

// Queues the operation with the progress engine; the caller holds the engine's lock.
template <class Op, class... Args>
Request start_locked(TeamAlgorithms& algorithms, ProgressEngine& engine, Args&&... args) {
  auto state = std::make_shared<detail::OpState<Op>>();
  try {
    state->build(algorithms, std::forward<Args>(args)...);
  } catch (const Error& e) {
    // Raised in the operation's turn, after the ones started before it complete.
    return Request(engine.start_refused(e.status(), e.what()));
  } catch (const std::exception& e) {
    return Request(engine.start_refused(Status::kInternal, e.what()));
  }
  engine.start(state);
  return Request(std::move(state));
}

template <class Op, class... Args>
Request start_op(TeamAlgorithms& algorithms, ProgressEngine& engine, Args&&... args) {
  auto guard = engine.lock();
  return start_locked<Op>(algorithms, engine, std::forward<Args>(args)...);
}

}  // namespace

Team::Team(Bootstrap& bootstrap, const Options& options)
    : impl_(std::make_unique<TeamImpl>(bootstrap, options)),
      algorithms_(std::make_unique<TeamAlgorithms>(*impl_)),
      engine_(std::make_unique<ProgressEngine>(*impl_, options.progress_thread,
                                               options.concurrent_calls)) {
  if (impl_->options().verbose && impl_->rank() == 0) {
    std::fprintf(stderr, "shmcoll: %s; %s\n", impl_->formation_summary().c_str(),
                 algorithms_->data_paths().c_str());
  }
}
Team::~Team() {
  if (!impl_) return;  // moved from
  try {
    leave();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shmcoll: rank %d: %s\n", impl_->rank(), e.what());
  }
}

void Team::leave() {
  auto guard = engine_->lock();
  impl_->leave();
}
Team::Team(Team&&) noexcept = default;
Team& Team::operator=(Team&&) noexcept = default;

int Team::rank() const { return impl_->rank(); }
int Team::size() const { return impl_->size(); }
const Options& Team::options() const { return impl_->options(); }
std::size_t Team::segment_bytes() const { return impl_->segment_bytes(); }
std::string Team::data_paths() const { return algorithms_->data_paths(); }
bool Team::single_copy_available() const { return impl_->single_copy_available(); }

std::string Team::placement() const {
  auto field = [](int v) { return v < 0 ? std::string("?") : std::to_string(v); };
  std::string out;
  const auto& places = impl_->places();
  for (std::size_t r = 0; r < places.size(); ++r) {
    const topology::Place& p = places[r];
    out += "rank " + std::to_string(r) + ": package " + field(p.package) + ", numa " +
           field(p.numa) + ", l3 " + field(p.l3) + ", core " + field(p.core) +
           (p.bound ? "" : " (unbound: where it ran at team formation)") + "\n";
  }
  return out;
}

void Team::barrier() { run_op<BarrierOp>(*algorithms_, *engine_); }

void Team::abort(Status status, const std::string& message, Cause cause) {
  auto guard = engine_->lock();
  impl_->record_abort(status, message, cause);
}

void Team::bcast(void* buffer, Count count, Datatype type, int root) {
  run_op<BcastOp>(*algorithms_, *engine_, buffer, count, type, root);
}

void Team::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                   Count recvcount, Datatype recvtype, int root) {
  run_op<ScatterOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, false, root);
}

void Team::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root) {
  run_op<ScatterOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, nullptr, Count{0},
                    sendtype, true, root);
}

void Team::scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                    std::span<const Count> displs, Datatype sendtype, void* recvbuf,
                    Count recvcount, Datatype recvtype, int root) {
  auto guard = engine_->lock();
  choose_scatterv_op(
      *algorithms_, sendcounts, displs, sendtype, recvcount, recvtype, false, root, [&](auto op) {
        run_locked<typename decltype(op)::type>(*algorithms_, *engine_, sendbuf, sendcounts, displs,
                                                sendtype, recvbuf, recvcount, recvtype, false,
                                                root);
      });
}

void Team::scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                    std::span<const Count> displs, Datatype sendtype, InPlace, int root) {
  auto guard = engine_->lock();
  choose_scatterv_op(
      *algorithms_, sendcounts, displs, sendtype, 0, sendtype, true, root, [&](auto op) {
        run_locked<typename decltype(op)::type>(*algorithms_, *engine_, sendbuf, sendcounts, displs,
                                                sendtype, nullptr, Count{0}, sendtype, true, root);
      });
}

void Team::gather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                  Count recvcount, Datatype recvtype, int root) {
  run_op<GatherOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                   recvtype, false, root);
}

void Team::gather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  run_op<GatherOp>(*algorithms_, *engine_, nullptr, Count{0}, recvtype, recvbuf, recvcount,
                   recvtype, true, root);
}

void Team::gatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                   std::span<const Count> recvcounts, std::span<const Count> displs,
                   Datatype recvtype, int root) {
  auto guard = engine_->lock();
  choose_gatherv_op(*algorithms_, sendbuf, sendcount, sendtype, recvcounts, displs, recvtype, false,
                    root, [&](auto op) {
                      run_locked<typename decltype(op)::type>(
                          *algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                          displs, recvtype, false, root);
                    });
}

void Team::gatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                   std::span<const Count> displs, Datatype recvtype, int root) {
  auto guard = engine_->lock();
  choose_gatherv_op(*algorithms_, nullptr, Count{0}, recvtype, recvcounts, displs, recvtype, true,
                    root, [&](auto op) {
                      run_locked<typename decltype(op)::type>(
                          *algorithms_, *engine_, nullptr, Count{0}, recvtype, recvbuf, recvcounts,
                          displs, recvtype, true, root);
                    });
}

Request Team::ibcast(void* buffer, Count count, Datatype type, int root) {
  return start_op<BcastOp>(*algorithms_, *engine_, buffer, count, type, root);
}

Request Team::iscatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                       Count recvcount, Datatype recvtype, int root) {
  return start_op<ScatterOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, false, root);
}

Request Team::iscatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root) {
  return start_op<ScatterOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, nullptr,
                             Count{0}, sendtype, true, root);
}

Request Team::iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                        std::span<const Count> displs, Datatype sendtype, void* recvbuf,
                        Count recvcount, Datatype recvtype, int root) {
  auto guard = engine_->lock();
  return choose_scatterv_op(
      *algorithms_, sendcounts, displs, sendtype, recvcount, recvtype, false, root, [&](auto op) {
        return start_locked<typename decltype(op)::type>(*algorithms_, *engine_, sendbuf,
                                                         sendcounts, displs, sendtype, recvbuf,
                                                         recvcount, recvtype, false, root);
      });
}

Request Team::iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                        std::span<const Count> displs, Datatype sendtype, InPlace, int root) {
  auto guard = engine_->lock();
  return choose_scatterv_op(
      *algorithms_, sendcounts, displs, sendtype, 0, sendtype, true, root, [&](auto op) {
        return start_locked<typename decltype(op)::type>(*algorithms_, *engine_, sendbuf,
                                                         sendcounts, displs, sendtype, nullptr,
                                                         Count{0}, sendtype, true, root);
      });
}

Request Team::igather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                      Count recvcount, Datatype recvtype, int root) {
  return start_op<GatherOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, false, root);
}

Request Team::igather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  return start_op<GatherOp>(*algorithms_, *engine_, nullptr, Count{0}, recvtype, recvbuf, recvcount,
                            recvtype, true, root);
}

Request Team::igatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                       std::span<const Count> recvcounts, std::span<const Count> displs,
                       Datatype recvtype, int root) {
  auto guard = engine_->lock();
  return choose_gatherv_op(*algorithms_, sendbuf, sendcount, sendtype, recvcounts, displs, recvtype,
                           false, root, [&](auto op) {
                             return start_locked<typename decltype(op)::type>(
                                 *algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf,
                                 recvcounts, displs, recvtype, false, root);
                           });
}

Request Team::igatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                       std::span<const Count> displs, Datatype recvtype, int root) {
  auto guard = engine_->lock();
  return choose_gatherv_op(*algorithms_, nullptr, Count{0}, recvtype, recvcounts, displs, recvtype,
                           true, root, [&](auto op) {
                             return start_locked<typename decltype(op)::type>(
                                 *algorithms_, *engine_, nullptr, Count{0}, recvtype, recvbuf,
                                 recvcounts, displs, recvtype, true, root);
                           });
}

}  // namespace shmcoll
