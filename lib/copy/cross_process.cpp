#include "copy/cross_process.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace shmcoll::copy {

void allow_peer_access() {
#ifdef PR_SET_PTRACER
  // Fails with EINVAL where Yama is not built in; CMA then needs no such permission.
  (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

namespace {

template <class Call>
int transfer(Call&& call, std::byte* local, std::uintptr_t remote, std::size_t bytes) {
  // The kernel may stop short (a fault part way, or a signal); go on from where it stopped.
  while (bytes > 0) {
    iovec here{local, bytes};
    iovec there{reinterpret_cast<void*>(remote), bytes};
    const ssize_t moved = call(&here, &there);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EFAULT;  // nothing moved and no error: the remote range ends here
    local += moved;
    remote += static_cast<std::uintptr_t>(moved);
    bytes -= static_cast<std::size_t>(moved);
  }
  return 0;
}

}  // namespace

int read_from(pid_t pid, const void* remote, void* local, std::size_t bytes) {
  return transfer(
      [pid](iovec* here, iovec* there) { return process_vm_readv(pid, here, 1, there, 1, 0); },
      static_cast<std::byte*>(local), reinterpret_cast<std::uintptr_t>(remote), bytes);
}

int write_to(pid_t pid, void* remote, const void* local, std::size_t bytes) {
  return transfer(
      [pid](iovec* here, iovec* there) { return process_vm_writev(pid, here, 1, there, 1, 0); },
      const_cast<std::byte*>(static_cast<const std::byte*>(local)),
      reinterpret_cast<std::uintptr_t>(remote), bytes);
}

std::uint64_t* ProbeWord::address() {
  static std::uint64_t word = kValue;
  return &word;
}

double measure_cross_copy_cost() {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  constexpr int kRounds = 4;
  std::vector<std::byte> source(kBytes, std::byte{1}), target(kBytes, std::byte{0});
  using Clock = std::chrono::steady_clock;
  double best_cma = 0, best_memcpy = 0;
  // The first round warms the pages and caches; only later rounds count.
  for (int round = 0; round <= kRounds; ++round) {
    const auto t0 = Clock::now();
    if (read_from(getpid(), source.data(), target.data(), kBytes) != 0) return 0;
    const auto t1 = Clock::now();
    std::memcpy(target.data(), source.data(), kBytes);
    // Keep the copy: the compiler may not drop it as dead.
    asm volatile("" : : "r"(target.data()) : "memory");
    const auto t2 = Clock::now();
    if (round == 0) continue;
    const double cma = std::chrono::duration<double>(t1 - t0).count();
    const double mem = std::chrono::duration<double>(t2 - t1).count();
    best_cma = round == 1 ? cma : std::min(best_cma, cma);
    best_memcpy = round == 1 ? mem : std::min(best_memcpy, mem);
  }
  return best_memcpy > 0 ? best_cma / best_memcpy : 0;
}

std::string probe(pid_t pid, std::uint64_t remote) {
  void* at = reinterpret_cast<void*>(remote);
  std::uint64_t value = 0;
  if (const int e = read_from(pid, at, &value, sizeof value); e != 0) {
    return std::string("process_vm_readv: ") + std::strerror(e);
  }
  if (value != ProbeWord::kValue) return "process_vm_readv read an unexpected value";
  if (const int e = write_to(pid, at, &value, sizeof value); e != 0) {
    return std::string("process_vm_writev: ") + std::strerror(e);
  }
  return {};
}

}  // namespace shmcoll::copy
