// Persistent collectives (Team::bcast_init and the others, PersistentRequest): the operation
// class is chosen once, at init, as the non-blocking call would choose it; each start builds
// an operation of that class in the request's own state, from the arguments kept there, and
// queues that state with the progress engine, which ends the operation when it completes.
// A start therefore allocates nothing, and costs what a blocking call's own construction of the
// operation costs, plus the queue.
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include "coll/bcast/bcast.hpp"
#include "coll/gather/gather.hpp"
#include "coll/operation_choice.hpp"
#include "coll/scatter/scatter.hpp"
#include "coll/team_algorithms.hpp"
#include "shmcoll/team.hpp"
#include "team/progress_engine.hpp"

namespace shmcoll {
namespace {

// How an argument is kept from init to every start: counts and displacements as copies (the
// caller may reuse its arrays), everything else as given.
template <class T>
T keep(const T& arg) {
  return arg;
}
inline std::vector<Count> keep(std::span<const Count> arg) { return {arg.begin(), arg.end()}; }
template <class T>
const T& view(const T& kept) {
  return kept;
}
inline std::span<const Count> view(const std::vector<Count>& kept) { return kept; }

template <class Op, class... Args>
class PersistentOpState final : public detail::PersistentState {
 public:
  PersistentOpState(TeamAlgorithms& algorithms, const Args&... args)
      : algorithms_(algorithms), args_(keep(args)...) {}

  void build() override {
    std::apply([this](const auto&... kept) { op = &storage_.emplace(algorithms_, view(kept)...); },
               args_);
  }
  void end_op() override { storage_.reset(); }

 private:
  TeamAlgorithms& algorithms_;
  std::tuple<decltype(keep(std::declval<Args>()))...> args_;
  std::optional<Op> storage_;
};

template <class Op, class... Args>
PersistentRequest make_persistent(TeamAlgorithms& algorithms, ProgressEngine& engine,
                                  const Args&... args) {
  auto state = std::make_shared<PersistentOpState<Op, Args...>>(algorithms, args...);
  engine.adopt(*state);
  return PersistentRequest(std::move(state));
}

}  // namespace

PersistentRequest Team::bcast_init(void* buffer, Count count, Datatype type, int root) {
  return make_persistent<BcastOp>(*algorithms_, *engine_, buffer, count, type, root);
}

PersistentRequest Team::scatter_init(const void* sendbuf, Count sendcount, Datatype sendtype,
                                     void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  return make_persistent<ScatterOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, recvtype, false, root);
}

PersistentRequest Team::scatter_init(const void* sendbuf, Count sendcount, Datatype sendtype,
                                     InPlace, int root) {
  return make_persistent<ScatterOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype,
                                    static_cast<void*>(nullptr), Count{0}, sendtype, true, root);
}

PersistentRequest Team::scatterv_init(const void* sendbuf, std::span<const Count> sendcounts,
                                      std::span<const Count> displs, Datatype sendtype,
                                      void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  auto guard = engine_->lock();  // the choice reads caches a progress thread fills
  return choose_scatterv_op(
      *algorithms_, sendcounts, displs, sendtype, recvcount, recvtype, false, root, [&](auto op) {
        return make_persistent<typename decltype(op)::type>(*algorithms_, *engine_, sendbuf,
                                                            sendcounts, displs, sendtype, recvbuf,
                                                            recvcount, recvtype, false, root);
      });
}

PersistentRequest Team::scatterv_init(const void* sendbuf, std::span<const Count> sendcounts,
                                      std::span<const Count> displs, Datatype sendtype, InPlace,
                                      int root) {
  auto guard = engine_->lock();
  return choose_scatterv_op(*algorithms_, sendcounts, displs, sendtype, 0, sendtype, true, root,
                            [&](auto op) {
                              return make_persistent<typename decltype(op)::type>(
                                  *algorithms_, *engine_, sendbuf, sendcounts, displs, sendtype,
                                  static_cast<void*>(nullptr), Count{0}, sendtype, true, root);
                            });
}

PersistentRequest Team::gather_init(const void* sendbuf, Count sendcount, Datatype sendtype,
                                    void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  return make_persistent<GatherOp>(*algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, recvtype, false, root);
}

PersistentRequest Team::gather_init(InPlace, void* recvbuf, Count recvcount, Datatype recvtype,
                                    int root) {
  return make_persistent<GatherOp>(*algorithms_, *engine_, static_cast<const void*>(nullptr),
                                   Count{0}, recvtype, recvbuf, recvcount, recvtype, true, root);
}

PersistentRequest Team::gatherv_init(const void* sendbuf, Count sendcount, Datatype sendtype,
                                     void* recvbuf, std::span<const Count> recvcounts,
                                     std::span<const Count> displs, Datatype recvtype, int root) {
  auto guard = engine_->lock();
  return choose_gatherv_op(*algorithms_, sendbuf, sendcount, sendtype, recvcounts, displs, recvtype,
                           false, root, [&](auto op) {
                             return make_persistent<typename decltype(op)::type>(
                                 *algorithms_, *engine_, sendbuf, sendcount, sendtype, recvbuf,
                                 recvcounts, displs, recvtype, false, root);
                           });
}

PersistentRequest Team::gatherv_init(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                                     std::span<const Count> displs, Datatype recvtype, int root) {
  auto guard = engine_->lock();
  return choose_gatherv_op(*algorithms_, nullptr, Count{0}, recvtype, recvcounts, displs, recvtype,
                           true, root, [&](auto op) {
                             return make_persistent<typename decltype(op)::type>(
                                 *algorithms_, *engine_, static_cast<const void*>(nullptr),
                                 Count{0}, recvtype, recvbuf, recvcounts, displs, recvtype, true,
                                 root);
                           });
}

PersistentRequest::PersistentRequest(std::shared_ptr<detail::PersistentState> state)
    : state_(std::move(state)), request_(state_) {}

PersistentRequest& PersistentRequest::operator=(PersistentRequest&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
    request_ = std::move(other.request_);
  }
  return *this;
}

PersistentRequest::~PersistentRequest() { release(); }

void PersistentRequest::release() {
  if (state_ && !state_->complete.load(std::memory_order_acquire)) {
    try {
      state_->engine->release_incomplete(*state_);
    } catch (...) {
      // Only a failing mutex lands here; the operation stays queued and completes later.
    }
  }
  request_ = Request();
  state_.reset();
}

void PersistentRequest::start() {
  if (!state_) throw InvalidArgument("start of an empty persistent request");
  ProgressEngine::restart(*state_, request_.state_);
}

}  // namespace shmcoll
