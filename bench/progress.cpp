#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace shmcoll::bench {

ProgressLine::ProgressLine()
    : shown_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressLine::update(const std::string& where, double fraction) {
  if (!shown_ || fraction <= 0) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double left = elapsed / fraction * (1 - fraction);
  std::fprintf(stderr, "\r\033[K%s, %.0f s, about %.0f s left", where.c_str(), elapsed, left);
  std::fflush(stderr);
}

}  // namespace shmcoll::bench
