"""``iolab hints``: the MPI-IO hints a file on a given file system really gets."""
