// A progress line on stderr for long runs, rewritten in place ("cell 12/64, 10 s, about 30 s
// left"); silent when stderr is not a terminal, so that logs and pipes get no control
// characters.
#pragma once

#include <chrono>
#include <string>

namespace shmcoll::bench {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `where`: what is done, e.g. "cell 12/64"; `fraction`: the share of the expected time
  // that is done (0 to 1), from which the time left is extrapolated.
  void update(const std::string& where, double fraction);

 private:
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace shmcoll::bench
