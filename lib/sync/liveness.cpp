#include "sync/liveness.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace shmcoll::sync {

bool process_alive(pid_t pid) {
  if (kill(pid, 0) == -1 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return errno != ENOENT;  // unreadable /proc: trust kill()
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // Format: "pid (comm) S ..."; comm may contain spaces and parentheses, so find the last ')'.
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr || close[1] == '\0' || close[2] == '\0') return true;
  const char state = close[2];
  return state != 'Z' && state != 'X';
}

unsigned long long process_start_ticks(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr) return 0;
  // Fields after the command, from field 3 (state) on; the start time is field 22.
  unsigned long long ticks = 0;
  const int got = std::sscanf(close + 1,
                              " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                              "%*d %*d %*d %llu",
                              &ticks);
  return got == 1 ? ticks : 0;
}

}  // namespace shmcoll::sync
