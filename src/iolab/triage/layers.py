"""The layers the store keeps apart (the jobs table's ``io_time_*_s`` columns, the files
table's ``layer``): names and columns only, so the report asks for them without the model's
NumPy (iolab.triage.columns computes them, in the readers)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FS_LAYERS", "LAYERS", "LayerSpec"]


@dataclass(frozen=True)
class LayerSpec:
    name: str  # as users know it
    column: str  # the jobs table's column of its slowest-rank time
    time_mods: tuple[tuple[str, str], ...]  # Darshan modules and counter prefixes timed
    byte_mods: tuple[tuple[str, str], ...]  # modules whose BYTES_READ/WRITTEN are its data


LAYERS = (
    LayerSpec("POSIX", "io_time_posix_s", (("POSIX", "POSIX"),), (("POSIX", "POSIX"),)),
    LayerSpec("MPI-IO", "io_time_mpiio_s", (("MPI-IO", "MPIIO"),), (("MPI-IO", "MPIIO"),)),
    LayerSpec("STDIO", "io_time_stdio_s", (("STDIO", "STDIO"),), (("STDIO", "STDIO"),)),
    LayerSpec("HDF5", "io_time_hdf5_s", (("H5F", "H5F"), ("H5D", "H5D")), (("H5D", "H5D"),)),
    LayerSpec("PnetCDF", "io_time_pnetcdf_s",
              (("PNETCDF_FILE", "PNETCDF_FILE"), ("PNETCDF_VAR", "PNETCDF_VAR")),
              (("PNETCDF_VAR", "PNETCDF_VAR"),)),
)
# The layers that call the file system itself: a file's time and bytes on its mount.
FS_LAYERS = ("POSIX", "STDIO")
