"""The engine's backends as iolab's Python names them, listed once here (the engine lists its
own in engine/src/backends.def; which of them this build has is its ``--list-options``,
:func:`iolab.bench.options.built_apis`). A test holds the two lists together."""

from __future__ import annotations

# backend (``iolab bench -a NAME``) -> how people write it
LABELS = {"null": "null", "posix": "POSIX", "mpiio": "MPI-IO", "hdf5": "HDF5",
          "pnetcdf": "PnetCDF"}
# The backends that reach the file through MPI-IO: they pass MPI-IO hints (striping ones
# included) and report the MPI-IO implementation.
OVER_MPIIO = ("mpiio", "hdf5", "pnetcdf")
