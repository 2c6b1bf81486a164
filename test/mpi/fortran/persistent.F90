! Persistent collectives called from Fortran (MPI-4: MPICH 4; Open MPI 4's MPIX_ extension with
! -DOMPI_PCOLLREQ), started with MPI_Start and MPI_Startall and completed with Fortran's
! completion calls, with the MPI's mpif.h (the default), `use mpi` (-DUSE_MPI_MODULE) or
! `use mpi_f08` (-DUSE_MPI_F08); run with the plugin
! preloaded (test/mpi/CMakeLists.txt). Rank 0 makes exactly three inits and four starts, so that
! under SHMCOLL_MPI_VERBOSE=1 its count line says "served 7 calls, 0 went to PMPI". Rank 0
! prints "fortran persistent: N failed"; the exit status is 1 when N > 0.
#if defined(OMPI_PCOLLREQ)
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Gather_init MPIX_Gather_init
#define MPI_Scatterv_init MPIX_Scatterv_init
#endif
program persistent
#if defined(USE_MPI_F08)
  use mpi_f08
#if defined(OMPI_PCOLLREQ)
  use mpi_f08_ext
#endif
  implicit none
  type(MPI_Request) :: bcast, both(2)
#elif defined(USE_MPI_MODULE)
  use mpi
#if defined(OMPI_PCOLLREQ)
  use mpi_ext
#endif
  implicit none
  integer :: bcast, both(2)
#else
  implicit none
  include 'mpif.h'
#if defined(OMPI_PCOLLREQ)
  include 'mpif-ext.h'
#endif
  integer :: bcast, both(2)
#endif
  integer :: ierr, rank, nranks, i, r, round, failures, total, mine
  integer :: b(4), v(4)
  integer, allocatable :: every(:), counts(:), displs(:), gathered(:)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  allocate(every(4 * nranks), counts(nranks), displs(nranks), gathered(4 * nranks))

  ! MPI_Bcast_init, started twice with new data: MPI_Wait, then MPI_Test until done.
  call MPI_Bcast_init(b, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, bcast, ierr)
  do round = 1, 2
    b = -1
    if (rank == 0) b = (/ (10 * round + i, i = 1, 4) /)
    call MPI_Start(bcast, ierr)
    if (round == 1) then
      call MPI_Wait(bcast, MPI_STATUS_IGNORE, ierr)
    else
      flag = .false.
      do while (.not. flag)
        call MPI_Test(bcast, flag, MPI_STATUS_IGNORE, ierr)
      end do
    end if
    call expect(ierr == MPI_SUCCESS .and. all(b == (/ (10 * round + i, i = 1, 4) /)), &
                'MPI_Bcast_init + MPI_Start')
  end do
  call MPI_Request_free(bcast, ierr)

  ! MPI_Gather_init and MPI_Scatterv_init, MPI_Startall, MPI_Waitall.
  counts = (/ (min(r + 1, 4), r = 0, nranks - 1) /)
  displs(1) = 0
  do r = 2, nranks
    displs(r) = displs(r - 1) + counts(r - 1)
  end do
  mine = counts(rank + 1)
  v = (/ (1000 * rank + i, i = 1, 4) /)
  every = (/ (100 + i, i = 1, 4 * nranks) /)
  gathered = -1
  b = -1
  call MPI_Gather_init(v, 4, MPI_INTEGER, gathered, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                       MPI_INFO_NULL, both(1), ierr)
  call MPI_Scatterv_init(every, counts, displs, MPI_INTEGER, b, mine, MPI_INTEGER, &
                         nranks - 1, MPI_COMM_WORLD, MPI_INFO_NULL, both(2), ierr)
  call MPI_Startall(2, both, ierr)
  call MPI_Waitall(2, both, MPI_STATUSES_IGNORE, ierr)
  call expect(ierr == MPI_SUCCESS .and. all(b(1:mine) == &
              (/ (100 + displs(rank + 1) + i, i = 1, mine) /)), 'MPI_Scatterv_init + MPI_Startall')
  if (rank == 0) then
    call expect(all(gathered == (/ ((1000 * r + i, i = 1, 4), r = 0, nranks - 1) /)), &
                'MPI_Gather_init + MPI_Startall')
  end if
  call MPI_Request_free(both(1), ierr)
  call MPI_Request_free(both(2), ierr)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', 'fortran persistent: ', total, ' failed'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

#include "expect.inc"

end program persistent
