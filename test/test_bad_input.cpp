// Bad input: every rank of the team must get an error of the right kind whose message names the
// argument, the rank and the values; no buffer outside the intended one may change; no rank may
// hang; afterwards the team is aborted (further calls raise the same error) and /dev/shm is
// clean.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "protocol/deferred_checks.hpp"
#include "support/buffers.hpp"
#include "support/ranks.hpp"

namespace shmcoll::test {
namespace {

constexpr int kRanks = 4;
constexpr Count kN = 8;  // int32 elements per rank

struct Case {
  const char* name;
  std::vector<const char*> needles;  // every rank's message contains all of these
  std::function<void(Team&, RankContext&)> call;
  Status status = Status::kInvalidArgument;
  // Where given, every rank's error carries this cause: the rank that found it and those that
  // learned of it from the team.
  std::optional<Cause> cause = std::nullopt;
};

void run_case(const Case& c, const Options& options = test_options()) {
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = kRanks, .deadline_s = 60},
      [&](RankContext& ctx) {
        Team team(ctx.bootstrap, options);
        try {
          c.call(team, ctx);
          // Deferred checks: a rank that left before the mismatching peer arrived learns of
          // the error in its next call.
          if (team.options().checks != CheckLevel::kDeferred)
            ctx.fail("%s: the call returned without an error", c.name);
          team.barrier();
          ctx.fail("%s: neither the call nor the next one raised an error", c.name);
        } catch (const Error& e) {
          if (e.status() != c.status) {
            ctx.fail("%s: status '%s', expected '%s' (%s)", c.name, status_name(e.status()),
                     status_name(c.status), e.what());
          }
          if (c.cause && e.cause() != *c.cause) {
            ctx.fail("%s: cause %d, expected %d (%s)", c.name, static_cast<int>(e.cause()),
                     static_cast<int>(*c.cause), e.what());
          }
          for (const char* needle : c.needles) {
            if (std::strstr(e.what(), needle) == nullptr)
              ctx.fail("%s: message \"%s\" lacks \"%s\"", c.name, e.what(), needle);
          }
          // The team is aborted: the next call reports the same error instead of running.
          try {
            team.barrier();
            ctx.fail("%s: a call after the error succeeded", c.name);
          } catch (const Error& again) {
            if (again.status() != e.status())
              ctx.fail("%s: the follow-up error has another status", c.name);
          }
        }
      },
      &job);
  INFO(std::string(c.name) << ": " << outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

// A receive buffer whose contents and guards must be unchanged by a failed call.
struct Untouched {
  GuardedBuffer buf;
  explicit Untouched(std::size_t bytes) : buf(bytes) {}
  void* data() { return buf.data(); }
  void verify(RankContext& ctx, const char* what) {
    for (std::size_t i = 0; i < buf.size(); ++i) {
      if (buf[i] != kUnwritten) {
        ctx.fail("%s: byte %zu of a buffer changed by a failed call", what, i);
        return;
      }
    }
    if (!buf.guards_intact()) ctx.fail("%s: guard bytes changed by a failed call", what);
  }
};

std::vector<int> ints(std::size_t n, int v = 7) { return std::vector<int>(n, v); }

// Runs `f`, then verifies `u` whatever happened, and rethrows.
template <class F>
void keeping(RankContext& ctx, Untouched& u, const char* what, F&& f) {
  try {
    f();
  } catch (...) {
    u.verify(ctx, what);
    throw;
  }
  u.verify(ctx, what);
}

std::vector<Count> uniform(Count c) { return std::vector<Count>(kRanks, c); }
std::vector<Count> packed_displs(Count c) {
  std::vector<Count> d(kRanks);
  for (int r = 0; r < kRanks; ++r) d[static_cast<std::size_t>(r)] = r * c;
  return d;
}

}  // namespace

TEST_CASE("bad input: root out of range, on every rank") {
  run_case({"root too large",
            {"root = 4 is outside the team [0, 4)"},
            [](Team& t, RankContext&) {
              auto v = ints(kN);
              t.bcast(v.data(), kN, kInt32, 4);
            },
            Status::kInvalidArgument,
            Cause::kRoot});
  run_case({"negative root", {"root = -1 is outside the team"}, [](Team& t, RankContext&) {
              auto v = ints(kN);
              t.gather(v.data(), kN, kInt32, v.data(), kN, kInt32, -1);
            }});
}

// Rank 2 names root 1, the others root 0.
Case root_mismatch() {
  return {"root mismatch",
          {"root mismatch", "root=0", "root=1"},
          [](Team& t, RankContext& ctx) {
            auto v = ints(kN);
            t.bcast(v.data(), kN, kInt32, ctx.rank == 2 ? 1 : 0);
          },
          Status::kInvalidArgument,
          Cause::kRootMismatch};
}

TEST_CASE("bad input: different roots on different ranks") { run_case(root_mismatch()); }

std::vector<Case> signature_mismatches() {
  std::vector<Case> cases;
  cases.push_back({"bcast count",
                   {"mismatch", "bytes"},
                   [](Team& t, RankContext& ctx) {
                     const Count n = ctx.rank == 3 ? kN + 1 : kN;
                     if (ctx.rank == 0) {
                       auto v = ints(static_cast<std::size_t>(n));
                       t.bcast(v.data(), n, kInt32, 0);
                     } else if (ctx.rank == 3) {
                       Untouched u(static_cast<std::size_t>(n) * 4);
                       keeping(ctx, u, "bcast recv", [&] { t.bcast(u.data(), n, kInt32, 0); });
                     } else {
                       auto v = ints(static_cast<std::size_t>(n));
                       t.bcast(v.data(), n, kInt32, 0);
                     }
                   },
                   Status::kInvalidArgument,
                   Cause::kSizeMismatch});
  cases.push_back({"scatter recvcount", {"mismatch", "bytes"}, [](Team& t, RankContext& ctx) {
                     const Count n = ctx.rank == 1 ? kN - 1 : kN;
                     auto send = ints(kRanks * kN);
                     Untouched u(static_cast<std::size_t>(n) * 4);
                     if (ctx.rank == 1) {
                       keeping(ctx, u, "scatter recv",
                               [&] { t.scatter(send.data(), kN, kInt32, u.data(), n, kInt32, 0); });
                     } else {
                       t.scatter(send.data(), kN, kInt32, u.data(), n, kInt32, 0);
                     }
                   }});
  cases.push_back({"gather sendcount", {"mismatch", "bytes"}, [](Team& t, RankContext& ctx) {
                     const Count n = ctx.rank == 2 ? kN + 3 : kN;
                     auto send = ints(static_cast<std::size_t>(n));
                     if (ctx.rank == 0) {
                       // Blocks of matching ranks may land before the mismatch is seen; rank 2's
                       // must not.
                       Untouched u(kRanks * kN * 4);
                       try {
                         t.gather(send.data(), kN, kInt32, u.data(), kN, kInt32, 0);
                       } catch (...) {
                         for (std::size_t i = 2 * kN * 4; i < 3 * kN * 4; ++i) {
                           if (u.buf[i] != kUnwritten) {
                             ctx.fail("gather root: rank 2's block was written");
                             break;
                           }
                         }
                         if (!u.buf.guards_intact()) ctx.fail("gather root: guards changed");
                         throw;
                       }
                     } else {
                       t.gather(send.data(), n, kInt32, nullptr, 0, kInt32, 0);
                     }
                   }});
  cases.push_back({"scatterv recvcount", {"sendcounts[1]"}, [](Team& t, RankContext& ctx) {
                     auto counts = uniform(kN);
                     auto displs = packed_displs(kN);
                     auto send = ints(kRanks * kN);
                     const Count n = ctx.rank == 1 ? kN + 2 : kN;
                     Untouched u(static_cast<std::size_t>(n) * 4);
                     if (ctx.rank == 1) {
                       keeping(ctx, u, "scatterv recv", [&] {
                         t.scatterv(send.data(), counts, displs, kInt32, u.data(), n, kInt32, 0);
                       });
                     } else {
                       t.scatterv(send.data(), counts, displs, kInt32, u.data(), n, kInt32, 0);
                     }
                   }});
  // The same sizes, the mismatching receiver late and its block large enough for the stream:
  // under full checks the others, which learned the root's one size for every receiver, find
  // it when it arrives, in the same call.
  cases.push_back(
      {"scatterv recvcount from a late receiver", {"sendcounts[1]"}, [](Team& t, RankContext& ctx) {
         constexpr Count kLarge = 256;  // 1 KiB of int32: past the record's inline bytes
         auto counts = uniform(kLarge);
         auto displs = packed_displs(kLarge);
         auto send = ints(kRanks * kLarge);
         const Count n = ctx.rank == 1 ? kLarge + 2 : kLarge;
         auto recv = ints(static_cast<std::size_t>(n));
         if (ctx.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
         t.scatterv(send.data(), counts, displs, kInt32, recv.data(), n, kInt32, 0);
       }});
  cases.push_back({"gatherv sendcount", {"recvcounts[2]"}, [](Team& t, RankContext& ctx) {
                     auto counts = uniform(kN);
                     auto displs = packed_displs(kN);
                     const Count n = ctx.rank == 2 ? kN - 2 : kN;
                     auto send = ints(static_cast<std::size_t>(n));
                     if (ctx.rank == 0) {
                       Untouched u(kRanks * kN * 4);
                       // The root's own block and the blocks of matching ranks may land before the
                       // mismatch is seen, so only the guards are checked here.
                       try {
                         t.gatherv(send.data(), n, kInt32, u.data(), counts, displs, kInt32, 0);
                       } catch (...) {
                         if (!u.buf.guards_intact()) ctx.fail("gatherv root: guards changed");
                         throw;
                       }
                     } else {
                       t.gatherv(send.data(), n, kInt32, nullptr, {}, {}, kInt32, 0);
                     }
                   }});
  // The same sizes, the mismatching sender late: under full checks the others, which learned
  // the root's one size for every sender, find it when it arrives, in the same call.
  cases.push_back(
      {"gatherv sendcount from a late sender", {"recvcounts[2]"}, [](Team& t, RankContext& ctx) {
         auto counts = uniform(kN);
         auto displs = packed_displs(kN);
         const Count n = ctx.rank == 2 ? kN - 2 : kN;
         auto send = ints(static_cast<std::size_t>(n));
         if (ctx.rank == 0) {
           auto recv = ints(kRanks * kN);
           t.gatherv(send.data(), n, kInt32, recv.data(), counts, displs, kInt32, 0);
         } else {
           if (ctx.rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
           t.gatherv(send.data(), n, kInt32, nullptr, {}, {}, kInt32, 0);
         }
       }});
  // Sizes that differ from rank to rank, the mismatching rank late: under full checks the
  // others' sum of the sizes they see differs from the root's fingerprint, so they wait for its
  // verdict and report its error, in the same call.
  cases.push_back({"gatherv sendcount from a late sender, sizes differing by rank",
                   {"recvcounts[2]"},
                   [](Team& t, RankContext& ctx) {
                     std::vector<Count> counts = {kN, kN + 1, kN + 2, kN + 3};
                     std::vector<Count> displs = {0, kN, 2 * kN + 1, 3 * kN + 3};
                     const Count n =
                         counts[static_cast<std::size_t>(ctx.rank)] - (ctx.rank == 2 ? 2 : 0);
                     auto send = ints(static_cast<std::size_t>(n));
                     if (ctx.rank == 0) {
                       auto recv = ints(4 * kN + 6);
                       t.gatherv(send.data(), n, kInt32, recv.data(), counts, displs, kInt32, 0);
                     } else {
                       if (ctx.rank == 2)
                         std::this_thread::sleep_for(std::chrono::milliseconds(50));
                       t.gatherv(send.data(), n, kInt32, nullptr, {}, {}, kInt32, 0);
                     }
                   }});
  for (const Count unit : {Count{1}, Count{100}}) {  // in the records; past them (the stream)
    cases.push_back({unit == 1 ? "scatterv recvcount from a late receiver, sizes differing by rank"
                               : "scatterv recvcount from a late receiver, streamed sizes "
                                 "differing by rank",
                     {"sendcounts[1]"},
                     [unit](Team& t, RankContext& ctx) {
                       std::vector<Count> counts(kRanks), displs(kRanks);
                       for (int r = 0; r < kRanks; ++r) {
                         counts[static_cast<std::size_t>(r)] = unit * (r + 1);
                         if (r > 0)
                           displs[static_cast<std::size_t>(r)] =
                               displs[static_cast<std::size_t>(r - 1)] +
                               counts[static_cast<std::size_t>(r - 1)];
                       }
                       auto send = ints(static_cast<std::size_t>(unit * 10));
                       const Count n =
                           counts[static_cast<std::size_t>(ctx.rank)] + (ctx.rank == 1 ? 2 : 0);
                       auto recv = ints(static_cast<std::size_t>(n));
                       if (ctx.rank == 1)
                         std::this_thread::sleep_for(std::chrono::milliseconds(50));
                       t.scatterv(send.data(), counts, displs, kInt32, recv.data(), n, kInt32, 0);
                     }});
  }
  // The root reads no stream from a rank it expects nothing from; that rank arrives late, so
  // under deferred checks the root has left before it (the size check cannot ride on a read).
  cases.push_back(
      {"gatherv to a root expecting nothing", {"recvcounts[2]"}, [](Team& t, RankContext& ctx) {
         auto counts = uniform(kN);
         counts[2] = 0;
         auto displs = packed_displs(kN);
         auto send = ints(kN);
         if (ctx.rank == 0) {
           auto recv = ints(kRanks * kN);
           t.gatherv(send.data(), kN, kInt32, recv.data(), counts, displs, kInt32, 0);
         } else {
           if (ctx.rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
           t.gatherv(send.data(), kN, kInt32, nullptr, {}, {}, kInt32, 0);
         }
       }});
  // Calls in which the root moves nothing, one rank late with a block: under deferred checks
  // nobody else waits for that rank (an empty v-form waits for no one), so it must find the
  // mismatch itself, from the root's word that every block is empty, or the root must find it.
  cases.push_back({"gatherv sendcount to a root expecting nothing from anyone",
                   {"recvcounts[2]"},
                   [](Team& t, RankContext& ctx) {
                     const auto none = uniform(0);
                     auto send = ints(kN);
                     if (ctx.rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
                     t.gatherv(send.data(), ctx.rank == 2 ? kN : 0, kInt32, send.data(), none, none,
                               kInt32, 0);
                   }});
  cases.push_back({"scatterv recvcount from a root sending nothing to anyone",
                   {"sendcounts[1]"},
                   [](Team& t, RankContext& ctx) {
                     const auto none = uniform(0);
                     auto recv = ints(kN);
                     if (ctx.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
                     t.scatterv(recv.data(), none, none, kInt32, recv.data(),
                                ctx.rank == 1 ? kN : 0, kInt32, 0);
                   }});
  // The reverse: the root sends a block to a rank that expects nothing and arrives first.
  cases.push_back({"scatterv to a receiver expecting nothing, the root late",
                   {"sendcounts[3]"},
                   [](Team& t, RankContext& ctx) {
                     auto counts = uniform(0);
                     counts[3] = kN;
                     const auto displs = uniform(0);
                     auto send = ints(kN), recv = ints(kN);
                     if (ctx.rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
                     t.scatterv(send.data(), counts, displs, kInt32, recv.data(), 0, kInt32, 0);
                   }});
  // An empty receiver makes its comparisons later, from the root's word where it gives one
  // size, else from the record the root posted it: here the sizes differ by rank, and rank 3
  // expects nothing of the block the root sends it, late or early.
  for (const int late : {-1, 0, 3}) {
    cases.push_back({late < 0 ? "scatterv to a receiver expecting nothing, sizes differing by rank"
                     : late == 0 ? "scatterv to a receiver expecting nothing, sizes differing by "
                                   "rank, the root late"
                                 : "scatterv to a receiver expecting nothing, sizes differing by "
                                   "rank, the receiver late",
                     {"sendcounts[3]"},
                     [late](Team& t, RankContext& ctx) {
                       const std::vector<Count> counts = {0, 0, 1, kN}, displs = {0, 0, 0, 1};
                       auto send = ints(kN + 1), recv = ints(kN);
                       if (ctx.rank == late)
                         std::this_thread::sleep_for(std::chrono::milliseconds(50));
                       t.scatterv(send.data(), counts, displs, kInt32, recv.data(),
                                  ctx.rank == 2 ? 1 : 0, kInt32, 0);
                     }});
  }
  // Calls in which no rank moves anything still pair up by collective and root.
  cases.push_back({"empty v-form calls, one rank gathers while the others scatter",
                   {"collective mismatch"},
                   [](Team& t, RankContext& ctx) {
                     const auto none = uniform(0);
                     int unused = 0;
                     if (ctx.rank == 3) {
                       t.gatherv(&unused, 0, kInt32, &unused, none, none, kInt32, 0);
                     } else {
                       t.scatterv(&unused, none, none, kInt32, &unused, 0, kInt32, 0);
                     }
                   }});
  cases.push_back({"empty scatterv calls, one rank names another root",
                   {"root mismatch"},
                   [](Team& t, RankContext& ctx) {
                     const auto none = uniform(0);
                     int unused = 0;
                     t.scatterv(&unused, none, none, kInt32, &unused, 0, kInt32,
                                ctx.rank == 2 ? 1 : 0);
                   }});
  return cases;
}

TEST_CASE("bad input: type signature mismatches, receivers' buffers untouched") {
  for (const Case& c : signature_mismatches()) run_case(c);
}

TEST_CASE("bad input under full checks: a late sender's or receiver's size, with waiters awake") {
  // Waiters that yield instead of sleeping see the late rank arrive before its own check of
  // its size aborts the team and wakes sleepers: the others must then find the mismatch
  // themselves, from the one size the root published (uniform_size.hpp), or wait for its
  // verdict; none may return.
  Options awake = test_options();
  awake.yield_iterations = 1 << 30;
  for (const Case& c : signature_mismatches()) {
    if (std::string(c.name).find(" late ") != std::string::npos) run_case(c, awake);
  }
}

TEST_CASE("bad input: type signature mismatches along the topology tree") {
  // 2 NUMA nodes of 2 cores: root 0 serves rank 2 (the other node's leader, which relays to 3)
  // and rank 1; the mismatching ranks are a leaf (1), a leader (2) and a leader's member (3).
  Options tree = test_options();
  tree.topology = "numa:2 core:2 pu:1";
  tree.bcast_algorithm = tree.scatter_algorithm = tree.gather_algorithm = Algorithm::kTree;
  for (const Case& c : signature_mismatches()) run_case(c, tree);
}

TEST_CASE("bad input under the default checks, with a CPU per rank and without") {
  // The same team of 4 ranks, told it has 4 CPUs, then 2 (Options::team_cpus): deferred checks
  // either way, every mismatch raised on every rank.
  for (const int cpus : {kRanks, kRanks / 2}) {
    Options options = test_options();
    options.checks = Options{}.checks;
    options.team_cpus = cpus;
    const launch::JobOutcome outcome =
        run_ranks({.nranks = kRanks, .deadline_s = 60}, [&](RankContext& ctx) {
          Team team(ctx.bootstrap, options);
          if (team.options().checks != CheckLevel::kDeferred) {
            ctx.fail("%d ranks on %d CPUs: checks '%s', expected 'deferred'", kRanks, cpus,
                     check_level_name(team.options().checks));
          }
        });
    CHECK(outcome.succeeded());
    run_case(root_mismatch(), options);
    for (const Case& c : signature_mismatches()) run_case(c, options);
  }
}

TEST_CASE(
    "bad input under deferred checks: every rank gets the error, at the latest in its next call") {
  Options deferred = test_options();
  deferred.checks = CheckLevel::kDeferred;
  run_case(root_mismatch(), deferred);
  for (const Case& c : signature_mismatches()) run_case(c, deferred);
  // Along the tree a receiver compares itself with its parent only (compared_toward_root).
  Options deferred_tree = deferred;
  deferred_tree.topology = "numa:2 core:2 pu:1";
  deferred_tree.bcast_algorithm = deferred_tree.scatter_algorithm = deferred_tree.gather_algorithm =
      Algorithm::kTree;
  for (const Case& c : signature_mismatches()) run_case(c, deferred_tree);
  // Found by the compare stage ("root mismatch") or by rank 3's read of rank 2's stream
  // ("rank 2 published data for bcast (root 0)"), whichever comes first.
  run_case({"root mismatch along the tree",
            {"mismatch", "root"},
            [](Team& t, RankContext& ctx) {
              auto v = ints(kN);
              t.bcast(v.data(), kN, kInt32, ctx.rank == 3 ? 2 : 0);
            }},
           deferred_tree);
  run_case({"bcast against scatter",
            {"mismatch"},
            [](Team& t, RankContext& ctx) {
              auto v = ints(kRanks * kN);
              if (ctx.rank == 2) {
                t.scatter(v.data(), kN, kInt32, v.data(), kN, kInt32, 0);
              } else {
                t.bcast(v.data(), kN, kInt32, 0);
              }
            }},
           deferred);
  run_case({"bcast against gather",
            {"mismatch"},
            [](Team& t, RankContext& ctx) {
              auto v = ints(kRanks * kN);
              if (ctx.rank == 1) {
                t.gather(v.data(), kN, kInt32, nullptr, 0, kInt32, 0);
              } else {
                t.bcast(v.data(), kN, kInt32, 0);
              }
            }},
           deferred);
  // The mismatching rank comes last, after the others may have returned: a late root.
  run_case({"late root mismatch",
            {"root mismatch"},
            [](Team& t, RankContext& ctx) {
              auto v = ints(kN);
              if (ctx.rank == 3) usleep(50'000);
              t.bcast(v.data(), kN, kInt32, ctx.rank == 3 ? 3 : 0);
            }},
           deferred);
  // Rank 2 gathers to rank 1, which has not arrived yet, so it leaves its comparisons for its
  // next call (defer_to_root); rank 0 has left the broadcast by then, and rank 1 arrives later
  // as a receiver that compares itself with rank 0 alone. Only rank 2's deferred comparison
  // (with rank 0's history, in its barrier) finds the mismatch.
  run_case({"gather to a rank that arrives after the root left",
            {"collective mismatch"},
            [](Team& t, RankContext& ctx) {
              auto v = ints(kRanks * kN);
              if (ctx.rank == 2) {
                usleep(100'000);
                t.gather(v.data(), kN, kInt32, nullptr, 0, kInt32, 1);
              } else {
                if (ctx.rank == 1) usleep(300'000);
                t.bcast(v.data(), kN, kInt32, 0);
              }
            }},
           deferred);
}

// Runs `body` on every rank of a team with deferred checks; the job must succeed and leave no
// segment behind.
void run_deferred(const std::function<void(RankContext&, const Options&)>& body) {
  Options deferred = test_options();
  deferred.checks = CheckLevel::kDeferred;
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = kRanks, .deadline_s = 60}, [&](RankContext& ctx) { body(ctx, deferred); }, &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

TEST_CASE("deferred checks: a gather sender whose root has left raises the mismatch in that call") {
  // The root broadcasts and goes on to a barrier before rank 1 arrives with a gather: rank 1
  // finds the root past the operation and compares with the signature it left in its history,
  // in the gather itself, rather than leaving the comparison to its next call.
  run_deferred([](RankContext& ctx, const Options& deferred) {
    Team team(ctx.bootstrap, deferred);
    auto v = ints(kRanks * kN);
    bool in_first_call = true;
    try {
      if (ctx.rank == 1) {
        usleep(100'000);
        team.gather(v.data(), kN, kInt32, nullptr, 0, kInt32, 0);
      } else {
        team.bcast(v.data(), kN, kInt32, 0);
      }
      in_first_call = false;
      team.barrier();
      ctx.fail("neither the call nor the barrier raised an error");
    } catch (const Error& e) {
      if (std::strstr(e.what(), "collective mismatch") == nullptr)
        ctx.fail("message \"%s\" lacks \"collective mismatch\"", e.what());
      if (ctx.rank == 1 && !in_first_call)
        ctx.fail("the gather returned; the mismatch came in the next call: %s", e.what());
    }
  });
}

TEST_CASE("deferred checks: a rank that leaves the team settles its deferred comparisons") {
  // As "gather to a rank that arrives after the root left", but rank 2 then destroys its team
  // instead of calling again: the comparison it deferred is made then, and the others, waiting
  // for it in a barrier, get the mismatch rather than a dead peer or a timeout.
  run_deferred([](RankContext& ctx, const Options& deferred) {
    auto v = ints(kRanks * kN);
    if (ctx.rank == 2) {
      {
        Team team(ctx.bootstrap, deferred);
        usleep(100'000);
        team.gather(v.data(), kN, kInt32, nullptr, 0, kInt32, 1);
      }
      usleep(500'000);  // alive while the others wait: no dead-peer error to find
      return;
    }
    Team team(ctx.bootstrap, deferred);
    try {
      if (ctx.rank == 1) usleep(300'000);
      team.bcast(v.data(), kN, kInt32, 0);
      team.barrier();
      ctx.fail("the barrier after the mismatch returned");
    } catch (const Error& e) {
      if (std::strstr(e.what(), "collective mismatch") == nullptr)
        ctx.fail("message \"%s\" lacks \"collective mismatch\"", e.what());
    }
  });
}

TEST_CASE("deferred checks: a v-form call in which no rank moves anything waits for no one") {
  // As the MPIs return from such calls at once, the ranks finish ten empty scattervs and
  // gathervs before the late one, the root or not, makes its first: neither a receiver waits
  // for the root's record nor the root for every sender's arrival.
  struct Shared {
    std::atomic<int> finished{0};
  };
  void* at =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(at != MAP_FAILED);
  for (const int late : {0, 2}) {
    auto* shared = new (at) Shared;
    Options deferred = test_options();
    deferred.checks = CheckLevel::kDeferred;
    std::string job;
    const launch::JobOutcome outcome = run_ranks(
        {.nranks = kRanks, .deadline_s = 60},
        [&](RankContext& ctx) {
          Team team(ctx.bootstrap, deferred);
          if (ctx.rank == late) {
            for (int ms = 0; ms < 10'000 && shared->finished.load() < kRanks - 1; ++ms)
              usleep(1000);
            if (shared->finished.load() < kRanks - 1)
              ctx.fail("%d ranks finished their empty calls before rank %d made one",
                       shared->finished.load(), late);
          }
          const auto none = uniform(0);
          int unused = 0;
          for (int i = 0; i < 10; ++i) {
            team.scatterv(&unused, none, none, kInt32, &unused, 0, kInt32, 0);
            team.gatherv(&unused, 0, kInt32, &unused, none, none, kInt32, 0);
          }
          if (ctx.rank != late) shared->finished.fetch_add(1);
          team.barrier();
        },
        &job);
    INFO("late rank " << late << ": " << outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
  }
  munmap(at, sizeof(Shared));
}

TEST_CASE("deferred checks: a mismatch in a call that moves nothing is raised within the window") {
  // Every call here is empty, so each rank leaves its comparisons for later, in a batch; the
  // first call pairs rank 3's gatherv with the others' scatterv. The ranks that can find it
  // (the root, and rank 3) must raise it by the call in which the window ends, whatever runs of
  // empty calls follow; the others learn of it at the latest in the barrier.
  struct Shared {
    std::atomic<int> earliest{1 << 30};
  };
  void* at =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(at != MAP_FAILED);
  auto* shared = new (at) Shared;
  run_deferred([shared](RankContext& ctx, const Options& deferred) {
    Team team(ctx.bootstrap, deferred);
    const auto none = uniform(0);
    int unused = 0;
    int call = 1;
    try {
      for (; call <= 40; ++call) {
        if (call == 1 && ctx.rank == 3) {
          team.gatherv(&unused, 0, kInt32, &unused, none, none, kInt32, 0);
        } else {
          team.scatterv(&unused, none, none, kInt32, &unused, 0, kInt32, 0);
        }
      }
      team.barrier();
      ctx.fail("neither the empty calls nor the barrier raised the mismatch");
    } catch (const Error& e) {
      if (std::strstr(e.what(), "collective mismatch") == nullptr)
        ctx.fail("message \"%s\" lacks \"collective mismatch\"", e.what());
      int seen = shared->earliest.load();
      while (call < seen && !shared->earliest.compare_exchange_weak(seen, call)) {
      }
    }
  });
  const int window = static_cast<int>(DeferredChecks::kWindow);
  CHECK_MESSAGE(shared->earliest.load() <= 1 + window,
                "first raised in call " << shared->earliest.load());
  munmap(at, sizeof(Shared));
}

TEST_CASE("deferred checks: runs of empty v-form calls between calls that move data") {
  // Empty calls leave their comparisons for later; calls whose blocks are empty for some
  // ranks only make those ranks check the root's record later. With ranks falling behind now
  // and then, every block must still arrive and no comparison fail.
  run_deferred([](RankContext& ctx, const Options& deferred) {
    Team team(ctx.bootstrap, deferred);
    const auto none = uniform(0);
    int unused = 0;
    for (int i = 0; i < 300; ++i) {
      if (ctx.rank == i % kRanks && i % 37 == 0) usleep(5'000);
      const int root = (i / 3) % kRanks;
      if (i % 3 != 0) {
        team.scatterv(&unused, none, none, kInt32, &unused, 0, kInt32, root);
        team.gatherv(&unused, 0, kInt32, &unused, none, none, kInt32, root);
        continue;
      }
      // Rank r's block: r + i % 2 elements, so that some ranks' blocks are empty.
      std::vector<Count> counts(kRanks), displs(kRanks);
      Count total = 0;
      for (int r = 0; r < kRanks; ++r) {
        counts[static_cast<std::size_t>(r)] = (r + i) % 2 == 0 ? 0 : r + 1;
        displs[static_cast<std::size_t>(r)] = total;
        total += counts[static_cast<std::size_t>(r)];
      }
      const Count mine = counts[static_cast<std::size_t>(ctx.rank)];
      std::vector<int> send(static_cast<std::size_t>(total));
      for (Count k = 0; k < total; ++k)
        send[static_cast<std::size_t>(k)] = i * 1000 + static_cast<int>(k);
      std::vector<int> recv(static_cast<std::size_t>(mine) + 1, -1);
      team.scatterv(send.data(), counts, displs, kInt32, recv.data(), mine, kInt32, root);
      for (Count k = 0; k < mine; ++k) {
        const int want =
            i * 1000 + static_cast<int>(displs[static_cast<std::size_t>(ctx.rank)] + k);
        if (recv[static_cast<std::size_t>(k)] != want)
          ctx.fail("call %d: element %ld is %d, expected %d", i, static_cast<long>(k),
                   recv[static_cast<std::size_t>(k)], want);
      }
      std::vector<int> back(static_cast<std::size_t>(total), -1);
      team.gatherv(recv.data(), mine, kInt32, back.data(), counts, displs, kInt32, root);
      if (ctx.rank == root && back != send)
        ctx.fail("call %d: gatherv did not restore the blocks", i);
    }
    team.barrier();
  });
}

TEST_CASE("deferred checks: ranks far apart in a long run of calls compare through the history") {
  // Rank 0 falls behind by more calls than the history holds; the others must wait for it
  // before they overwrite what it has yet to read, and every comparison must still pass.
  Options deferred = test_options();
  deferred.checks = CheckLevel::kDeferred;
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = kRanks},
      [&](RankContext& ctx) {
        Team team(ctx.bootstrap, deferred);
        for (int i = 0; i < 200; ++i) {
          if (ctx.rank == 0 && i % 50 == 0) usleep(20'000);
          auto v = ints(kN, ctx.rank == i % kRanks ? i : -1);
          team.bcast(v.data(), kN, kInt32, i % kRanks);
          if (v[0] != i) ctx.fail("call %d: got %d", i, v[0]);
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("bad input: negative and overflowing counts and displacements") {
  run_case({"negative count",
            {"count = -3 is negative"},
            [](Team& t, RankContext&) {
              auto v = ints(kN);
              t.bcast(v.data(), -3, kInt32, 0);
            },
            Status::kInvalidArgument,
            Cause::kCount});
  run_case({"negative sendcounts entry",
            {"sendcounts[2] = -1 is negative"},
            [](Team& t, RankContext& ctx) {
              auto counts = uniform(kN);
              counts[2] = -1;
              auto displs = packed_displs(kN);
              auto send = ints(kRanks * kN);
              Untouched u(kN * 4);
              keeping(ctx, u, "scatterv recv", [&] {
                t.scatterv(send.data(), counts, displs, kInt32, u.data(), kN, kInt32, 0);
              });
            }});
  run_case({"negative displacement", {"displs[1] = -4 is negative"}, [](Team& t, RankContext&) {
              auto counts = uniform(kN);
              auto displs = packed_displs(kN);
              displs[1] = -4;
              auto send = ints(kN);
              auto recv = ints(kRanks * kN);
              t.gatherv(send.data(), kN, kInt32, recv.data(), counts, displs, kInt32, 0);
            }});
  run_case({"overflowing count", {"overflows"}, [](Team& t, RankContext&) {
              auto v = ints(kN);
              t.bcast(v.data(), Count{1} << 61, kInt64, 0);
            }});
  run_case({"overflowing displacement", {"displs[3]", "overflows"}, [](Team& t, RankContext&) {
              auto counts = uniform(kN);
              auto displs = packed_displs(kN);
              displs[3] = Count{1} << 61;
              auto send = ints(kRanks * kN);
              auto recv = ints(kN);
              t.scatterv(send.data(), counts, displs, kInt64, recv.data(), kN, kInt64, 0);
            }});
  run_case({"too few counts",
            {"sendcounts has 3 entries, the team has 4 ranks"},
            [](Team& t, RankContext&) {
              std::vector<Count> counts(3, kN), displs(3, 0);
              auto send = ints(kRanks * kN);
              auto recv = ints(kN);
              t.scatterv(send.data(), counts, displs, kInt32, recv.data(), kN, kInt32, 0);
            }});
}

TEST_CASE(
    "bad input: overlapping scatterv reads and gatherv writes, under full and deferred checks") {
  for (const CheckLevel checks : {CheckLevel::kFull, CheckLevel::kDeferred}) {
    Options options = test_options();
    options.checks = checks;
    run_case({"scatterv overlap",
              {"ranks 1 and 2 overlap", "read twice"},
              [](Team& t, RankContext&) {
                std::vector<Count> counts = uniform(kN), displs = packed_displs(kN);
                displs[2] = displs[1] + kN / 2;
                auto send = ints(kRanks * kN);
                auto recv = ints(kN);
                t.scatterv(send.data(), counts, displs, kInt32, recv.data(), kN, kInt32, 0);
              }},
             options);
    run_case({"gatherv overlap",
              {"overlap", "written twice"},
              [](Team& t, RankContext& ctx) {
                std::vector<Count> counts = uniform(kN), displs = packed_displs(kN);
                displs[3] = 0;
                auto send = ints(kN);
                Untouched u(kRanks * kN * 4);
                if (ctx.rank == 0) {
                  keeping(ctx, u, "gatherv recv", [&] {
                    t.gatherv(send.data(), kN, kInt32, u.data(), counts, displs, kInt32, 0);
                  });
                } else {
                  t.gatherv(send.data(), kN, kInt32, nullptr, {}, {}, kInt32, 0);
                }
              }},
             options);
  }
}

TEST_CASE("bad input: null buffers and in-place off the root") {
  run_case({"null bcast buffer",
            {"rank 1", "buffer is null but must hold 32 bytes"},
            [](Team& t, RankContext& ctx) {
              auto v = ints(kN);
              t.bcast(ctx.rank == 1 ? nullptr : v.data(), kN, kInt32, 0);
            },
            Status::kInvalidArgument,
            Cause::kBuffer});
  run_case({"null gather recvbuf at the root", {"recvbuf is null"}, [](Team& t, RankContext&) {
              auto v = ints(kN);
              t.gather(v.data(), kN, kInt32, nullptr, kN, kInt32, 0);
            }});
  run_case({"in_place on a non-root",
            {"rank 2", "in_place is only allowed at the root"},
            [](Team& t, RankContext& ctx) {
              auto recv = ints(kRanks * kN);
              if (ctx.rank == 2) {
                t.gather(in_place, recv.data(), kN, kInt32, 0);
              } else {
                t.gather(recv.data(), kN, kInt32, recv.data(), kN, kInt32, 0);
              }
            }});
}

TEST_CASE("bad input: ranks calling different collectives") {
  run_case({"bcast against gather", {"mismatch"}, [](Team& t, RankContext& ctx) {
              auto v = ints(kRanks * kN);
              if (ctx.rank == 1) {
                t.gather(v.data(), kN, kInt32, nullptr, 0, kInt32, 0);
              } else {
                t.bcast(v.data(), kN, kInt32, 0);
              }
            }});
  run_case({"scatter against barrier", {"mismatch"}, [](Team& t, RankContext& ctx) {
              auto v = ints(kRanks * kN);
              if (ctx.rank == 3) {
                t.barrier();
              } else {
                t.scatter(v.data(), kN, kInt32, v.data() + kN, kN, kInt32, 1);
              }
            }});
}

TEST_CASE("signatures are compared in bytes: different datatypes with equal bytes are fine") {
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = kRanks},
      [](RankContext& ctx) {
        Team team(ctx.bootstrap, test_options());
        std::vector<std::int32_t> send(kRanks * 4);
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<std::int32_t>(i);
        std::vector<std::int64_t> recv(2);
        team.scatter(send.data(), 4, kInt32, recv.data(), 2, kInt64, 0);
        std::int32_t got[4];
        std::memcpy(got, recv.data(), sizeof got);
        for (int i = 0; i < 4; ++i)
          ctx.check(got[i] == ctx.rank * 4 + i, "scatter int32 -> int64 content");
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

}  // namespace shmcoll::test

namespace shmcoll::test {

TEST_CASE("bad input: scatterv sizes that put root and receiver on two paths") {
  // A root whose blocks all fit in records and a receiver whose block fits take
  // InlineScattervOp, the others ScattervOp: a size mismatch across the two must still fail
  // every rank, under full checks and under deferred ones.
  for (const CheckLevel checks : {CheckLevel::kFull, CheckLevel::kDeferred}) {
    Options options = test_options();
    options.checks = checks;
    // Root sends `sent` ints to everyone; one receiver (`odd`) expects `expected` instead.
    struct Mismatch {
      const char* name;
      Count sent, expected;
      int odd;
    };
    for (const Mismatch m : {Mismatch{"inline root, streamed receiver", 2, 4000, 2},
                             Mismatch{"streamed root, inline receiver", 4000, 2, 1}}) {
      const std::string needle = "sendcounts[" + std::to_string(m.odd) + "]";
      run_case({m.name,
                {"mismatch", needle.c_str()},
                [m](Team& t, RankContext& ctx) {
                  std::vector<Count> counts(kRanks, m.sent), displs(kRanks);
                  for (int r = 0; r < kRanks; ++r) displs[static_cast<std::size_t>(r)] = r * m.sent;
                  auto send = ints(static_cast<std::size_t>(kRanks * m.sent));
                  const Count mine = ctx.rank == m.odd ? m.expected : m.sent;
                  std::vector<int> recv(4000);
                  t.scatterv(send.data(), counts, displs, kInt32, recv.data(), mine, kInt32, 0);
                }},
               options);
    }
  }
}

TEST_CASE("bad input: gatherv sizes that put a sender and the root on two paths") {
  // A flat sender whose block goes through its stream takes GathervSenderOp, one whose block
  // takes the single copy GathervOp; the root sees sizes only from recvcounts. 8 000 ints are
  // above the single-copy threshold, 2 below it: where cross-memory attach is allowed the
  // root and the sender then disagree on the path too.
  for (const CheckLevel checks : {CheckLevel::kFull, CheckLevel::kDeferred}) {
    Options options = test_options();
    options.checks = checks;
    for (const bool root_expects_more : {true, false}) {
      run_case({root_expects_more ? "root expects a single-copy block" : "sender sends one",
                {"mismatch", "recvcounts[1]"},
                [root_expects_more](Team& t, RankContext& ctx) {
                  constexpr Count kLarge = 8000, kSmall = 2;
                  const Count expected = root_expects_more ? kLarge : kSmall;
                  std::vector<Count> counts(kRanks, expected), displs(kRanks);
                  for (int r = 0; r < kRanks; ++r)
                    displs[static_cast<std::size_t>(r)] = r * expected;
                  const Count mine =
                      ctx.rank == 1 ? (root_expects_more ? kSmall : kLarge) : expected;
                  auto send = ints(static_cast<std::size_t>(mine));
                  std::vector<int> recv(static_cast<std::size_t>(kRanks * expected));
                  if (ctx.rank == 0) {
                    t.gatherv(send.data(), mine, kInt32, recv.data(), counts, displs, kInt32, 0);
                  } else {
                    t.gatherv(send.data(), mine, kInt32, nullptr, {}, {}, kInt32, 0);
                  }
                }},
               options);
    }
  }
}

TEST_CASE("bad input: a receiver that expects nothing from a multi-chunk scatterv") {
  // The root sends rank 1 several slots' worth while rank 1 expects 0 bytes: the root must not
  // wait for acknowledgements that will never come, and every rank must get the error.
  run_case({"scatterv zero receiver", {"mismatch"}, [](Team& t, RankContext& ctx) {
              std::vector<Count> counts(kRanks, 4000), displs(kRanks);
              for (int r = 0; r < kRanks; ++r) displs[static_cast<std::size_t>(r)] = r * 4000;
              auto send = ints(kRanks * 4000);
              const Count mine = ctx.rank == 1 ? 0 : 4000;
              std::vector<int> recv(4000);
              t.scatterv(send.data(), counts, displs, kInt32, recv.data(), mine, kInt32, 0);
            }});
}

}  // namespace shmcoll::test

namespace shmcoll::test {
namespace {

// A bootstrap that reports another rank or size than its position in the exchange.
class LyingBootstrap final : public Bootstrap {
 public:
  LyingBootstrap(Bootstrap& real, int rank, int size) : real_(real), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string job_id() const override { return real_.job_id(); }
  // Exchanges with the real participants and hands back as many contributions as it claims
  // there are ranks (a rank told the wrong team size).
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    std::vector<std::byte> everything(bytes * static_cast<std::size_t>(real_.size()));
    real_.allgather(mine, everything.data(), bytes);
    std::memcpy(all, everything.data(),
                bytes * static_cast<std::size_t>(std::min(size_, real_.size())));
  }

 private:
  Bootstrap& real_;
  int rank_, size_;
};

void expect_join_failure(int lie_rank, int lie_size, const char* needle) {
  std::string job;
  auto outcome = run_ranks(
      {.nranks = 3},
      [&](RankContext& ctx) {
        const bool liar = ctx.rank == 2;
        LyingBootstrap b(ctx.bootstrap, liar ? lie_rank : ctx.rank, liar ? lie_size : 3);
        try {
          Team team(b, test_options());
          ctx.fail("team formation succeeded");
        } catch (const InvalidArgument& e) {
          if (std::strstr(e.what(), needle) == nullptr)
            ctx.fail("message \"%s\" lacks \"%s\"", e.what(), needle);
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

}  // namespace

TEST_CASE("bad input: team size mismatch at join, on every rank") {
  // Rank 2 is told the team has 2 ranks: its exchange has the others' 3-rank size.
  expect_join_failure(1, 2, "team size mismatch at join");
}

TEST_CASE("bad input: the same rank joining twice, on every rank") {
  expect_join_failure(1, 3,
                      "joined as rank 1, which another process also claims (rank joined twice)");
}

TEST_CASE("bad input: a rank that skipped a collective is reported when the team ends") {
  // Deferred checks compare no operation a rank never called: rank 3 skips the second
  // broadcast, which the root leaves without waiting for it. The ranks that leave after rank 3
  // find the difference; rank 3, which leaves first, finds nothing to compare.
  Options options = test_options();
  options.checks = CheckLevel::kDeferred;
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = kRanks, .deadline_s = 60},
      [&](RankContext& ctx) {
        Team team(ctx.bootstrap, options);
        auto v = ints(kN);
        team.bcast(v.data(), kN, kInt32, 0);
        if (ctx.rank == 3) {
          team.leave();  // first, and with nothing to compare: no error
          return;
        }
        team.bcast(v.data(), kN, kInt32, 0);
        // After rank 3, one by one: rank 0 finds the difference, ranks 1 and 2 hear of it.
        std::this_thread::sleep_for(std::chrono::milliseconds(200 * (ctx.rank + 1)));
        try {
          team.leave();
          ctx.fail("leave() found no difference");
        } catch (const InvalidArgument& e) {
          const char* needle = "rank 3 after 1, rank 0 after 2 (seen by rank 0 as it left)";
          if (std::strstr(e.what(), needle) == nullptr)
            ctx.fail("message \"%s\" lacks \"%s\"", e.what(), needle);
          if (e.cause() != Cause::kCollectiveMismatch)
            ctx.fail("cause %d", static_cast<int>(e.cause()));
        }
        try {
          team.barrier();
          ctx.fail("a collective after leave() ran");
        } catch (const InvalidArgument&) {
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

}  // namespace shmcoll::test
