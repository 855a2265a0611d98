"""The winner as data and as files a user applies as written.

:func:`winner_changes` turns the winner's knobs into the data diagnose's fixes carry: the
settings it sets (:class:`~iolab.settings.change.SettingChange`, one per syntax, as
diagnose's) and the changes only the program's source can make
(:class:`~iolab.settings.change.CodeChange`). ``tune --json`` carries both; the files are
renderings of them through the writers diagnose uses (:mod:`iolab.settings.apply`), one per
way of applying a knob:

- ``romio-hints``: ``key value`` lines (the ROMIO_HINTS file format);
- ``env.sh``: ``ROMIO_HINTS`` pointing at that file (under Open MPI's OMPIO, after the
  switch to ROMIO; commented when the implementation is not known), Cray's
  ``MPICH_MPIIO_HINTS`` in its ``pattern:key=value:...`` syntax (a value with ``:``, as
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.settings import catalogue
from iolab.settings.apply import (
    ROMIO_SWITCH_VALUE,
    changes,
    cray_carried,
    cray_line,
    hints_file_of,
    lfs_setstripe,
    mca_lines,
    romio_env_lines,
)
from iolab.settings.change import LAYERS, CodeChange, SettingChange
from iolab.tune.knobs import LAUNCH, knob

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
# The layer an engine knob changes when the knob says it (else the workload's interface).
_KNOB_LAYER = {"posix.mode": "posix", "threads": "posix", "collective": "mpiio",
               "file-view": "mpiio", "hdf5.align": "hdf5", "hdf5.chunk": "hdf5",
               "hdf5.coll-metadata": "hdf5"}
_KNOB_CALLS = {"collective": ("MPI_File_write_at_all", "H5Pset_dxpl_mpio"),
               "file-view": ("MPI_File_set_view",), "hdf5.align": ("H5Pset_alignment",),
               "hdf5.chunk": ("H5Pset_chunk",),
               "hdf5.coll-metadata": ("H5Pset_all_coll_metadata_ops",
                                      "H5Pset_coll_metadata_write")}

HINTS, ENV, LFS, SLURM, CODE = ("romio-hints", "env.sh", "lfs.sh", "slurm.txt",
                                "code-changes.txt")


@dataclass
class WinnerChanges:
    """The winner as data: settings (in each syntax that carries them) and code changes,
    with the notes the Cray rule gives (what MPICH_MPIIO_HINTS cannot carry)."""

    settings: list[SettingChange] = field(default_factory=list)
    code: list[CodeChange] = field(default_factory=list)
    cray_notes: list[str] = field(default_factory=list)
    implementation: str | None = None  # the tune's MPI-IO implementation (None: unknown)

    def to_json(self) -> dict[str, Any]:
        """The fields diagnose's fixes carry, in the same shape (``fix.settings`` and
        ``fix.code_changes`` of its JSON)."""
        return {"settings": [s.to_json() for s in self.settings],
                "code_changes": [c.to_json() for c in self.code]}


def winner_changes(winner: Mapping[str, str], implementation: str | None = None,
                   interface: str = "posix") -> WinnerChanges:
    """The winner's knobs (name -> value, only knobs it sets) as data. ``implementation``:
    the MPI-IO implementation the tune ran ("ompio": the ROMIO switch goes with the hints);
    ``interface``: the workload's ``-a`` (the layer of a transfer or layout change)."""
    out = WinnerChanges(implementation=implementation)
    by_kind: dict[str, dict[str, str]] = {}
    for name, value in winner.items():
        by_kind.setdefault(knob(name).kind, {})[name] = value
    hints = {knob(n).library_key: v for n, v in by_kind.get("romio", {}).items()}
    out.settings += changes(hints, "romio", file=HINTS)
    if hints:
        if implementation == "ompio":
            out.settings += changes({catalogue.ROMIO_SWITCH: ROMIO_SWITCH_VALUE}, "ompio",
                                    file=ENV)
        carried, notes = cray_carried(hints, None)  # Cray MPICH: ':' separates its fields
        out.settings += changes(carried, "cray", file=ENV)
        out.cray_notes = [n.replace("# ", "# Cray MPICH: ", 1) for n in notes]
    out.settings += changes({knob(n).library_key: v
                             for n, v in by_kind.get("ompio", {}).items()}, "ompio", file=ENV)
    out.settings += changes(by_kind.get("lfs", {}), "lfs", file=LFS)
    out.settings += changes(by_kind.get("launch", {}), "slurm", file=SLURM)
    layer = interface if interface in LAYERS else "posix"
    out.code += [CodeChange(_CODE_WORDS.get(n, n + " = {v}").format(v=v),
                            _KNOB_LAYER.get(n, layer), _KNOB_CALLS.get(n, ()), knob=n, value=v)
                 for n, v in by_kind.get("engine", {}).items()]
    return out


def render(data: WinnerChanges, directory: Path, output_dir: str | None = None
           ) -> dict[str, str]:
    """The files of the winner (name -> content), from its data alone; ``directory``: where
    the hints file will be (ROMIO_HINTS names it)."""
    files: dict[str, str] = {}
    settings = data.settings
    if hints_file_of(settings):
        files[HINTS] = hints_file_of(settings)
    env: list[str] = []
    if HINTS in files:
        env += romio_env_lines(settings, f"{shlex.quote(str(directory.resolve()))}/{HINTS}",
                               data.implementation)
        env += data.cray_notes
        env += [line for line in [cray_line(settings)] if line]
    env += mca_lines(settings)
    if env:
        files[ENV] = "# source this before the run: . ./env.sh\n" + "\n".join(env) + "\n"
    lfs = {s.name: s.value for s in settings if s.library == "lfs"}
    if lfs:
        cmd = lfs_setstripe(output_dir or "OUTPUT_DIR", lfs.get("lfs.stripe_count"),
                                 lfs.get("lfs.stripe_size"))
        files[LFS] = ("# run once on the job's own, still empty, output directory\n"
                      + shlex.join(cmd) + "\n")
    launch = {s.name: s.value for s in settings if s.library == "slurm"}
    if launch:
        files[SLURM] = ("# the job's srun line takes these options, or export the variables\n"
                        "srun " + " ".join(f"{LAUNCH[n][2]}={v}" for n, v in launch.items())
                        + " ...\n"
                        + "".join(f"export {LAUNCH[n][1]}={v}\n" for n, v in launch.items()))
    if data.code:
        files[CODE] = "".join(f"- {c.change}\n" for c in data.code)
    return files


def write_artifacts(winner: Mapping[str, str], directory: Path,
                    output_dir: str | None = None, implementation: str | None = None,
                    interface: str = "posix") -> list[Path]:
    """Write the files for ``winner`` (knob name -> value, only knobs it sets) into
    ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    data = winner_changes(winner, implementation, interface)
    for name, text in render(data, directory, output_dir).items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written
