// Runs a function in a forked child, for tests that change process-wide state the test runner
// must keep (credentials, mount namespace). The child prints what went wrong itself; its exit
// code is the result.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

namespace shmcoll::test {

// Exit code of `body()` run in a child (0: success), or 128 + signal if the child was killed,
// 127 if it threw.
template <class Body>
int run_in_child(Body&& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return 126;
  if (pid == 0) {
    int code = 127;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: uncaught exception: %s\n", e.what());
    }
    std::fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace shmcoll::test
