! A Fortran checkpoint writer as simulation codes write theirs with PnetCDF's non-blocking
! interface (FLASH, S3D-style): every rank posts one nf90mpi_iput_var per field of its part of
! a 2-D (x, y) grid, decomposed along x (the fastest-varying dimension, so a rank's part is NY
! pieces of NX_PER_RANK values, interleaved with the other ranks'), and the data moves in one
! nf90mpi_wait_all; written STEPS times (one record each, an unlimited time dimension), for
! the proof tests of real programs (tests/tune/test_proof_programs.py) and
! bench/advice_speedup.py.
! Usage: pnc_checkpoint FILE NX_PER_RANK NY [STEPS]
! Prints "checkpoint: <bytes> bytes in <s> s, <MiB/s> MiB/s" on rank 0.
program pnc_checkpoint
  use mpi
  use pnetcdf
  implicit none
  integer, parameter :: nfields = 3
  character(len=16), parameter :: names(nfields) = [character(len=16) :: "dens", "pres", "temp"]
  integer :: ierr, rank, nprocs, ncid, dims(3), varids(nfields), reqs(nfields), sts(nfields)
  integer :: i, step, steps, nargs
  integer(kind=MPI_OFFSET_KIND) :: nxr, ny, start(3), count(3)
  character(len=512) :: path, arg
  double precision, allocatable :: field(:, :, :)
  double precision :: t0, t, nbytes

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  nargs = command_argument_count()
  if (nargs < 3) then
    if (rank == 0) write (0, '(a)') "usage: pnc_checkpoint FILE NX_PER_RANK NY [STEPS]"
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call get_command_argument(1, path)
  call get_command_argument(2, arg)
  read (arg, *) nxr
  call get_command_argument(3, arg)
  read (arg, *) ny
  steps = 1
  if (nargs >= 4) then
    call get_command_argument(4, arg)
    read (arg, *) steps
  end if
  allocate (field(nxr, ny, nfields))
  do i = 1, nfields
    field(:, :, i) = rank * 1000 + i
  end do

  call check(nf90mpi_create(MPI_COMM_WORLD, trim(path), ior(NF90_CLOBBER, NF90_64BIT_DATA), &
                            MPI_INFO_NULL, ncid), "nf90mpi_create")
  call check(nf90mpi_def_dim(ncid, "x", nxr * nprocs, dims(1)), "def_dim x")
  call check(nf90mpi_def_dim(ncid, "y", ny, dims(2)), "def_dim y")
  call check(nf90mpi_def_dim(ncid, "time", NF90MPI_UNLIMITED, dims(3)), "def_dim time")
  do i = 1, nfields
    call check(nf90mpi_def_var(ncid, trim(names(i)), NF90_DOUBLE, dims, varids(i)), "def_var")
  end do
  call check(nf90mpi_enddef(ncid), "enddef")

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do step = 1, steps
    start = [rank * nxr + 1, 1_MPI_OFFSET_KIND, int(step, MPI_OFFSET_KIND)]
    count = [nxr, ny, 1_MPI_OFFSET_KIND]
    do i = 1, nfields
      call check(nf90mpi_iput_var(ncid, varids(i), field(:, :, i), reqs(i), start, count), &
                 "iput_var")
    end do
    call check(nf90mpi_wait_all(ncid, nfields, reqs, sts), "wait_all")
    do i = 1, nfields
      call check(sts(i), "a request")
    end do
  end do
  call check(nf90mpi_close(ncid), "close")
  t = MPI_Wtime() - t0
  nbytes = 8d0 * nxr * ny * nprocs * nfields * steps
  if (rank == 0) write (*, '(a, f0.0, a, f0.4, a, f0.2, a)') "checkpoint: ", nbytes, &
    " bytes in ", t, " s, ", nbytes / t / 1048576d0, " MiB/s"
  deallocate (field)
  call MPI_Finalize(ierr)

contains

  subroutine check(err, what)
    integer, intent(in) :: err
    character(len=*), intent(in) :: what
    integer :: ierr2
    if (err /= NF90_NOERR) then
      write (0, '(a, a, a, a)') "pnc_checkpoint: ", what, ": ", trim(nf90mpi_strerror(err))
      call MPI_Abort(MPI_COMM_WORLD, 3, ierr2)
    end if
  end subroutine check
end program pnc_checkpoint
