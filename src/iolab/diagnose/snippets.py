"""Code snippets for the fixes, in C, Fortran and Python (h5py / mpi4py), written for iolab.

Keyed by (topic, language). Each is a complete fragment a user can paste around their own
calls; names in capitals (FILENAME, BUF, COUNT) stand for the user's own. Each topic shows
one change at one layer (:data:`CHANGES`, the data the snippet renders): an HDF5 or PnetCDF
program gets its library's calls, never raw MPI_File_* ones, and a read gets a read.
"""

from __future__ import annotations

from iolab.settings.change import CodeChange

SNIPPETS: dict[tuple[str, str], str] = {
    ("collective_io", "c"): """\
/* Collective MPI-IO with hints: every rank calls the _all variant, ROMIO aggregates. */
MPI_Info info;
MPI_Info_create(&info);
MPI_Info_set(info, "romio_cb_write", "enable");
MPI_Info_set(info, "romio_cb_read", "enable");
MPI_Info_set(info, "romio_ds_write", "disable");
MPI_File fh;
MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
/* was: MPI_File_write_at(fh, offset, BUF, COUNT, MPI_BYTE, &status); */
MPI_File_write_at_all(fh, offset, BUF, COUNT, MPI_BYTE, MPI_STATUS_IGNORE);
MPI_File_close(&fh);
MPI_Info_free(&info);
""",
    ("collective_io", "fortran"): """\
! Collective MPI-IO with hints: every rank calls the _all variant, ROMIO aggregates.
integer :: info, fh, ierr
integer(kind=MPI_OFFSET_KIND) :: offset
call MPI_Info_create(info, ierr)
call MPI_Info_set(info, 'romio_cb_write', 'enable', ierr)
call MPI_Info_set(info, 'romio_ds_write', 'disable', ierr)
call MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_CREATE + MPI_MODE_WRONLY, info, fh, ierr)
! was: call MPI_File_write_at(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
call MPI_File_write_at_all(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
call MPI_File_close(fh, ierr)
call MPI_Info_free(info, ierr)
""",
    ("collective_io", "python"): """\
# Collective MPI-IO with hints (mpi4py): every rank calls the _all variant.
from mpi4py import MPI
info = MPI.Info.Create()
info.Set("romio_cb_write", "enable")
info.Set("romio_ds_write", "disable")
fh = MPI.File.Open(MPI.COMM_WORLD, FILENAME, MPI.MODE_CREATE | MPI.MODE_WRONLY, info)
fh.Write_at_all(offset, buf)  # was: fh.Write_at(offset, buf)
fh.Close()
""",
    ("nonblocking_io", "c"): """\
/* Non-blocking MPI-IO: start the write, compute, then wait. */
MPI_Request req;
MPI_File_iwrite_at_all(fh, offset, BUF, COUNT, MPI_BYTE, &req);  /* MPI-3.1 */
/* ... computation that does not touch BUF ... */
MPI_Wait(&req, MPI_STATUS_IGNORE);
/* PnetCDF: ncmpi_iput_vara_double(ncid, varid, start, count, BUF, &req);
            ncmpi_wait_all(ncid, 1, &req, &status); */
""",
    ("nonblocking_io", "fortran"): """\
! Non-blocking MPI-IO: start the write, compute, then wait.
integer :: req, ierr
call MPI_File_iwrite_at_all(fh, offset, buf, count, MPI_BYTE, req, ierr)
! ... computation that does not touch buf ...
call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
""",
    ("nonblocking_io", "python"): """\
# Non-blocking MPI-IO (mpi4py): start the write, compute, then wait.
req = fh.Iwrite_at_all(offset, buf)
# ... computation that does not touch buf ...
req.Wait()
""",
    ("nonblocking_io_read", "c"): """\
/* Non-blocking MPI-IO reads: start the read, compute, then wait before using BUF. */
MPI_Request req;
MPI_File_iread_at_all(fh, offset, BUF, COUNT, MPI_BYTE, &req);  /* MPI-3.1 */
/* ... computation that does not need BUF ... */
MPI_Wait(&req, MPI_STATUS_IGNORE);
""",
    ("nonblocking_io_read", "fortran"): """\
! Non-blocking MPI-IO reads: start the read, compute, then wait before using buf.
integer :: req, ierr
call MPI_File_iread_at_all(fh, offset, buf, count, MPI_BYTE, req, ierr)
! ... computation that does not need buf ...
call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
""",
    ("nonblocking_io_read", "python"): """\
# Non-blocking MPI-IO reads (mpi4py): start the read, compute, then wait.
req = fh.Iread_at_all(offset, buf)
# ... computation that does not need buf ...
req.Wait()
""",
    ("buffered_writes", "c"): """\
/* Give stdio a large buffer so that many small fwrite()s become few large write()s. */
FILE *f = fopen(FILENAME, "w");
static char iobuf[64 << 20];                 /* 64 MiB, as IOBUF's case study */
setvbuf(f, iobuf, _IOFBF, sizeof iobuf);     /* before the first I/O on f */
/* For raw write(): collect records in a buffer and write() it when full. */
/* No code change at all: iolab buffer -- PROGRAM ARGS   (or LD_PRELOAD=libiolab-buffer.so) */
""",
    ("buffered_reads", "c"): """\
/* Give stdio a large buffer so that many small fread()s become few large read()s. */
FILE *f = fopen(FILENAME, "rb");
static char iobuf[64 << 20];                 /* 64 MiB */
setvbuf(f, iobuf, _IOFBF, sizeof iobuf);     /* before the first I/O on f */
/* No code change at all: iolab buffer -- PROGRAM ARGS   (or LD_PRELOAD=libiolab-buffer.so) */
""",
    ("buffered_reads", "fortran"): """\
! Read in large unformatted blocks instead of many small records.
open(unit=10, file=FILENAME, form='unformatted', access='stream', action='read')
read(10) big_array                  ! one read of the whole array, not one per element
close(10)
""",
    ("buffered_reads", "python"): """\
# A large buffer for many small reads (Python's default is 8 KiB).
with open(FILENAME, "rb", buffering=64 * 1024 * 1024) as f:
    while rec := f.read(RECORD):
        use(rec)
""",
    ("buffered_writes", "fortran"): """\
! Write in large unformatted blocks instead of many small records.
open(unit=10, file=FILENAME, form='unformatted', access='stream', action='write')
write(10) big_array                 ! one write of the whole array, not one per element
close(10)
! gfortran: export GFORTRAN_UNBUFFERED_ALL=n ; Intel: export FORT_BUFFERED=true
""",
    ("buffered_writes", "python"): """\
# A large buffer for many small writes (Python's default is 8 KiB).
with open(FILENAME, "wb", buffering=64 * 1024 * 1024) as f:
    for rec in records:
        f.write(rec)
""",
    ("read_once_bcast", "c"): """\
/* Read a small shared input on one rank and broadcast it, instead of every rank reading. */
long n = 0; char *data = NULL;
if (rank == 0) {
    FILE *f = fopen(FILENAME, "rb");
    fseek(f, 0, SEEK_END); n = ftell(f); rewind(f);
    data = malloc(n); fread(data, 1, n, f); fclose(f);
}
MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
if (rank != 0) data = malloc(n);
MPI_Bcast(data, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
""",
    ("read_once_bcast", "fortran"): """\
! Read a small shared input on one rank and broadcast it.
if (rank == 0) then
   open(unit=11, file=FILENAME, form='unformatted', access='stream', action='read')
   read(11) params
   close(11)
end if
call MPI_Bcast(params, size(params), MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
""",
    ("read_once_bcast", "python"): """\
# Read a small shared input on one rank and broadcast it (mpi4py).
from mpi4py import MPI
comm = MPI.COMM_WORLD
data = open(FILENAME, "rb").read() if comm.rank == 0 else None
data = comm.bcast(data, root=0)
""",
    ("hdf5_collective_metadata", "c"): """\
/* HDF5 over MPI-IO: collective metadata and aligned objects. */
hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
H5Pset_all_coll_metadata_ops(fapl, 1);       /* HDF5 >= 1.10 */
H5Pset_coll_metadata_write(fapl, 1);
H5Pset_alignment(fapl, 1048576, 1048576);    /* objects >= 1 MiB start on stripe bounds */
hid_t file = H5Fcreate(FILENAME, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, BUF);
""",
    ("hdf5_collective_metadata", "fortran"): """\
! HDF5 over MPI-IO: collective metadata and aligned objects.
call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, ierr)
call h5pset_fapl_mpio_f(fapl, MPI_COMM_WORLD, MPI_INFO_NULL, ierr)
call h5pset_all_coll_metadata_ops_f(fapl, .true., ierr)
call h5pset_coll_metadata_write_f(fapl, .true., ierr)
call h5pset_alignment_f(fapl, 1048576_HSIZE_T, 1048576_HSIZE_T, ierr)
call h5pcreate_f(H5P_DATASET_XFER_F, dxpl, ierr)
call h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, ierr)
""",
    ("hdf5_collective_metadata", "python"): """\
# h5py with MPI (h5py built with parallel HDF5): aligned objects, collective writes.
import h5py
from mpi4py import MPI
f = h5py.File(FILENAME, "w", driver="mpio", comm=MPI.COMM_WORLD,
              alignment_threshold=1 << 20, alignment_interval=1 << 20)  # h5py >= 3.7
dset = f.create_dataset("data", shape, dtype="f8")
with dset.collective:
    dset[start:stop] = local
f.close()
""",
    ("fill_mode", "c"): """\
/* Do not write fill values that the program overwrites anyway. */
ncmpi_set_fill(ncid, NC_NOFILL, NULL);                /* PnetCDF, in define mode */
H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);          /* HDF5 dataset creation */
H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE);
""",
    ("fill_mode", "fortran"): """\
! Do not write fill values that the program overwrites anyway.
err = nf90mpi_set_fill(ncid, NF90_NOFILL, old_mode)   ! PnetCDF
call h5pset_fill_time_f(dcpl, H5D_FILL_TIME_NEVER_F, ierr)   ! HDF5
""",
    ("fill_mode", "python"): """\
# h5py: no fill values for a dataset written completely by the program.
dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
""",
    ("direct_io", "c"): """\
/* O_DIRECT for a large one-time read: aligned buffer, sizes in multiples of 512 B. */
#define _GNU_SOURCE
#include <fcntl.h>
int fd = open(FILENAME, O_RDONLY | O_DIRECT);
void *buf; posix_memalign(&buf, 4096, CHUNK);           /* CHUNK: multiple of 4096 */
ssize_t n; off_t off = 0;
while ((n = pread(fd, buf, CHUNK, off)) > 0) { /* use buf */ off += n; }
/* MPI-IO: export MPIO_DIRECT_READ=TRUE ; HDF5: H5Pset_fapl_direct(fapl, 4096, 4096, CHUNK) */
""",
    ("direct_io", "fortran"): """\
! Fortran has no O_DIRECT: read through MPI-IO with direct reads enabled instead:
!   export MPIO_DIRECT_READ=TRUE     (Cray MPICH)
call MPI_File_open(MPI_COMM_SELF, FILENAME, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, buf, n, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
""",
    ("direct_io", "python"): """\
# O_DIRECT read with an aligned buffer (mmap gives page-aligned memory).
import mmap, os
fd = os.open(FILENAME, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, CHUNK)          # CHUNK: multiple of 4096
off = 0
while (n := os.preadv(fd, [buf], off)) > 0:
    off += n
os.close(fd)
""",
    ("fewer_opens", "c"): """\
/* Open once, keep the descriptor, close at the end (not open/close per record). */
int fd = open(FILENAME, O_WRONLY | O_CREAT | O_APPEND, 0644);
for (int step = 0; step < NSTEPS; step++) {
    write(fd, BUF, LEN);
}
close(fd);
""",
    ("fewer_opens", "fortran"): """\
! Open once before the loop and close after it.
open(unit=12, file=FILENAME, form='unformatted', access='stream', action='write')
do step = 1, nsteps
   write(12) record
end do
close(12)
""",
    ("fewer_opens", "python"): """\
# Open once before the loop and close after it.
with open(FILENAME, "ab") as f:
    for step in range(nsteps):
        f.write(record)
""",
    ("binary_output", "c"): """\
/* Binary output: one fwrite of the array instead of fprintf per value. */
FILE *f = fopen(FILENAME, "wb");
fwrite(values, sizeof values[0], n, f);   /* was: for (...) fprintf(f, "%g\\n", values[i]); */
fclose(f);
""",
    ("binary_output", "fortran"): """\
! Unformatted output: one write of the array instead of formatted records.
open(unit=13, file=FILENAME, form='unformatted', access='stream')
write(13) values          ! was: write(13, '(E15.7)') values(i) in a loop
close(13)
""",
    ("binary_output", "python"): """\
# Binary output with numpy instead of text.
import numpy as np
np.asarray(values).tofile(FILENAME)      # was: np.savetxt(FILENAME, values)
""",
    ("lone_writer", "c"): """\
/* Every rank writes its own part of the shared file, instead of MPI_Gather to rank 0 and
 * rank 0 writing it all: the ranks write side by side; collective MPI-IO lets the library
 * pick aggregators (cb_nodes) and stripe-aligned file domains. */
/* was: MPI_Gather(BUF, COUNT, MPI_BYTE, ALL, COUNT, MPI_BYTE, 0, MPI_COMM_WORLD);
 *      if (rank == 0) write(fd, ALL, (size_t)COUNT * nprocs); */
MPI_File fh;
MPI_Offset offset = (STEP * (MPI_Offset)nprocs + rank) * COUNT;  /* this rank's block */
MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
MPI_File_write_at_all(fh, offset, BUF, COUNT, MPI_BYTE, MPI_STATUS_IGNORE);
MPI_File_close(&fh);
/* HDF5: H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), a hyperslab per rank,
 *       H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE); PnetCDF: ncmpi_put_vara_all. */
""",
    ("lone_writer", "fortran"): """\
! Every rank writes its own part of the shared file (was: MPI_Gather to rank 0, which wrote).
integer :: fh, ierr
integer(kind=MPI_OFFSET_KIND) :: offset
offset = (int(STEP, MPI_OFFSET_KIND) * nprocs + rank) * COUNT
call MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                   MPI_INFO_NULL, fh, ierr)
call MPI_File_write_at_all(fh, offset, buf, COUNT, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
call MPI_File_close(fh, ierr)
""",
    ("lone_writer", "python"): """\
# Every rank writes its own part of the shared file (mpi4py), instead of comm.gather to
# rank 0 and rank 0 writing it all.
from mpi4py import MPI
comm = MPI.COMM_WORLD
fh = MPI.File.Open(comm, FILENAME, MPI.MODE_CREATE | MPI.MODE_WRONLY)
fh.Write_at_all((STEP * comm.size + comm.rank) * buf.nbytes, buf)
fh.Close()
""",
    ("lone_reader", "c"): """\
/* Every rank reads its own part of the shared file, instead of rank 0 reading it all and
 * MPI_Scatter / MPI_Bcast to the others: the ranks read side by side; collective MPI-IO lets
 * the library pick aggregators (cb_nodes) and stripe-aligned file domains. */
/* was: if (rank == 0) read(fd, ALL, (size_t)COUNT * nprocs);
 *      MPI_Scatter(ALL, COUNT, MPI_BYTE, BUF, COUNT, MPI_BYTE, 0, MPI_COMM_WORLD); */
MPI_File fh;
MPI_Offset offset = (STEP * (MPI_Offset)nprocs + rank) * COUNT;  /* this rank's block */
MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
MPI_File_read_at_all(fh, offset, BUF, COUNT, MPI_BYTE, MPI_STATUS_IGNORE);
MPI_File_close(&fh);
/* HDF5 (H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) on the file): this rank's
 * hyperslab of the dataset, read collectively:
 *   hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
 *   H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
 *   H5Dread(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, BUF);
 * PnetCDF: ncmpi_get_vara_double_all(ncid, varid, start, count, BUF) (this rank's start
 * and count; ncmpi_open in MPI_COMM_WORLD). */
""",
    ("lone_reader", "fortran"): """\
! Every rank reads its own part of the shared file (was: rank 0 read it all, then
! MPI_Scatter / MPI_Bcast). HDF5: h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, err) and
! h5dread_f with xfer_prp=dxpl; PnetCDF: nfmpi_get_vara_double_all.
integer :: fh, ierr
integer(kind=MPI_OFFSET_KIND) :: offset
offset = (int(STEP, MPI_OFFSET_KIND) * nprocs + rank) * COUNT
call MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
call MPI_File_read_at_all(fh, offset, buf, COUNT, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
call MPI_File_close(fh, ierr)
""",
    ("lone_reader", "python"): """\
# Every rank reads its own part of the shared file (mpi4py), instead of rank 0 reading it
# all and comm.scatter / comm.bcast to the others. h5py (parallel): with
# dset.collective: part = dset[lo:hi]; PnetCDF (pnetcdf-python): var.get_var_all(...).
from mpi4py import MPI
comm = MPI.COMM_WORLD
fh = MPI.File.Open(comm, FILENAME, MPI.MODE_RDONLY)
fh.Read_at_all((STEP * comm.size + comm.rank) * buf.nbytes, buf)
fh.Close()
""",
    ("collective_io_read", "c"): """\
/* Collective MPI-IO reads with hints: every rank calls the _all variant, ROMIO aggregates. */
MPI_Info info;
MPI_Info_create(&info);
MPI_Info_set(info, "romio_cb_read", "enable");
MPI_File fh;
MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_RDONLY, info, &fh);
/* was: MPI_File_read_at(fh, offset, BUF, COUNT, MPI_BYTE, &status); */
MPI_File_read_at_all(fh, offset, BUF, COUNT, MPI_BYTE, MPI_STATUS_IGNORE);
MPI_File_close(&fh);
MPI_Info_free(&info);
""",
    ("collective_io_read", "fortran"): """\
! Collective MPI-IO reads with hints: every rank calls the _all variant, ROMIO aggregates.
integer :: info, fh, ierr
integer(kind=MPI_OFFSET_KIND) :: offset
call MPI_Info_create(info, ierr)
call MPI_Info_set(info, 'romio_cb_read', 'enable', ierr)
call MPI_File_open(MPI_COMM_WORLD, FILENAME, MPI_MODE_RDONLY, info, fh, ierr)
! was: call MPI_File_read_at(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
call MPI_File_read_at_all(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE, ierr)
call MPI_File_close(fh, ierr)
call MPI_Info_free(info, ierr)
""",
    ("collective_io_read", "python"): """\
# Collective MPI-IO reads (mpi4py): every rank calls the _all variant.
from mpi4py import MPI
info = MPI.Info.Create()
info.Set("romio_cb_read", "enable")
fh = MPI.File.Open(MPI.COMM_WORLD, FILENAME, MPI.MODE_RDONLY, info)
fh.Read_at_all(offset, buf)  # was: fh.Read_at(offset, buf)
fh.Close()
""",
    ("hdf5_collective_write", "c"): """\
/* HDF5 over MPI-IO: collective dataset writes (the transfer property list of H5Dwrite). */
hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, BUF);  /* was: H5P_DEFAULT */
H5Pclose(dxpl);
""",
    ("hdf5_collective_write", "fortran"): """\
! HDF5 over MPI-IO: collective dataset writes (the transfer property list of h5dwrite_f).
call h5pcreate_f(H5P_DATASET_XFER_F, dxpl, ierr)
call h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, ierr)
call h5dwrite_f(dset, H5T_NATIVE_DOUBLE, buf, dims, ierr, memspace, filespace, xfer_prp=dxpl)
""",
    ("hdf5_collective_write", "python"): """\
# h5py with MPI (parallel HDF5): collective dataset writes.
with dset.collective:
    dset[start:stop] = local
""",
    ("hdf5_collective_read", "c"): """\
/* HDF5 over MPI-IO: collective dataset reads (the transfer property list of H5Dread). */
hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
H5Dread(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, BUF);  /* was: H5P_DEFAULT */
H5Pclose(dxpl);
""",
    ("hdf5_collective_read", "fortran"): """\
! HDF5 over MPI-IO: collective dataset reads (the transfer property list of h5dread_f).
call h5pcreate_f(H5P_DATASET_XFER_F, dxpl, ierr)
call h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, ierr)
call h5dread_f(dset, H5T_NATIVE_DOUBLE, buf, dims, ierr, memspace, filespace, xfer_prp=dxpl)
""",
    ("hdf5_collective_read", "python"): """\
# h5py with MPI (parallel HDF5): collective dataset reads.
with dset.collective:
    local = dset[start:stop]
""",
    ("hdf5_collective_metadata_read", "c"): """\
/* HDF5 over MPI-IO, reading: metadata read once and broadcast (collective metadata reads). */
hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
H5Pset_all_coll_metadata_ops(fapl, 1);       /* HDF5 >= 1.10 */
hid_t file = H5Fopen(FILENAME, H5F_ACC_RDONLY, fapl);
""",
    ("hdf5_collective_metadata_read", "fortran"): """\
! HDF5 over MPI-IO, reading: collective metadata reads.
call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, ierr)
call h5pset_fapl_mpio_f(fapl, MPI_COMM_WORLD, MPI_INFO_NULL, ierr)
call h5pset_all_coll_metadata_ops_f(fapl, .true., ierr)
call h5fopen_f(FILENAME, H5F_ACC_RDONLY_F, file, ierr, access_prp=fapl)
""",
    ("pnetcdf_collective_write", "c"): """\
/* PnetCDF: collective writes (the _all calls, in collective data mode). */
ncmpi_put_vara_double_all(ncid, varid, start, count, BUF);  /* was: ncmpi_put_vara_double */
/* or several at once: ncmpi_iput_vara_double(...) per piece, then ncmpi_wait_all */
""",
    ("pnetcdf_collective_write", "fortran"): """\
! PnetCDF: collective writes (the _all calls, in collective data mode).
err = nf90mpi_put_var_all(ncid, varid, buf, start, count)   ! was: nf90mpi_put_var
""",
    ("pnetcdf_collective_read", "c"): """\
/* PnetCDF: collective reads (the _all calls, in collective data mode). */
ncmpi_get_vara_double_all(ncid, varid, start, count, BUF);  /* was: ncmpi_get_vara_double */
""",
    ("pnetcdf_collective_read", "fortran"): """\
! PnetCDF: collective reads (the _all calls, in collective data mode).
err = nf90mpi_get_var_all(ncid, varid, buf, start, count)   ! was: nf90mpi_get_var
""",
    ("pnetcdf_nonblocking", "c"): """\
/* PnetCDF non-blocking: post each piece, then one collective wait writes them together. */
int req[NVARS], st[NVARS];
for (int v = 0; v < NVARS; v++)
    ncmpi_iput_vara_double(ncid, varid[v], start, count, BUF[v], &req[v]);
/* ... computation that does not touch BUF ... */
ncmpi_wait_all(ncid, NVARS, req, st);
""",
    ("pnetcdf_nonblocking", "fortran"): """\
! PnetCDF non-blocking: post each piece, then one collective wait writes them together.
do v = 1, nvars
   err = nf90mpi_iput_var(ncid, varid(v), buf(:, v), req(v), start, count)
end do
err = nf90mpi_wait_all(ncid, nvars, req, st)
""",
    ("hdf5_layout", "c"): """\
/* HDF5: objects aligned to the stripe, chunks of whole stripes, no fill values written. */
hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
H5Pset_alignment(fapl, 1048576, 1048576);    /* objects >= 1 MiB start on 1 MiB bounds */
hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
H5Pset_chunk(dcpl, RANK, CHUNK_DIMS);         /* a chunk: a whole number of stripes */
H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);  /* the program writes every element */
""",
    ("hdf5_layout", "fortran"): """\
! HDF5: objects aligned to the stripe, chunks of whole stripes, no fill values written.
call h5pset_alignment_f(fapl, 1048576_HSIZE_T, 1048576_HSIZE_T, ierr)
call h5pset_chunk_f(dcpl, rank, chunk_dims, ierr)
call h5pset_fill_time_f(dcpl, H5D_FILL_TIME_NEVER_F, ierr)
""",
}

