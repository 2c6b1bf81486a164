// Single-copy transfers between processes of one team: Linux cross-memory attach (CMA),
// process_vm_readv / process_vm_writev. The kernel copies straight from one process's pages to
// the other's, so a large message crosses the memory system once instead of twice (copy in to
// a shared slot, copy out of it).
//
// CMA needs ptrace-level permission over the peer: the same user, no seccomp filter against
// the calls, and under Yama's ptrace_scope=1 an explicit "any process of mine may trace me"
// (allow_peer_access). Teams probe it once at formation (TeamImpl::form) and fall back to the
// slot path when any pair fails.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace shmcoll::copy {

// Lets processes of the same user read and write this one with CMA when Yama restricts ptrace
// to descendants. Harmless (and ignored) where Yama is absent.
void allow_peer_access();

// Copies `bytes` from `remote` in process `pid` to `local` (read) or from `local` to `remote`
// (write), looping over partial transfers. Returns 0 or the errno of the failing call.
int read_from(pid_t pid, const void* remote, void* local, std::size_t bytes);
int write_to(pid_t pid, void* remote, const void* local, std::size_t bytes);

// A word every process exposes for the formation probe: a peer reads it and writes the same
// value back, which exercises both directions without changing anything.
struct ProbeWord {
  static constexpr std::uint64_t kValue = 0x45424f5250414d43ull;  // "CMAPROBE"
  static std::uint64_t* address();
};

// Probes CMA with process `pid` whose ProbeWord lives at `remote`. Returns an empty string
// when both directions work, else what failed (for the log and the error text).
std::string probe(pid_t pid, std::uint64_t remote);

// How many times longer a cross-memory copy takes than memcpy, per byte, on this machine:
// process_vm_readv from this process itself (the kernel's path is the same as from a peer: pin
// the source pages, copy) against memcpy, 1 MiB each way in alternating rounds, on buffers of
// 4 KiB pages (huge pages would cost CMA far less, and whether an allocation gets them depends
// on the process's history). The median of the rounds' ratios, so that a round in which the
// process lost its CPU counts as one outlier whatever its length; more rounds are measured while
// that median lies near `decisive_ratio` (the ratio at which a caller's choice changes). 0 if
// CMA fails here. About 1-3 ms. The ratio varies between
// machines (docs/tuning.md), and sets how a cooperative single copy splits its work
// (SingleCopyExchange).
double measure_cross_copy_cost(double decisive_ratio);

// The rule measure_cross_copy_cost applies to the ratios of the rounds measured so far: their
// median once it lies outside [decisive / kMargin, decisive * kMargin] with at least kFirstRounds
// measured, or after kMaxRounds whatever it is; nullopt while more rounds are needed.
struct CrossCopyRounds {
  static constexpr std::size_t kFirstRounds = 5;
  static constexpr std::size_t kMaxRounds = 15;
  static constexpr double kMargin = 1.15;
  static std::optional<double> settled(std::span<const double> ratios, double decisive_ratio);
};

}  // namespace shmcoll::copy
