"""What a fix recommends, as data: settings to change and changes to the program.

diagnose builds these (each :class:`~iolab.diagnose.rules.base.Fix` carries its list); its
text, JSON, HTML and the files ``--emit-fixes`` writes are renderings of them, and
``iolab tune --from-log`` reads them to know which knobs and values diagnose predicts (no
text is parsed back).

- :class:`SettingChange`: a row of the catalogue (:mod:`iolab.settings.catalogue`) set to a
  value, in the syntax of one MPI library (``romio``: a hints file named by ROMIO_HINTS;
  ``cray``: MPICH_MPIIO_HINTS; ``ompio``: ``OMPI_MCA_*``; a tune winner's ``lfs``:
  ``lfs setstripe``, ``slurm``: an srun option), for the files named (none: every file),
  and the fix file that carries it.
- :class:`CodeChange`: a change of the program's own I/O calls (collective transfers, a
  transfer size, an HDF5 property...), at the layer the program calls (MPI-IO, HDF5,
  PnetCDF, POSIX, stdio), with the calls it uses and, where ``iolab tune`` has one, the
  knob that stands for it on a proxy workload.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iolab.settings.catalogue import Setting, setting
from iolab.units import fmt_bytes

SYNTAXES = {"romio": "ROMIO hints file (ROMIO_HINTS)", "cray": "MPICH_MPIIO_HINTS",
            "ompio": "Open MPI MCA parameter (OMPI_MCA_*)",
            "lfs": "Lustre layout (lfs setstripe)", "slurm": "srun option (SLURM_*)"}
LAYERS = ("mpiio", "hdf5", "pnetcdf", "posix", "stdio")

# What a collective-transfer change is until it is measured: the counters show only the
# calls the program made, never how the same pattern runs collectively under its library.
EXPERIMENT = "an experiment: to be proven with iolab tune --from-log"


@dataclass(frozen=True)
class SettingChange:
    name: str  # the catalogue row: hint name or MCA parameter
    value: str  # as the library reads it (bytes, words)
    library: str  # whose syntax writes it: "romio", "cray" or "ompio" (SYNTAXES)
    paths: tuple[str, ...] = ()  # the files it is meant for (empty: every file of the job)
    file: str = ""  # the fix file that carries it (under --emit-fixes DIR/<finding>/)

    @property
    def row(self) -> Setting | None:
        return setting(self.name)

    @property
    def knob(self) -> str:
        """The ``iolab tune`` knob of the row ("" when tune does not turn it)."""
        row = self.row
        return row.knob_name if row is not None and row.explore else ""

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.name, "value": self.value, "library": self.library,
                "syntax": SYNTAXES.get(self.library, self.library), "paths": list(self.paths),
                "file": self.file, "knob": self.knob or None}


@dataclass(frozen=True)
class CodeChange:
    change: str  # what to do, in a few words: "collective transfers", "transfer size 4 MiB"
    layer: str  # the calls it changes: one of LAYERS
    calls: tuple[str, ...] = ()  # the library calls it uses (H5Pset_dxpl_mpio, ...)
    knob: str = ""  # the iolab tune knob that stands for it on a proxy ("" none)
    value: str = ""  # the knob's value
    direction: str = ""  # "read" / "write" when it concerns one direction
    experiment: bool = False  # predicted, not measured: to be proven by iolab tune --from-log
    snippet: str = ""  # the snippet topic that shows it in code

    def to_json(self) -> dict[str, Any]:
        return {"change": self.change, "layer": self.layer, "calls": list(self.calls),
                "knob": self.knob or None, "value": self.value or None,
                "direction": self.direction or None, "experiment": self.experiment,
                "snippet": self.snippet or None}


def collective(layer: str, direction: str = "", calls: tuple[str, ...] = ()) -> CodeChange:
    """Collective transfers at ``layer``: always an experiment (see EXPERIMENT)."""
    return CodeChange("collective transfers", layer, calls, knob="collective", value="true",
                      direction=direction, experiment=True)


_LAYER_NAMES = {"mpiio": "MPI-IO", "hdf5": "HDF5", "pnetcdf": "PnetCDF", "posix": "POSIX",
                "stdio": "stdio"}
_SYNTAX_SHORT = {"romio": "ROMIO", "cray": "Cray MPICH", "ompio": "Open MPI",
                 "lfs": "Lustre", "slurm": "Slurm"}


_LFS_WORDS = {"lfs.stripe_count": "stripe count", "lfs.stripe_size": "stripe size",
              "lfs.component_end": "component to"}


def _lfs_layouts(settings: list[SettingChange]) -> list[str]:
    """Each distinct Lustre layout of the ``lfs`` settings once (they are per file or new
    directory), with the number of paths that take it."""
    per_path: dict[tuple[str, ...], list[str]] = {}
    for s in settings:
        if s.library == "lfs":
            sized = s.name != "lfs.stripe_count" and s.value.isdigit()
            value = fmt_bytes(int(s.value)) if sized else (
                "the end of the file" if s.value == "-1" and s.name == "lfs.component_end"
                else s.value)
            per_path.setdefault(s.paths, []).append(f"{_LFS_WORDS.get(s.name, s.name)} {value}")
    layouts: dict[str, int] = {}
    for parts in per_path.values():
        text = ", ".join(parts)
        layouts[text] = layouts.get(text, 0) + 1
    return [f"Lustre {text} ({n} path{'s' if n > 1 else ''})" for text, n in layouts.items()]


def describe(settings: list[SettingChange], code: list[CodeChange]) -> list[str]:
    """The changes in a few words each, for the text and HTML reports: a setting once with
    the libraries whose syntax carries it, a Lustre layout once with the number of paths it
    is for, a code change with its layer and calls."""
    libs: dict[tuple[str, str], list[str]] = {}
    for s in settings:
        if s.library == "lfs":
            continue  # _lfs_layouts
        name = f"OMPI_MCA_{s.name}" if s.library == "ompio" else s.name
        libs.setdefault((name, s.value), []).append(_SYNTAX_SHORT.get(s.library, s.library))
    out = [f"{name}={value} ({', '.join(dict.fromkeys(who))})"
           for (name, value), who in libs.items()] + _lfs_layouts(settings)
    for c in code:
        calls = f": {', '.join(c.calls)}" if c.calls else ""
        exp = ", an experiment" if c.experiment else ""
        out.append(f"{c.change} ({_LAYER_NAMES.get(c.layer, c.layer)}{calls}{exp})")
    return out