_HDF5_META = ("H5Pset_fapl_mpio", "H5Pset_all_coll_metadata_ops")

# The change each topic shows, as data (the knob: the one iolab tune turns for it on a proxy).
CHANGES: dict[str, CodeChange] = {
    "collective_io": CodeChange("collective transfers", "mpiio",
                                ("MPI_File_write_at_all",), direction="write"),
    "collective_io_read": CodeChange("collective transfers", "mpiio",
                                     ("MPI_File_read_at_all",), direction="read"),
    "hdf5_collective_write": CodeChange("collective transfers", "hdf5", ("H5Pset_dxpl_mpio",),
                                        direction="write"),
    "hdf5_collective_read": CodeChange("collective transfers", "hdf5", ("H5Pset_dxpl_mpio",),
                                       direction="read"),
    "pnetcdf_collective_write": CodeChange("collective transfers", "pnetcdf",
                                           ("ncmpi_put_vara_*_all",), direction="write"),
    "pnetcdf_collective_read": CodeChange("collective transfers", "pnetcdf",
                                          ("ncmpi_get_vara_*_all",), direction="read"),
    "hdf5_collective_metadata": CodeChange(
        "collective metadata", "hdf5",
        (*_HDF5_META, "H5Pset_coll_metadata_write", "H5Pset_alignment", "H5Pset_dxpl_mpio"),
        knob="hdf5.coll-metadata", value="true", experiment=True),
    # an experiment, as collective transfers are: it adds collective calls to every metadata
    # operation, which cost more than they save when the metadata I/O is small (h5_slab
    # under MPICH: 0.26x-0.39x with H5Pset_coll_metadata_write)
    "hdf5_collective_metadata_read": CodeChange("collective metadata reads", "hdf5",
                                                _HDF5_META, knob="hdf5.coll-metadata",
                                                value="true", direction="read",
                                                experiment=True),
    "hdf5_layout": CodeChange("aligned, chunked datasets without fill values", "hdf5",
                              ("H5Pset_alignment", "H5Pset_chunk", "H5Pset_fill_time")),
    "nonblocking_io": CodeChange("non-blocking I/O overlapping computation", "mpiio",
                                 ("MPI_File_iwrite_at_all", "MPI_Wait"), direction="write"),
    "nonblocking_io_read": CodeChange("non-blocking I/O overlapping computation", "mpiio",
                                      ("MPI_File_iread_at_all", "MPI_Wait"),
                                      direction="read"),
    "pnetcdf_nonblocking": CodeChange("non-blocking puts with one collective wait", "pnetcdf",
                                      ("ncmpi_iput_vara_*", "ncmpi_wait_all"),
                                      direction="write"),
    "buffered_writes": CodeChange("fewer, larger writes through a large buffer", "stdio",
                                  ("setvbuf",), direction="write"),
    "buffered_reads": CodeChange("fewer, larger reads through a large buffer", "stdio",
                                 ("setvbuf",), direction="read"),
    "read_once_bcast": CodeChange("read once, broadcast", "posix", ("MPI_Bcast",),
                                  direction="read"),
    "fill_mode": CodeChange("no fill values", "hdf5",
                            ("H5Pset_fill_time", "ncmpi_set_fill"), direction="write"),
    "direct_io": CodeChange("direct I/O (O_DIRECT, aligned buffers)", "posix",
                            ("open(O_DIRECT)", "posix_memalign")),
    "fewer_opens": CodeChange("open once, close once", "posix", ("open", "close")),
    "binary_output": CodeChange("binary output", "stdio", ("fwrite",), direction="write"),
    "lone_writer": CodeChange("every rank writes its own part", "mpiio",
                              ("MPI_File_write_at_all",), direction="write"),
    "lone_reader": CodeChange("every rank reads its own part", "mpiio",
                              ("MPI_File_read_at_all",), direction="read"),
}
