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

// How many times longer a cross-memory copy takes than memcpy, per byte, on this machine now:
// the best of a few 1 MiB copies each way, process_vm_readv from this process itself (the
// kernel's path is the same as from a peer: pin the source pages, copy). 0 if CMA fails here.
// About a millisecond. The ratio varies between machines (about 1.25 on one 2-core VM, 3-4 on
// another), and sets how a cooperative single copy splits its work (SingleCopyExchange).
double measure_cross_copy_cost();

}  // namespace shmcoll::copy
