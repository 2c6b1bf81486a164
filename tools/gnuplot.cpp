#include "gnuplot.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace shmcoll::tools {

std::string run_gnuplot(const std::string& script) {
  // "command -v" first: popen succeeds without gnuplot too (the shell starts), and writing to
  // a shell that has exited would end this process with SIGPIPE mid-line.
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot is not installed (the setup script installs gnuplot-nox)";
  FILE* gp = popen("gnuplot 2>&1", "w");
  if (gp == nullptr) return "cannot start gnuplot";
  // Should gnuplot still stop early, the write fails with EPIPE instead of a signal.
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  std::fwrite(script.data(), 1, script.size(), gp);
  const int status = pclose(gp);
  sigaction(SIGPIPE, &previous, nullptr);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return "gnuplot failed on the script (its messages are above)";
  }
  return "";
}

std::string gnuplot_quoted(std::string text) {
  std::replace(text.begin(), text.end(), '\'', '"');
  return "'" + text + "'";
}

}  // namespace shmcoll::tools
