#include "support/ranks.hpp"

#include "shmcoll/introspection.hpp"

namespace shmcoll::test {

void RankContext::fail(const char* fmt, ...) {
  if (++failures > 20) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[rank %d/%d] FAILED: %s\n", rank, size, buf);
}

launch::JobOutcome run_ranks(const JobSpec& spec, const std::function<void(RankContext&)>& body,
                             std::string* job_id) {
  const std::string id = launch::make_job_id();
  if (job_id != nullptr) *job_id = id;
  launch::JobOptions options;
  options.nranks = spec.nranks;
  options.deadline_s = spec.deadline_s;
  options.stop_on_failure = spec.stop_on_failure;
  options.kill_grace_s = 0.5;
  return launch::run_job(options, [&](int rank, int fd) {
    SocketBootstrap bootstrap(fd, rank, spec.nranks, id, spec.bootstrap_timeout_s);
    RankContext ctx{rank, spec.nranks, bootstrap};
    try {
      body(ctx);
    } catch (const std::exception& e) {
      ctx.fail("unexpected exception: %s", e.what());
    }
    return ctx.failures == 0 ? 0 : 1;
  });
}

std::vector<std::string> leftover_segments(const std::string& job_id) {
  return introspection::job_segments(job_id);
}

Options test_options(std::size_t slot_bytes, int slots) {
  Options o;
  o.slot_bytes = slot_bytes;
  o.slots = slots;
  o.timeout_s = 15;
  o.checks = CheckLevel::kFull;
  return o;
}

}  // namespace shmcoll::test
