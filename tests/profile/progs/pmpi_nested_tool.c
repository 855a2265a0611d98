/* A PMPI layer below the tracer (as an MPI library or a second tool may be): its
 * PMPI_File_write_all is made of another public call, PMPI_File_write_at_all at the
 * individual file pointer, so the tracer's own wrapper is entered again, nested. The tracer
 * must count the one write_all the program made, not a collective write more. */
#include <mpi.h>

#include <dlfcn.h>

int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                        MPI_Status *st)
{
    MPI_Offset off = 0;
    int size = 0;
    PMPI_File_get_position(fh, &off); /* in etypes: bytes with the default view */
    int ret = PMPI_File_write_at_all(fh, off, buf, count, type, st);
    PMPI_Type_size(type, &size);
    if (ret == MPI_SUCCESS)
        PMPI_File_seek(fh, off + (MPI_Offset)count * size, MPI_SEEK_SET);
    return ret;
}
