! The five collectives called from Fortran, with the MPI's mpif.h (the default), its `use mpi`
! module (-DUSE_MPI_MODULE) or its `use mpi_f08` module (-DUSE_MPI_F08); run with the plugin
! preloaded (test/mpi/CMakeLists.txt). Rank 0 calls exactly five collectives, so that under
! SHMCOLL_MPI_VERBOSE=1 its count line says "served 5 calls, 0 went to PMPI"; MPI_IN_PLACE at
! the root, as a send buffer (gather) and as a receive buffer (scatterv). Rank 0 prints
! "fortran collectives: N failed"; the exit status is 1 when N > 0.
program collectives
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer :: ierr, rank, nranks, i, r, failures, total, mine
  integer :: b(4)
  integer, allocatable :: every(:), counts(:), displs(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  allocate(every(4 * nranks), counts(nranks), displs(nranks))

  ! Broadcast from rank 0.
  b = -1
  if (rank == 0) b = (/ 1, 2, 3, 4 /)
  call MPI_Bcast(b, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS .and. all(b == (/ 1, 2, 3, 4 /)), 'MPI_Bcast')

  ! Scatter from the last rank.
  every = (/ (i, i = 1, 4 * nranks) /)
  b = -1
  call MPI_Scatter(every, 4, MPI_INTEGER, b, 4, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS .and. all(b == (/ (4 * rank + i, i = 1, 4) /)), 'MPI_Scatter')

  ! Gather to rank 0, in place there.
  b = (/ (10 * rank + i, i = 1, 4) /)
  every = -1
  if (rank == 0) then
    every(1:4) = b
    call MPI_Gather(MPI_IN_PLACE, 0, MPI_INTEGER, every, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call expect(ierr == MPI_SUCCESS .and. &
                all(every == (/ ((10 * r + i, i = 1, 4), r = 0, nranks - 1) /)), 'MPI_Gather')
  else
    call MPI_Gather(b, 4, MPI_INTEGER, every, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_Gather')
  end if

  ! Scatterv from rank 0, in place there: rank r gets r + 1 elements (at most 4).
  counts = (/ (min(r + 1, 4), r = 0, nranks - 1) /)
  displs(1) = 0
  do r = 2, nranks
    displs(r) = displs(r - 1) + counts(r - 1)
  end do
  mine = counts(rank + 1)
  b = -1
  if (rank == 0) then
    every = (/ (100 + i, i = 1, 4 * nranks) /)
    call MPI_Scatterv(every, counts, displs, MPI_INTEGER, MPI_IN_PLACE, 0, MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, ierr)
    call expect(ierr == MPI_SUCCESS .and. every(1) == 101, 'MPI_Scatterv')
  else
    call MPI_Scatterv(every, counts, displs, MPI_INTEGER, b, mine, MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, ierr)
    call expect(ierr == MPI_SUCCESS .and. &
                all(b(1:mine) == (/ (100 + displs(rank + 1) + i, i = 1, mine) /)), 'MPI_Scatterv')
  end if

  ! Gatherv to rank 0 of the same blocks.
  b = (/ (1000 * rank + i, i = 1, 4) /)
  every = -1
  call MPI_Gatherv(b, mine, MPI_INTEGER, every, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do r = 0, nranks - 1
      call expect(all(every(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) == &
                      (/ (1000 * r + i, i = 1, counts(r + 1)) /)), 'MPI_Gatherv')
    end do
  end if
  call expect(ierr == MPI_SUCCESS, 'MPI_Gatherv')

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', 'fortran collectives: ', total, ' failed'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

#include "expect.inc"

end program collectives
