// shmcoll-run as a user sees it: exit statuses, output, stopping the job when a rank dies,
// --timeout, --help, and no segment left behind.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Run {
  int status = -1;
  std::string output;
};

// Runs a shell command; returns its exit status (-1 if a signal ended it) and its output.
Run run_command(const std::string& cmd) {
  Run r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.output += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

Run run(const std::string& args) { return run_command(std::string(SHMCOLL_RUN_PATH) + " " + args); }

// shmcoll segments left in /dev/shm. Tests running beside this one form teams too, whose
// segments exist for the few milliseconds of formation: only names present now and again a
// second later count as left behind.
std::string shm_entries() {
  const std::string list = "ls /dev/shm | grep '^shmcoll-' || true";
  const std::string first = run_command(list).output;
  if (first.empty()) return first;
  sleep(1);
  const std::string second = run_command(list).output;
  std::string both;
  for (std::size_t at = 0, end; at < first.size(); at = end + 1) {
    end = first.find('\n', at);
    if (end == std::string::npos) end = first.size();
    const std::string name = first.substr(at, end - at + 1);  // with its newline
    if (second.find(name) != std::string::npos) both += name;
  }
  return both;
}

const std::string kProgram = RANK_PROGRAM_PATH;

}  // namespace

TEST_CASE("shmcoll-run: a good job exits 0 and its output comes through") {
  for (const char* bind : {"none", "core"}) {
    const Run r = run(std::string("-n 4 --bind ") + bind + " -- " + kProgram + " ok");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find("rank_program: 4 ranks ok") != std::string::npos);
  }
  CHECK(shm_entries().empty());
}

TEST_CASE("shmcoll-run: a rank killed mid-job fails the job, naming it, within bounded time") {
  const Run r = run("-n 3 --timeout 30 -- " + kProgram + " die 1");
  INFO(r.output);
  CHECK(r.status == 128 + 9);
  CHECK(r.output.find("rank 1") != std::string::npos);
  CHECK(r.output.find("signal 9") != std::string::npos);
  CHECK(shm_entries().empty());
}

TEST_CASE("shmcoll-run: a rank's exit status is the job's") {
  const Run r = run("-n 3 -- " + kProgram + " exit 2 7");
  INFO(r.output);
  CHECK(r.status == 7);
  CHECK(r.output.find("rank 2") != std::string::npos);
  CHECK(shm_entries().empty());
}

TEST_CASE("shmcoll-run: --timeout kills a job that runs too long") {
  const Run r = run("-n 2 --timeout 1 -- " + kProgram + " sleep");
  CHECK(r.status == 124);
  CHECK(r.output.find("--timeout") != std::string::npos);
}

TEST_CASE("shmcoll-run: --bind and --map-by hold each rank where they say") {
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  auto cpus_of = [](const Run& r, int rank) {
    const std::string key = "rank " + std::to_string(rank) + " cpus ";
    const auto at = r.output.find(key);
    return at == std::string::npos ? -1 : std::atoi(r.output.c_str() + at + key.size());
  };
  const Run core = run("-n 2 --bind core -- " + kProgram + " affinity");
  INFO(core.output);
  CHECK(core.status == 0);
  CHECK(cpus_of(core, 0) == 1);  // one core (one PU here)
  CHECK(cpus_of(core, 1) == 1);
  const Run numa = run("-n 2 --bind numa --map-by numa -- " + kProgram + " affinity");
  INFO(numa.output);
  CHECK(numa.status == 0);
  CHECK(cpus_of(numa, 0) >= 1);  // the whole NUMA node: every CPU on a single-node machine
  const Run none = run("-n 2 --bind none -- " + kProgram + " affinity");
  CHECK(cpus_of(none, 1) == cpus);
  CHECK(run("-n 2 --map-by socket -- true").status == 2);
}

