"""The search space: which knobs a tune turns and to which values, validated before any trial.

Built from presets (``--preset mpiio``), command-line knobs (``--knob cb_nodes=1,2,4`` or just
``--knob cb_nodes`` for the knob's own exploration values) and a TOML file::

    [knobs]
    cb_buffer_size = ["1M", "4M", "16M"]
    romio_cb_write = "explore"          # the knob's own values

Every dimension also holds :data:`DEFAULT`: "leave it as the workload and the library have
it". The baseline trial is every knob at :data:`DEFAULT`, so a winner is always measured
against what the user runs today.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.tune.knobs import PRESET_NAMES, PRESETS, Knob, knob

DEFAULT = "(default)"


@dataclass(frozen=True)
class Dimension:
    knob: Knob
    values: tuple[str, ...]  # normalised, without DEFAULT

    @property
    def choices(self) -> tuple[str, ...]:
        return (DEFAULT, *self.values)


@dataclass(frozen=True)
class SearchSpace:
    dimensions: tuple[Dimension, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.knob.name for d in self.dimensions)

    def size(self) -> int:
        n = 1
        for d in self.dimensions:
            n *= len(d.choices)
        return n

    def baseline(self) -> dict[str, str]:
        return {d.knob.name: DEFAULT for d in self.dimensions}

    def without(self, names: Iterable[str]) -> SearchSpace:
        drop = set(names)
        return SearchSpace(tuple(d for d in self.dimensions if d.knob.name not in drop))

    def without_values(self, in_effect: dict[str, str]) -> SearchSpace:
        """Drop each knob's value that the baseline already runs with: measuring it again
        would only measure the defaults under another name."""
        dims = []
        for d in self.dimensions:
            current = in_effect.get(d.knob.name)
            values = tuple(v for v in d.values if v != current)
            if values:
                dims.append(Dimension(d.knob, values))
        return SearchSpace(tuple(dims))

    def to_json(self) -> dict[str, list[str]]:
        return {d.knob.name: list(d.values) for d in self.dimensions}

    @classmethod
    def from_json(cls, data: dict[str, list[str]]) -> SearchSpace:
        return cls(tuple(Dimension(knob(n), tuple(v)) for n, v in data.items()))


def _values(k: Knob, given: Sequence[str] | None) -> tuple[str, ...]:
    raw = list(k.explore) if not given else list(given)
    out: list[str] = []
    for v in raw:
        norm = k.normalise(str(v))
        if norm not in out:
            out.append(norm)
    return tuple(out)


def parse_knob_arg(text: str) -> tuple[str, list[str] | None]:
    """``name=v1,v2`` -> (name, [v1, v2]); ``name`` -> (name, None)."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not name:
        raise UsageError(f"--knob {text!r}: expected NAME or NAME=V1,V2,...")
    if not sep:
        return name, None
    values = [v for v in (x.strip() for x in rest.split(",")) if v]
    if not values:
        raise UsageError(f"--knob {text!r}: no values after '='")
    return name, values


def read_space_file(path: Path) -> list[tuple[str, list[str] | None]]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--space {path}: cannot read ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--space {path}: not valid TOML ({exc})") from None
    table: Any = data.get("knobs")
    if not isinstance(table, dict) or not table:
        raise UsageError(f"--space {path}: expected a [knobs] table with at least one knob")
    out: list[tuple[str, list[str] | None]] = []
    for name, vals in table.items():
        if vals == "explore":
            out.append((name, None))
        elif isinstance(vals, list) and vals:
            out.append((name, [str(v) for v in vals]))
        else:
            raise UsageError(f"--space {path}: knob {name}: expected a list of values "
                             "or \"explore\"")
    return out


def build_space(presets: Sequence[str], knob_args: Sequence[str],
                space_file: Path | None, implementation: str,
                preset_skips: Sequence[str] = ()) -> SearchSpace:
    """The space the user asked for. ``implementation`` ("romio" or "ompio") picks the MPI-IO
    preset's knobs; presets leave out knobs of the kinds in ``preset_skips`` (a command
    cannot change its own I/O calls). Explicit knobs override a preset's values."""
    wanted: dict[str, list[str] | None] = {}
    skipped: list[str] = []  # preset knobs a command cannot take
    for p in presets:
        if p not in PRESET_NAMES:
            raise UsageError(f"unknown preset {p!r}; presets: {', '.join(PRESET_NAMES)}")
        key = "mpiio-ompio" if p == "mpiio" and implementation == "ompio" else p
        for name in PRESETS[key]:
            if knob(name).kind in preset_skips:
                skipped.append(name)
                continue
            if name in ("cb_buffer_size", "cb_nodes") and implementation == "ompio":
                continue  # the hdf5/pnetcdf presets' ROMIO hints mean nothing to OMPIO
            wanted.setdefault(name, None)
    if space_file is not None:
        wanted.update(read_space_file(space_file))
    for arg in knob_args:
        name, values = parse_knob_arg(arg)
        wanted[name] = values
    if not wanted and skipped:
        raise UsageError(f"the search space is empty: --preset {', '.join(presets)} has only "
                         f"knobs that change the program's own I/O calls ({', '.join(skipped)}),"
                         " which a command cannot take; tune a command with --preset mpiio, "
                         "pnetcdf or lustre, or --knob with MPI-IO hints, Lustre striping or "
                         "Slurm placement (iolab tune --list-knobs)")
    if not wanted:
        raise UsageError("the search space is empty: give --preset, --knob or --space "
                         "(iolab tune --list-knobs shows every knob)")
    dims = []
    for name, values in wanted.items():
        k = knob(name)
        dims.append(Dimension(k, _values(k, values)))
    return SearchSpace(tuple(dims))
