! The five non-blocking collectives called from Fortran and completed with Fortran's completion
! calls, with the MPI's mpif.h (the default), `use mpi` (-DUSE_MPI_MODULE) or `use mpi_f08`
! (-DUSE_MPI_F08); run with the plugin preloaded (test/mpi/CMakeLists.txt). Rank 0 starts
! exactly six collectives, so that under SHMCOLL_MPI_VERBOSE=1 its count line says "served 6
! calls, 0 went to PMPI". Rank 0 prints "fortran non-blocking: N failed"; the exit status is 1
! when N > 0.
program nonblocking
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_Request) :: requests(3)
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
  integer :: requests(3)
#else
  implicit none
  include 'mpif.h'
  integer :: requests(3)
#endif
  integer :: ierr, rank, nranks, i, r, failures, total, mine, token, index, outcount, done
  integer :: b(4), v(4), indices(3)
  integer, allocatable :: every(:), counts(:), displs(:), gathered(:)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  allocate(every(4 * nranks), counts(nranks), displs(nranks), gathered(4 * nranks))

  ! MPI_Ibcast, MPI_Wait.
  b = -1
  if (rank == 0) b = (/ 1, 2, 3, 4 /)
  call MPI_Ibcast(b, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Wait(requests(1), MPI_STATUS_IGNORE, ierr)
  call expect(ierr == MPI_SUCCESS .and. all(b == (/ 1, 2, 3, 4 /)), 'MPI_Ibcast + MPI_Wait')

  ! MPI_Igather, MPI_Test until done.
  b = (/ (10 * rank + i, i = 1, 4) /)
  every = -1
  call MPI_Igather(b, 4, MPI_INTEGER, every, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, requests(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(requests(1), flag, MPI_STATUS_IGNORE, ierr)
  end do
  if (rank == 0) then
    call expect(all(every == (/ ((10 * r + i, i = 1, 4), r = 0, nranks - 1) /)), &
                'MPI_Igather + MPI_Test')
  end if

  ! MPI_Iscatter between a receive and a send of this rank to itself, MPI_Waitall.
  every = (/ (i, i = 1, 4 * nranks) /)
  b = -1
  token = -1
  call MPI_Irecv(token, 1, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Iscatter(every, 4, MPI_INTEGER, b, 4, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, &
                    requests(2), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, requests(3), ierr)
  call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE, ierr)
  call expect(ierr == MPI_SUCCESS .and. token == rank .and. &
              all(b == (/ (4 * rank + i, i = 1, 4) /)), 'MPI_Iscatter + MPI_Waitall')

  ! MPI_Iscatterv and MPI_Igatherv outstanding together, MPI_Waitany for each.
  counts = (/ (min(r + 1, 4), r = 0, nranks - 1) /)
  displs(1) = 0
  do r = 2, nranks
    displs(r) = displs(r - 1) + counts(r - 1)
  end do
  mine = counts(rank + 1)
  every = (/ (100 + i, i = 1, 4 * nranks) /)
  v = (/ (1000 * rank + i, i = 1, 4) /)
  b = -1
  gathered = -1
  call MPI_Iscatterv(every, counts, displs, MPI_INTEGER, b, mine, MPI_INTEGER, 0, &
                     MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Igatherv(v, mine, MPI_INTEGER, gathered, counts, displs, MPI_INTEGER, 0, &
                    MPI_COMM_WORLD, requests(2), ierr)
  ! The indices are the MPI's own, not checked: MPICH 4.0.2's mpi_f08 counts them from 0.
  done = 0
  do i = 1, 2
    call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE, ierr)
    if (index /= MPI_UNDEFINED) done = done + 1
  end do
  call expect(done == 2, 'MPI_Waitany completes both')
  call expect(all(b(1:mine) == (/ (100 + displs(rank + 1) + i, i = 1, mine) /)), &
              'MPI_Iscatterv + MPI_Waitany')
  if (rank == 0) then
    do r = 0, nranks - 1
      call expect(all(gathered(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) == &
                      (/ (1000 * r + i, i = 1, counts(r + 1)) /)), 'MPI_Igatherv + MPI_Waitany')
    end do
  end if

  ! MPI_Ibcast, MPI_Testsome until it is done.
  b = -1
  if (rank == 0) b = (/ 5, 6, 7, 8 /)
  call MPI_Ibcast(b, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, requests(1), ierr)
  outcount = 0
  do while (outcount == 0)
    call MPI_Testsome(1, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  end do
  call expect(outcount == 1 .and. all(b == (/ 5, 6, 7, 8 /)), 'MPI_Ibcast + MPI_Testsome')

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', 'fortran non-blocking: ', total, ' failed'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

#include "expect.inc"

end program nonblocking
