#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "bootstrap/wire.hpp"
#include "shmcoll/bootstrap.hpp"
#include "shmcoll/error.hpp"

namespace shmcoll {

void Bootstrap::barrier() {
  char none = 0;
  std::vector<char> all(static_cast<std::size_t>(size()));
  allgather(&none, all.data(), 1);
}

SocketBootstrap::SocketBootstrap(int fd, int rank, int size, std::string job_id, double timeout_s)
    : fd_(fd), rank_(rank), size_(size), job_id_(std::move(job_id)), timeout_s_(timeout_s) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw BootstrapError("bootstrap: rank " + std::to_string(rank) + " is outside a team of size " +
                         std::to_string(size));
  }
}

SocketBootstrap::~SocketBootstrap() {
  if (fd_ >= 0) close(fd_);
}

std::unique_ptr<SocketBootstrap> SocketBootstrap::from_environment(double timeout_s) {
  auto need = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
      throw BootstrapError(std::string("bootstrap: ") + name +
                           " is not set; start the program with shmcoll-run");
    }
    return v;
  };
  auto number = [&](const char* name) {
    const std::string v = need(name);
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n < 0 || n > (1 << 24)) {
      throw BootstrapError(std::string("bootstrap: ") + name + "='" + v +
                           "' is not a valid number");
    }
    return static_cast<int>(n);
  };
  return std::make_unique<SocketBootstrap>(number(kFdVariable), number(kRankVariable),
                                           number(kSizeVariable), need(kJobVariable), timeout_s);
}

void SocketBootstrap::allgather(const void* mine, void* all, std::size_t bytes) {
  using namespace bootstrap;
  const std::string who = "bootstrap allgather on rank " + std::to_string(rank_);
  if (!send_frame(fd_, MessageType::kAllgather, mine, bytes)) {
    throw BootstrapError(who + ": the launcher's hub is gone");
  }
  const std::int64_t deadline = steady_now_ns() + static_cast<std::int64_t>(timeout_s_ * 1e9);
  FrameHeader h;
  std::string err = read_exact(fd_, &h, sizeof h, deadline);
  if (err == "timed out") {
    throw Timeout(who + ": no reply within " + std::to_string(timeout_s_) +
                  " s (a rank has not joined)");
  }
  if (!err.empty()) throw BootstrapError(who + ": " + err);
  if (h.magic != FrameHeader::kMagic) throw BootstrapError(who + ": corrupt reply");
  if (h.type == static_cast<std::uint32_t>(MessageType::kError)) {
    std::string reason(std::min<std::uint64_t>(h.length, 4096), '\0');
    read_exact(fd_, reason.data(), reason.size(), deadline);
    throw BootstrapError(who + ": " + reason);
  }
  if (h.type != static_cast<std::uint32_t>(MessageType::kAllgatherResult) ||
      h.length != bytes * static_cast<std::uint64_t>(size_)) {
    throw BootstrapError(who + ": unexpected reply of " + std::to_string(h.length) + " bytes");
  }
  err = read_exact(fd_, all, h.length, deadline);
  if (!err.empty()) throw BootstrapError(who + ": " + err);
}

}  // namespace shmcoll
