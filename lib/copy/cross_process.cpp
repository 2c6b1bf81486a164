#include "copy/cross_process.hpp"

#include <sys/mman.h>
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

namespace {

// Anonymous pages that stay 4 KiB ones (MADV_NOHUGEPAGE), filled with `fill`.
class SmallPages {
 public:
  SmallPages(std::size_t bytes, int fill) : bytes_(bytes) {
    void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) return;
    data_ = static_cast<std::byte*>(at);
    (void)madvise(data_, bytes, MADV_NOHUGEPAGE);  // refused only where THP does not exist
    std::memset(data_, fill, bytes);
  }
  SmallPages(const SmallPages&) = delete;
  SmallPages& operator=(const SmallPages&) = delete;
  ~SmallPages() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  std::byte* data() const { return data_; }

 private:
  std::size_t bytes_;
  std::byte* data_ = nullptr;
};

double median(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  return sorted.size() % 2 != 0 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

}  // namespace

double measure_cross_copy_cost(double decisive_ratio) {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  const SmallPages source(kBytes, 1), target(kBytes, 0);
  if (source.data() == nullptr || target.data() == nullptr) return 0;
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::vector<double> ratios;
  // Round 0 warms the pages and caches; only later rounds count.
  for (std::size_t round = 0; round <= CrossCopyRounds::kMaxRounds; ++round) {
    const auto t0 = Clock::now();
    if (read_from(getpid(), source.data(), target.data(), kBytes) != 0) return 0;
    const auto t1 = Clock::now();
    std::memcpy(target.data(), source.data(), kBytes);
    // Keep the copy: the compiler may not drop it as dead.
    asm volatile("" : : "r"(target.data()) : "memory");
    const auto t2 = Clock::now();
    if (round == 0 || t2 == t1) continue;
    ratios.push_back(seconds(t1 - t0) / seconds(t2 - t1));
    if (const auto cost = CrossCopyRounds::settled(ratios, decisive_ratio)) return *cost;
  }
  return ratios.empty() ? 0 : median(ratios);
}

std::optional<double> CrossCopyRounds::settled(std::span<const double> ratios,
                                               double decisive_ratio) {
  if (ratios.size() < kFirstRounds) return std::nullopt;
  const double cost = median(ratios);
  const bool clear = cost < decisive_ratio / kMargin || cost > decisive_ratio * kMargin;
  if (clear || ratios.size() >= kMaxRounds) return cost;
  return std::nullopt;
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
