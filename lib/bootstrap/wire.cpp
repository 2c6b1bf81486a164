#include "bootstrap/wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace shmcoll::bootstrap {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
bool write_all(int fd, const void* data, std::size_t length) {
  const char* p = static_cast<const char*>(data);
  while (length > 0) {
    // MSG_NOSIGNAL: a vanished peer is an error return, not a SIGPIPE that kills us.
    ssize_t n = send(fd, p, length, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, POLLOUT, 0};
      poll(&pfd, 1, 100);
      continue;
    }
    if (n <= 0) return false;
    p += n;
    length -= static_cast<std::size_t>(n);
  }
  return true;
}
}  // namespace

bool send_frame(int fd, MessageType type, const void* payload, std::size_t length) {
  FrameHeader h;
  h.type = static_cast<std::uint32_t>(type);
  h.length = length;
  return write_all(fd, &h, sizeof h) && (length == 0 || write_all(fd, payload, length));
}

std::string read_exact(int fd, void* out, std::size_t length, std::int64_t deadline_ns) {
  char* p = static_cast<char*>(out);
  while (length > 0) {
    int wait_ms = -1;
    if (deadline_ns >= 0) {
      const std::int64_t left = deadline_ns - steady_now_ns();
      if (left <= 0) return "timed out";
      wait_ms = static_cast<int>(left / 1000000 + 1);
    }
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return std::string("poll: ") + std::strerror(errno);
    if (r == 0) continue;  // deadline re-checked above
    ssize_t n = read(fd, p, length);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return std::string("read: ") + std::strerror(errno);
    if (n == 0) return "connection closed";
    p += n;
    length -= static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace shmcoll::bootstrap
