// A bootstrap for teams whose ranks are threads of one process (tests of thread safety: each
// thread forms and uses its own team, as MPI_THREAD_MULTIPLE programs do with communicators).
#pragma once

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shmcoll/bootstrap.hpp"

namespace shmcoll::test {

// The state the threads of one team share: an allgather buffer, reused round after round.
class ThreadExchange {
 public:
  ThreadExchange(int size, std::string job_id) : size_(size), job_id_(std::move(job_id)) {}

  void allgather(int rank, const void* mine, void* all, std::size_t bytes) {
    std::unique_lock lock(mutex_);
    // Wait until the previous round's results were collected by everyone.
    changed_.wait(lock, [&] { return leaving_ == 0; });
    if (buffer_.size() != static_cast<std::size_t>(size_) * bytes) {
      buffer_.assign(static_cast<std::size_t>(size_) * bytes, 0);
    }
    std::memcpy(buffer_.data() + static_cast<std::size_t>(rank) * bytes, mine, bytes);
    const std::uint64_t round = round_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      leaving_ = size_;
      ++round_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return round_ != round; });
    }
    std::memcpy(all, buffer_.data(), static_cast<std::size_t>(size_) * bytes);
    if (--leaving_ == 0) changed_.notify_all();
  }
  const std::string& job_id() const { return job_id_; }
  int size() const { return size_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int size_;
  std::string job_id_;
  std::vector<unsigned char> buffer_;
  int arrived_ = 0;
  int leaving_ = 0;
  std::uint64_t round_ = 0;
};

class ThreadBootstrap final : public Bootstrap {
 public:
  ThreadBootstrap(std::shared_ptr<ThreadExchange> exchange, int rank)
      : exchange_(std::move(exchange)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return exchange_->size(); }
  std::string job_id() const override { return exchange_->job_id(); }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    exchange_->allgather(rank_, mine, all, bytes);
  }

 private:
  std::shared_ptr<ThreadExchange> exchange_;
  int rank_;
};

}  // namespace shmcoll::test
