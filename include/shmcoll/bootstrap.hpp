// The out-of-band exchange a team is formed over (like UCC's OOB allgather): rank, size, a job
// identity and a blocking allgather. The launcher's ranks and forked test ranks both talk to a
// hub process over a stream socket; other runtimes (the MPI plugin) implement their own.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "shmcoll/export.hpp"

namespace shmcoll {

class SHMCOLL_API Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Identifies the job; used in segment names, together with randomness, so that concurrent
  // jobs of one user never collide.
  virtual std::string job_id() const = 0;
  // Every rank contributes `bytes` bytes; `all` receives size() * bytes, ordered by rank.
  virtual void allgather(const void* mine, void* all, std::size_t bytes) = 0;
  virtual void barrier();
};

// A bootstrap over a connected stream socket to a hub (see lib/launch). Errors and a hub that
// disappears raise BootstrapError; a wait longer than `timeout_s` raises Timeout.
class SHMCOLL_API SocketBootstrap final : public Bootstrap {
 public:
  SocketBootstrap(int fd, int rank, int size, std::string job_id, double timeout_s = 60.0);
  ~SocketBootstrap() override;
  SocketBootstrap(const SocketBootstrap&) = delete;
  SocketBootstrap& operator=(const SocketBootstrap&) = delete;

  // The variables shmcoll-run gives each rank, which from_environment reads.
  static constexpr const char* kRankVariable = "SHMCOLL_RANK";
  static constexpr const char* kSizeVariable = "SHMCOLL_SIZE";
  static constexpr const char* kJobVariable = "SHMCOLL_JOB";
  static constexpr const char* kFdVariable = "SHMCOLL_BOOTSTRAP_FD";

  // The bootstrap of a rank started by shmcoll-run, from the four variables above.
  static std::unique_ptr<SocketBootstrap> from_environment(double timeout_s = 60.0);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string job_id() const override { return job_id_; }
  void allgather(const void* mine, void* all, std::size_t bytes) override;

 private:
  int fd_;
  int rank_;
  int size_;
  std::string job_id_;
  double timeout_s_;
};

}  // namespace shmcoll
