// The team's persistent request behind a persistent call of the plugin's on one node
// (persistent.hpp): a start then builds the operation inside that request, as Team's
// non-blocking calls would, without allocating it or choosing its class again. It is made at
// the call's first start on the team, from the converted arguments (the team call's), and made
// again wherever a later start's differ from those: a derived datatype's conversion buffer
// that moved, counts the program changed (erroneous in MPI, but the request must then follow
// the buffers its conversion made), another team.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "shmcoll/team.hpp"

namespace shmcoll::mpi {

namespace team_persistent {
// What is kept of an argument to compare the next start's with: a copy of counts and
// displacements (their arrays are rewritten at every start), the argument itself otherwise.
template <class T>
T keep(const T& arg) {
  return arg;
}
inline std::vector<Count> keep(std::span<const Count> arg) { return {arg.begin(), arg.end()}; }

template <class T>
bool same(const T& kept, const T& arg) {
  return kept == arg;
}
inline bool same(const std::vector<Count>& kept, std::span<const Count> arg) {
  return std::ranges::equal(kept, arg);
}
inline bool same(const Datatype& kept, const Datatype& arg) {
  return kept.size == arg.size && kept.name == arg.name;
}
inline bool same(InPlace, InPlace) { return true; }
}  // namespace team_persistent

class TeamPersistent {
 public:
  // Starts the team's request for these arguments, made first by `init(team, args...)`
  // (Team::bcast_init, ...) where none matches them; `completes` then becomes the Request that
  // completes its starts.
  template <class Init, class... Args>
  void start(Team& team, Init&& init, Request& completes, const Args&... args) {
    using Kept = std::tuple<decltype(team_persistent::keep(args))...>;
    const auto* kept =
        kept_type_ == type_tag<Kept>() ? static_cast<const Kept*>(kept_.get()) : nullptr;
    if (team_ != &team || kept == nullptr || !matches(*kept, args...)) {
      request_ = init(team, args...);
      kept_ = std::make_shared<Kept>(team_persistent::keep(args)...);
      kept_type_ = type_tag<Kept>();
      team_ = &team;
      completes = request_.request();
    }
    request_.start();
  }
  // The team's request the last start started.
  PersistentRequest& started() { return request_; }

 private:
  // One address per type of kept arguments: a call site's (a scatter's root calls with or
  // without MPI_IN_PLACE).
  template <class Kept>
  static const void* type_tag() {
    static constexpr char tag = 0;
    return &tag;
  }
  template <class Kept, class... Args>
  static bool matches(const Kept& kept, const Args&... args) {
    return std::apply([&](const auto&... k) { return (team_persistent::same(k, args) && ...); },
                      kept);
  }

  Team* team_ = nullptr;
  std::shared_ptr<const void> kept_;  // a Kept of start's, whose type_tag is kept_type_
  const void* kept_type_ = nullptr;
  PersistentRequest request_;
};

}  // namespace shmcoll::mpi
