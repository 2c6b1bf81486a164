// A shmcoll bootstrap over an MPI communicator, through PMPI (never the intercepted names).
#pragma once

#include <mpi.h>

#include "shmcoll/bootstrap.hpp"

namespace shmcoll::mpi {

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(MPI_Comm comm);  // collective over comm: agrees on a job id
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string job_id() const override { return job_id_; }
  void allgather(const void* mine, void* all, std::size_t bytes) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
  std::string job_id_;
};

}  // namespace shmcoll::mpi
