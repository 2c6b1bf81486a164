// The three forms of every collective the plugin serves (blocking, non-blocking, persistent),
// each written once for the five collectives and both count types: the int counts of MPI_Bcast
// and the others, and MPI-4's large-count forms (MPI_Bcast_c, ...: MPI_Count counts, MPI_Aint
// displacements). A collective is a struct (bcast.cpp, ...) that holds one call's arguments
// (which the persistent form copies) and says how to serve them:
//   static constexpr Coll kColl;
//   using RootBuffers = ...; using OtherBuffers = ...;   what each role converts (call_buffers.hpp)
//   MPI_Comm comm; int root;
//   bool check(int rank, int size, LocalError&) const     the rank's own arguments (local_checks)
//   bool moves_nothing(int rank) const                   (serve.hpp)
//   int root_part(RootBuffers&, int ranks, Run&&) const  converts the buffers, calls run(...)
//   int other_part(OtherBuffers&, Run&&) const           with the team call's arguments
//   static void run(target, args...)                     Team::bcast and the others
//   static auto start(target, args...)                   Team::ibcast and the others
//   static auto init(Team&, args...)                     Team::bcast_init and the others
// where the target is the node's Team, or the Spanning of a communicator across nodes.
// Each form takes the entry point's name and its PMPI fallback.
#pragma once

#include "mpi/call_buffers.hpp"
#include "mpi/persistent.hpp"
#include "mpi/requests.hpp"
#include "mpi/reused_calls.hpp"
#include "mpi/serve.hpp"

namespace shmcoll::mpi {

// The arguments of scatter and gather (the v-forms' differ).
struct RootedArgs {
  bool operator==(const RootedArgs&) const = default;
  const void* sendbuf;
  MPI_Count sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  MPI_Count recvcount;
  MPI_Datatype recvtype;
  int root;
  MPI_Comm comm;
};

template <class C>
auto local_check(const C& c) {
  return [&c](int rank, int size, LocalError& error) { return c.check(rank, size, error); };
}
template <class C>
auto moves_nothing(const C& c) {
  return [&c](int rank) { return c.moves_nothing(rank); };
}

// The blocking root's part, out of line: the root's views (VBlocks in the v-forms) would
// otherwise make the frame that every other rank's call enters too. `target` is the node's
// Team, or the communicator's Spanning.
template <class C, class Target>
[[gnu::noinline]] int blocking_root(Target& target, const C& c) {
  return run_call<typename C::RootBuffers>(c.comm, [&](typename C::RootBuffers& b) {
    return c.root_part(b, target.size(), [&](auto... args) { C::run(target, args...); });
  });
}

template <class C, class Fallback>
int blocking_form(const char* function, const C& c, Fallback&& fallback) {
  auto body = [&](auto& target) {
    if constexpr (std::is_same_v<std::decay_t<decltype(target)>, Spanning>) {
      target.drain();  // the calls started before this one end first (started.hpp)
    }
    if (target.rank() == c.root) return blocking_root(target, c);
    return run_call<typename C::OtherBuffers>(c.comm, [&](typename C::OtherBuffers& b) {
      return c.other_part(b, [&](auto... args) { C::run(target, args...); });
    });
  };
  return serve(
      function, C::kColl, c.comm, local_check(c), moves_nothing(c), body, fallback,
      [] { return MPI_SUCCESS; }, c.root);
}

template <class C, class Fallback>
int nonblocking_form(const char* function, const C& c, MPI_Request* request, Fallback&& fallback) {
  auto body = [&](auto& target) {
    // On a node's team, in a call kept for the communicator's non-blocking calls where one is
    // free (reused_calls.hpp), else in a new one.
    if constexpr (std::is_same_v<std::decay_t<decltype(target)>, Team>) {
      if (const std::optional<int> rc = start_reused(function, c, target, request)) return *rc;
    }
    return start_collective<typename C::RootBuffers, typename C::OtherBuffers>(
        function, C::kColl, c.comm, request, target, c.root,
        [](auto& t, auto... args) { return C::start(t, args...); },
        [&](typename C::RootBuffers& b, auto run) { return c.root_part(b, target.size(), run); },
        [&](typename C::OtherBuffers& b, auto run) { return c.other_part(b, run); });
  };
  if (const std::optional<int> rc = start_repeated(function, c, request)) return *rc;
  return serve(
      function, C::kColl, c.comm, local_check(c), moves_nothing(c), body, fallback,
      [&] { return completed_request(request); }, c.root);
}

template <class C, class Fallback>
int persistent_form(const char* function, const C& c, MPI_Request* request, Fallback&& fallback) {
  auto body = [&](auto& target) {
    const int ranks = target.size();
    return init_collective<typename C::RootBuffers, typename C::OtherBuffers>(
        function, C::kColl, c.comm, request, target, c.root,
        [](auto& on, auto... args) { return C::start(on, args...); },
        [](Team& team, auto... args) { return C::init(team, args...); },
        [c, ranks](typename C::RootBuffers& b, auto run) { return c.root_part(b, ranks, run); },
        [c](typename C::OtherBuffers& b, auto run) { return c.other_part(b, run); });
  };
  return serve(
      function, C::kColl, c.comm, local_check(c), moves_nothing(c), body, fallback,
      [&] { return empty_persistent(function, C::kColl, c.comm, request); }, c.root);
}

}  // namespace shmcoll::mpi
