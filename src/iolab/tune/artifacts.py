"""The winner as files a user applies as written, one per way of applying a knob.

- ``romio-hints``: ``key value`` lines (the ROMIO_HINTS file format);
- ``env.sh``: ``ROMIO_HINTS`` pointing at that file, Cray's ``MPICH_MPIIO_HINTS`` in its
  ``pattern:key=value:...`` syntax (written by diagnose's writer: a value with ``:``, as
  ``cb_config_list *:2``, cannot go there and a comment says so), OMPIO's ``OMPI_MCA_*``
  parameters;
- ``lfs.sh``: ``lfs setstripe`` on the output directory (before the files are created);
- ``slurm.txt``: launch options;
- ``code-changes.txt``: what only the application's source can change (collective calls,
  transfer size, ...), said in words.
Nothing is written when the winner sets nothing of that kind.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from iolab.settings.apply import hints_file, mpich_mpiio_hints
from iolab.tune.knobs import LAUNCH, knob
from iolab.tune.objective import lfs_setstripe

_CODE_WORDS = {
    "posix.mode": "open the files {v}: buffered = page cache, sync = O_DSYNC, "
                  "direct = O_DIRECT (aligned buffers and sizes)",
    "transfer": "move {v} bytes per I/O call (aggregate smaller writes in memory)",
    "threads": "use {v} I/O threads per rank, each on its own part of the file",
    "layout": "file layout: {v} (fpp = a file per process, segmented/strided = one shared "
              "file, subset = one file per group of ranks)",
    "collective": "collective MPI-IO / HDF5 transfers: {v} (MPI_File_write_at_all, "
                  "H5Pset_dxpl_mpio(H5FD_MPIO_COLLECTIVE))",
    "file-view": "one call per rank through a file view: {v} (MPI_File_set_view with a "
                 "derived datatype)",
    "hdf5.align": "H5Pset_alignment(fapl, threshold, {v})",
    "hdf5.chunk": "chunked datasets with chunks of {v} bytes (H5Pset_chunk)",
    "hdf5.coll-metadata": "collective metadata: {v} (on the file access property list: "
                          "H5Pset_all_coll_metadata_ops(fapl, true); "
                          "H5Pset_coll_metadata_write(fapl, true))",
}


def write_artifacts(winner: Mapping[str, str], directory: Path,
                    output_dir: str | None = None) -> list[Path]:
    """Write the files for ``winner`` (knob name -> value, only knobs it sets) into
    ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, text: str) -> None:
        path = directory / name
        path.write_text(text)
        written.append(path)

    by_kind: dict[str, dict[str, str]] = {}
    for name, value in winner.items():
        by_kind.setdefault(knob(name).kind, {})[name] = value
    env_lines: list[str] = []
    hints = {knob(n).library_key: v for n, v in by_kind.get("romio", {}).items()}
    if hints:
        put("romio-hints", hints_file(hints))
        env_lines.append(f"export ROMIO_HINTS={shlex.quote(str(directory.resolve()))}"
                         "/romio-hints")
        cray, notes = mpich_mpiio_hints(hints)  # Cray MPICH: ':' separates its fields
        env_lines += [n.replace("# ", "# Cray MPICH: ", 1) for n in notes]
        if cray:
            env_lines.append(f"export MPICH_MPIIO_HINTS={shlex.quote(cray)}")
    for n, v in by_kind.get("ompio", {}).items():
        env_lines.append(f"export OMPI_MCA_{knob(n).library_key}={shlex.quote(v)}")
    if env_lines:
        put("env.sh", "# source this before the run: . ./env.sh\n" + "\n".join(env_lines) + "\n")
    if by_kind.get("lfs"):
        cmd = lfs_setstripe(by_kind["lfs"], output_dir or "OUTPUT_DIR")
        assert cmd is not None
        put("lfs.sh", "# run once on the job's own, still empty, output directory\n"
            + shlex.join(cmd) + "\n")
    if by_kind.get("launch"):
        launch = by_kind["launch"]
        put("slurm.txt", "# the job's srun line takes these options, or export the variables\n"
            "srun " + " ".join(f"{LAUNCH[n][2]}={v}" for n, v in launch.items()) + " ...\n"
            + "".join(f"export {LAUNCH[n][1]}={v}\n" for n, v in launch.items()))
    if by_kind.get("engine"):
        put("code-changes.txt", "".join(
            "- " + _CODE_WORDS.get(n, n + " = {v}").format(v=v) + "\n"
            for n, v in by_kind["engine"].items()))
    return written
