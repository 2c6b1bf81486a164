! A large-count broadcast from `use mpi_f08` (an integer(MPI_COUNT_KIND) count: MPICH's
! Fortran layer calls MPI_Bcast_c), run with the plugin preloaded (test/mpi/CMakeLists.txt):
! rank 0's count line under SHMCOLL_MPI_VERBOSE=1 says "served 1 calls, 0 went to PMPI". Rank 0
! prints "fortran large-count: N failed"; the exit status is 1 when N > 0.
program large_count
  use mpi_f08
  implicit none
  integer :: ierr, rank, i, failures, total
  integer(kind=MPI_COUNT_KIND) :: count
  integer :: b(1000)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  failures = 0
  b = -1
  if (rank == 0) b = (/ (i, i = 1, 1000) /)
  count = 1000
  call MPI_Bcast(b, count, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS .and. all(b == (/ (i, i = 1, 1000) /)), 'MPI_Bcast (MPI_Bcast_c)')

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', 'fortran large-count: ', total, ' failed'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

#include "expect.inc"

end program large_count
