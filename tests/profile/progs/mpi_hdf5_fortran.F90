! Parallel HDF5 from Fortran (compiled with h5pfc): the Fortran bindings call the C library's
! H5Fcreate/H5Dwrite/..., which the HDF5 layer wraps. A 2-D dataset "field" of doubles,
! 64 x (4 x nprocs) in Fortran order (HDF5 sees (4 x nprocs) x 64); rank r owns 4 rows:
!   1. collective write of its rows (hyperslab, 4 x 64 doubles: 2048 B)
!   2. independent read of its rows back, checked
!   3. close; reopen read-only, collective read of the whole dataset (nprocs x 2048 B)
! Usage: mpi_hdf5_fortran FILE
program mpi_hdf5_fortran
  use hdf5
  use mpi
  implicit none
  integer, parameter :: ncol = 64, nrow = 4
  integer :: ierr, rank, nprocs, hdferr
  integer(hid_t) :: fapl, file, space, dset, mem, fspace, coll, indep
  integer(hsize_t) :: dims(2), start(2), count(2)
  double precision :: rows(ncol, nrow), back(ncol, nrow)
  double precision, allocatable :: all(:, :)
  character(len=4096) :: path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, path)
  call h5open_f(hdferr)
  rows = rank * 1000
  dims = [int(ncol, hsize_t), int(nrow * nprocs, hsize_t)]
  start = [0_hsize_t, int(nrow * rank, hsize_t)]
  count = [int(ncol, hsize_t), int(nrow, hsize_t)]

  call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, hdferr)
  call h5pset_fapl_mpio_f(fapl, MPI_COMM_WORLD, MPI_INFO_NULL, hdferr)
  call h5pcreate_f(H5P_DATASET_XFER_F, coll, hdferr)
  call h5pset_dxpl_mpio_f(coll, H5FD_MPIO_COLLECTIVE_F, hdferr)
  call h5pcreate_f(H5P_DATASET_XFER_F, indep, hdferr)
  call h5pset_dxpl_mpio_f(indep, H5FD_MPIO_INDEPENDENT_F, hdferr)
  call h5fcreate_f(trim(path), H5F_ACC_TRUNC_F, file, hdferr, access_prp=fapl)
  call check(hdferr)
  call h5screate_simple_f(2, dims, space, hdferr)
  call h5dcreate_f(file, "field", H5T_NATIVE_DOUBLE, space, dset, hdferr)
  call check(hdferr)
  call h5screate_simple_f(2, count, mem, hdferr)
  call h5dget_space_f(dset, fspace, hdferr)
  call h5sselect_hyperslab_f(fspace, H5S_SELECT_SET_F, start, count, hdferr)
  call h5dwrite_f(dset, H5T_NATIVE_DOUBLE, rows, count, hdferr, mem, fspace, coll)
  call check(hdferr)
  back = -1
  call h5dread_f(dset, H5T_NATIVE_DOUBLE, back, count, hdferr, mem, fspace, indep)
  call check(hdferr)
  if (any(back /= rows)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  call h5sclose_f(fspace, hdferr)
  call h5dclose_f(dset, hdferr)
  call h5fclose_f(file, hdferr)

  allocate(all(ncol, nrow * nprocs))
  call h5fopen_f(trim(path), H5F_ACC_RDONLY_F, file, hdferr, access_prp=fapl)
  call check(hdferr)
  call h5dopen_f(file, "field", dset, hdferr)
  call h5dread_f(dset, H5T_NATIVE_DOUBLE, all, dims, hdferr, xfer_prp=coll)
  call check(hdferr)
  if (any(all(:, nrow * rank + 1:nrow * (rank + 1)) /= rows)) &
    call MPI_Abort(MPI_COMM_WORLD, 4, ierr)
  call h5dclose_f(dset, hdferr)
  call h5fclose_f(file, hdferr)
  call h5sclose_f(mem, hdferr)
  call h5sclose_f(space, hdferr)
  call h5pclose_f(fapl, hdferr)
  call h5pclose_f(coll, hdferr)
  call h5pclose_f(indep, hdferr)
  call h5close_f(hdferr)
  call MPI_Finalize(ierr)

contains

  subroutine check(code)
    integer, intent(in) :: code
    integer :: e
    if (code < 0) call MPI_Abort(MPI_COMM_WORLD, 2, e)
  end subroutine check

end program mpi_hdf5_fortran
