// MPI-IO from C++ (built with mpicxx): the same blocks as mpi_fortran_io.F90, with the
// independent read made through PMPI_File_read_at, as a tool layered on PMPI would (the
// tracer must count it once). Usage: mpi_cxx_io FILE
#include <mpi.h>

#include <cstdlib>
#include <vector>

namespace {

constexpr int kN = 100;

MPI_Offset block_offset(int block, int rank, int nprocs)
{
    return static_cast<MPI_Offset>(block * nprocs + rank) * kN * sizeof(double);
}

void check(int code)
{
    if (code != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nprocs = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    std::vector<double> buf(kN), got(kN);
    MPI_Request req;
    for (int b = 0; b < 4; b++) {
        std::fill(buf.begin(), buf.end(), rank * 1000.0 + b);
        MPI_Offset off = block_offset(b, rank, nprocs);
        if (b < 2)
            check(MPI_File_write_at(fh, off, buf.data(), kN, MPI_DOUBLE, MPI_STATUS_IGNORE));
        else if (b == 2)
            check(MPI_File_write_at_all(fh, off, buf.data(), kN, MPI_DOUBLE, MPI_STATUS_IGNORE));
        else {
            check(MPI_File_iwrite_at(fh, off, buf.data(), kN, MPI_DOUBLE, &req));
            check(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int b = 0; b < 3; b++) {
        std::fill(got.begin(), got.end(), -1.0);
        MPI_Offset off = block_offset(b, rank, nprocs);
        if (b == 0)
            check(MPI_File_read_at_all(fh, off, got.data(), kN, MPI_DOUBLE, MPI_STATUS_IGNORE));
        else if (b == 1)
            check(PMPI_File_read_at(fh, off, got.data(), kN, MPI_DOUBLE, MPI_STATUS_IGNORE));
        else {
            check(MPI_File_iread_at(fh, off, got.data(), kN, MPI_DOUBLE, &req));
            check(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        for (double v : got)
            if (v != rank * 1000.0 + b)
                MPI_Abort(MPI_COMM_WORLD, 3);
    }
    check(MPI_File_close(&fh));
    MPI_Finalize();
    return EXIT_SUCCESS;
}
