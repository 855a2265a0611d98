! Serial Fortran I/O as applications write it (gfortran's runtime makes the POSIX calls):
!   DIR/f_stream.dat: unformatted stream, 100 writes of 100 doubles (800 B), rewind, 100
!                     reads back, checked, close
!   DIR/f_text.txt:   formatted sequential, 50 lines "i, x" written, closed, reopened, read
!                     back, checked, close
! Usage: fortran_io DIR
program fortran_io
  implicit none
  integer, parameter :: n = 100
  double precision :: buf(n), got(n), x
  integer :: i, j
  character(len=4000) :: dir

  call get_command_argument(1, dir)
  open (unit=10, file=trim(dir)//'/f_stream.dat', access='stream', form='unformatted', &
        status='replace', action='readwrite')
  do i = 1, 100
    buf = i
    write (10) buf
  end do
  rewind (10)
  do i = 1, 100
    read (10) got
    if (any(got /= i)) stop 2
  end do
  close (10)

  open (unit=11, file=trim(dir)//'/f_text.txt', form='formatted', status='replace', &
        action='write')
  do i = 1, 50
    write (11, '(I6, 1X, F12.4)') i, i * 0.5d0
  end do
  close (11)
  open (unit=11, file=trim(dir)//'/f_text.txt', form='formatted', status='old', action='read')
  do i = 1, 50
    read (11, *) j, x
    if (j /= i .or. x /= i * 0.5d0) stop 3
  end do
  close (11)
end program fortran_io