TEST_CASE("shmcoll-run: Ctrl-C stops the whole job") {
  const Run r = run_command("timeout --preserve-status -s INT 1 " + std::string(SHMCOLL_RUN_PATH) +
                            " -n 3 -- " + kProgram + " sleep");
  INFO(r.output);
  CHECK(r.status == 130);
  CHECK(r.output.find("interrupted") != std::string::npos);
  CHECK(shm_entries().empty());
}

TEST_CASE("shmcoll-run: SIGTERM stops the whole job with status 143") {
  const Run r = run_command("timeout --preserve-status -s TERM 1 " + std::string(SHMCOLL_RUN_PATH) +
                            " -n 3 -- " + kProgram + " sleep");
  INFO(r.output);
  CHECK(r.status == 143);
  CHECK(r.output.find("SIGTERM") != std::string::npos);
}

namespace {

// True while `pid` is a process that has not ended (a zombie has ended).
bool process_alive(pid_t pid) {
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  FILE* f = std::fopen(stat.c_str(), "r");
  if (f == nullptr) return false;
  char state = '?';
  const int got = std::fscanf(f, "%*d (%*[^)]) %c", &state);
  std::fclose(f);
  return got == 1 && state != 'Z' && state != 'X';
}

}  // namespace

TEST_CASE("shmcoll-run: the ranks die with a launcher killed by SIGKILL") {
  // The launcher in the background; its ranks' pids come from their output.
  const std::string out = "/tmp/shmcoll-launcher-kill-" + std::to_string(getpid()) + ".txt";
  const Run started = run_command("(" + std::string(SHMCOLL_RUN_PATH) + " -n 3 -- " + kProgram +
                                  " hang > " + out + " 2>&1 & echo $!)");
  const pid_t launcher = static_cast<pid_t>(std::atoi(started.output.c_str()));
  REQUIRE(launcher > 0);
  std::vector<pid_t> ranks;
  for (int tries = 0; tries < 300 && ranks.size() < 3; ++tries) {  // up to 30 s under load
    usleep(100'000);
    ranks.clear();
    if (FILE* f = std::fopen(out.c_str(), "r")) {
      int rank = 0, pid = 0;
      while (std::fscanf(f, "rank %d pid %d waiting\n", &rank, &pid) == 2) ranks.push_back(pid);
      std::fclose(f);
    }
  }
  REQUIRE(ranks.size() == 3);
  REQUIRE(kill(launcher, SIGKILL) == 0);
  // Every rank gone within a second of the launcher.
  bool any_alive = true;
  for (int tries = 0; tries < 20 && any_alive; ++tries) {
    usleep(50'000);
    any_alive = false;
    for (pid_t pid : ranks) any_alive = any_alive || process_alive(pid);
  }
  for (pid_t pid : ranks) {
    INFO("rank pid " << pid);
    CHECK_FALSE(process_alive(pid));
    if (process_alive(pid)) kill(pid, SIGKILL);
  }
  std::remove(out.c_str());
}

TEST_CASE("shmcoll-run: a SHMCOLL_* variable that shmcoll does not read gets a warning") {
  const Run r = run_command("SHMCOLL_SLOT_BYTE=4K SHMCOLL_MPI_VERBOSE=1 " +
                            std::string(SHMCOLL_RUN_PATH) + " -n 2 -- " + kProgram + " ok");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("shmcoll-run: warning: SHMCOLL_SLOT_BYTE is not a shmcoll variable (did "
                      "you mean SHMCOLL_SLOT_BYTES?); ignored") != std::string::npos);
  CHECK(r.output.find("SHMCOLL_MPI_VERBOSE is not") == std::string::npos);  // the plugin's
}

TEST_CASE("shmcoll-run: --help and bad usage") {
  const Run help = run("--help");
  CHECK(help.status == 0);
  for (const char* word : {"--bind", "--timeout", "SHMCOLL_RANK", "Exit status"})
    CHECK(help.output.find(word) != std::string::npos);
  CHECK(run("-n 0 -- true").status == 2);
  CHECK(run("--bind socket -n 2 -- true").status == 2);
  CHECK(run("-n 2").status == 2);
  CHECK(run("-n 2 -- /nonexistent/program").status == 127);
}
