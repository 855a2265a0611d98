! MPI-IO from Fortran, as applications write it: one source, three ways in (cpp picks one):
! -DUSE_F08 (use mpi_f08), -DUSE_MPI (use mpi), neither (include 'mpif.h').
! Each rank writes 4 blocks of N doubles of a shared file (block b of rank r at
! (b*nprocs + r)*N*8): blocks 0 and 1 independent (write_at), 2 collective (write_at_all),
! 3 non-blocking (iwrite_at + wait); then reads blocks 0 (read_at_all, collective),
! 1 (read_at, independent) and 2 (iread_at + wait, non-blocking) and checks them.
! With ROUNDS > 1 (bench/trace_overhead) the whole pattern repeats over the next 4 x nprocs
! blocks each round. Usage: mpi_fortran_io FILE [ROUNDS]
program mpi_fortran_io
#if defined(USE_F08)
  use mpi_f08
#elif defined(USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(USE_F08) && !defined(USE_MPI)
  include 'mpif.h'
#endif
#if defined(USE_F08)
  type(MPI_File) :: fh
  type(MPI_Request) :: req
  type(MPI_Status) :: st
#else
  integer :: fh, req
  integer :: st(MPI_STATUS_SIZE)
#endif
  integer, parameter :: n = 100
  integer :: ierr, rank, nprocs, b, round, rounds
  double precision :: buf(n), got(n)
  character(len=4096) :: path
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, path)
  rounds = 1
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) rounds
  end if
  call MPI_File_open(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr)
  do round = 0, rounds - 1
  do b = 0, 3
    buf = rank * 1000 + b
    select case (b)
    case (0, 1)
      call MPI_File_write_at(fh, offset(b), buf, n, MPI_DOUBLE_PRECISION, st, ierr)
    case (2)
      call MPI_File_write_at_all(fh, offset(b), buf, n, MPI_DOUBLE_PRECISION, st, ierr)
    case (3)
      call MPI_File_iwrite_at(fh, offset(b), buf, n, MPI_DOUBLE_PRECISION, req, ierr)
      call check(ierr)
      call MPI_Wait(req, st, ierr)
    end select
    call check(ierr)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  do b = 0, 2
    got = -1
    select case (b)
    case (0)
      call MPI_File_read_at_all(fh, offset(b), got, n, MPI_DOUBLE_PRECISION, st, ierr)
    case (1)
      call MPI_File_read_at(fh, offset(b), got, n, MPI_DOUBLE_PRECISION, st, ierr)
    case (2)
      call MPI_File_iread_at(fh, offset(b), got, n, MPI_DOUBLE_PRECISION, req, ierr)
      call check(ierr)
      call MPI_Wait(req, st, ierr)
    end select
    call check(ierr)
    if (any(got /= rank * 1000 + b)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end do
  end do
  call MPI_File_close(fh, ierr)
  call check(ierr)
  call MPI_Finalize(ierr)

contains

  function offset(blk) result(off)
    integer, intent(in) :: blk
    integer(kind=MPI_OFFSET_KIND) :: off
    off = int((round * 4 + blk) * nprocs + rank, MPI_OFFSET_KIND) * n * 8
  end function offset

  subroutine check(code)
    integer, intent(in) :: code
    integer :: e
    if (code /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 2, e)
  end subroutine check

end program mpi_fortran_io
