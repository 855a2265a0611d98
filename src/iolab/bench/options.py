"""``iolab bench``'s engine options, built from the engine's own option table.

The engine prints its table with ``iolab-bench --list-options`` (a JSON array of
``{name, key, type, owner, default, unit, choices, help}``), so names, defaults and help text
live once, in C. This module turns that table into argparse options, adds IOR's short flags as
aliases, and turns parsed values back into the engine's argv.

An alias is another spelling of one option, never a mode: ``-t 64k -b 4m`` is
``--transfer 64k --block 4m``, with the same defaults (a file per process unless --layout
says otherwise). Running an IOR command line with IOR's own defaults belongs to a verb of its
own, not to a switch hidden in which spelling was typed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.errors import UsageError

DEST_PREFIX = "engine:"  # namespace attributes holding engine option values

# Engine options Python drives itself: it reads the JSON from stdout, always asks for
# progress lines, and never wants the engine's own table.
DRIVEN_BY_PYTHON = frozenset({"json", "quiet", "progress"})

# IOR's names for the APIs (``-a POSIX``); iolab's are lower case.
IOR_API_NAMES = {"mpiio": "mpiio", "posix": "posix", "hdf5": "hdf5", "ncmpi": "pnetcdf",
                 "pnetcdf": "pnetcdf", "dummy": "null", "null": "null"}


@dataclass(frozen=True)
class EngineOption:
    name: str
    key: str | None
    type: str  # bool int size count double string enum list action
    owner: str
    default: str | None
    unit: str | None
    choices: tuple[str, ...] | None
    help: str

    @property
    def dest(self) -> str:
        return DEST_PREFIX + self.name


@dataclass(frozen=True)
class IorAlias:
    """An IOR flag: either another name of an engine option (``const`` None), or a flag that
    sets an engine option to ``const``. ``fallback`` is used when ``option`` is not built."""

    flag: str
    option: str
    const: str | bool | None
    ior: str  # what IOR calls it, for the help text
    fallback: tuple[str, str | bool] | None = None


IOR_ALIASES = (
    IorAlias("-a", "api", None, "api (POSIX, MPIIO, HDF5, NCMPI)"),
    IorAlias("-b", "block", None, "blockSize"),
    IorAlias("-t", "transfer", None, "transferSize"),
    IorAlias("-s", "segments", None, "segmentCount"),
    IorAlias("-F", "layout", "fpp", "filePerProc"),
    IorAlias("-B", "posix.mode", "direct", "useO_DIRECT (IOR 3)"),
    IorAlias("-e", "fsync", True, "fsync", fallback=("posix.mode", "fsync")),
    IorAlias("-C", "reorder", None, "reorderTasks"),
    IorAlias("-c", "collective", None, "collective"),
    IorAlias("-w", "write", None, "writeFile"),
    IorAlias("-r", "read", None, "readFile"),
    IorAlias("-i", "reps", None, "repetitions"),
    IorAlias("-k", "keep", None, "keepFile"),
    IorAlias("-o", "path", None, "testFile"),
    IorAlias("-U", "hints-file", None, "hintsFileName (IOR 3)"),
    IorAlias("-z", "random", None, "randomOffset"),
    IorAlias("-Y", "fsync-per-write", None, "fsyncPerWrite"),
    IorAlias("-D", "stonewall", None, "deadlineForStonewalling (with stoneWallingWearOut)"),
    IorAlias("-u", "unique-dir", None, "uniqueDir"),
    IorAlias("--posix.odirect", "posix.mode", "direct", "--posix.odirect (IOR 4)"),
)

# The tables read in this process, by the binary's path, mtime and size: a sweep checks each
# point, a tune or a study each workload, through bench's parser, which read the table again
# every time (~0.1 s of an engine start each); a rebuilt binary is read anew.
_TABLES: dict[tuple[str, int, int], list[EngineOption]] = {}


def load_table(engine: Path, timeout_s: float = 60) -> list[EngineOption]:
    """The engine's option table (``engine --list-options``), read once a process per build
    of the binary; a missing or broken engine is a one-line UsageError."""
    try:
        st = os.stat(engine)
        key: tuple[str, int, int] | None = (str(engine), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None  # not there: the run below says so in one line
    if key is not None and key in _TABLES:
        return list(_TABLES[key])
    table = _read_table(engine, timeout_s)
    if key is not None:
        _TABLES[key] = table
    return list(table)


def _read_table(engine: Path, timeout_s: float) -> list[EngineOption]:
    """Run ``engine --list-options``; a missing or broken engine is a one-line UsageError."""
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI singletons refuse root without these
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    try:
        out = subprocess.run([str(engine), "--list-options"], capture_output=True, text=True,
                             timeout=timeout_s, env=env, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot run {engine} --list-options: {exc}; re-run ./setup") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"{engine} --list-options failed ({last}); re-run ./setup")
    try:
        rows = json.loads(out.stdout)
        return [parse_option(r) for r in rows]
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"{engine} --list-options printed no option table ({exc}); "
                         "is it an iolab-bench? re-run ./setup") from None


def parse_option(row: Mapping[str, Any]) -> EngineOption:
    choices = row.get("choices")
    return EngineOption(
        name=str(row["name"]), key=row.get("key"), type=str(row["type"]),
        owner=str(row.get("owner") or "core"), default=row.get("default"),
        unit=row.get("unit"), choices=tuple(map(str, choices)) if choices else None,
        help=str(row.get("help") or ""))


def api_name(text: str) -> str:
    """``-a MPIIO`` / ``--api mpiio`` -> ``mpiio`` (IOR's spellings accepted)."""
    return IOR_API_NAMES.get(text.lower(), text.lower())


# Defaults iolab sets differently from the engine's own.
PYTHON_DEFAULTS = {"path": "a private directory .iolab-bench-* in the current directory, "
                           "removed at the end"}


def _help(opt: EngineOption, aliases: Sequence[IorAlias]) -> str:
    text = opt.help.replace("%", "%%")
    # the engine's own --list-options is not an iolab option: the help lists the choices
    text = text.replace("; --list-options shows the ones built", "")
    if opt.choices and opt.name != "api":
        text += f" (choices: {', '.join(opt.choices)})"
    if opt.name in PYTHON_DEFAULTS:
        text += f" (default: {PYTHON_DEFAULTS[opt.name]})"
    elif opt.default not in (None, "", "false") and opt.type != "bool":
        text += f" (default {opt.default}{' ' + opt.unit if opt.unit == 'us' else ''})"
    if opt.name == "api" and opt.choices:
        text += f"; built: {', '.join(opt.choices)}"
    if aliases:
        text += "; IOR: " + ", ".join(f"{a.flag} {a.ior}" for a in aliases)
    return text


def _add_one(group: argparse._ArgumentGroup, opt: EngineOption,
             aliases: Sequence[IorAlias]) -> None:
    flags = [a.flag for a in aliases] + [f"--{opt.name}"]
    kw: dict[str, Any] = {"dest": opt.dest, "default": None, "help": _help(opt, aliases)}
    if opt.type == "bool":
        group.add_argument(*flags, action="store_const", const=True, **kw)
        return
    metavar = opt.name.split(".")[-1].upper().replace("-", "_")
    if opt.type == "list":
        group.add_argument(*flags, action="append", metavar=metavar, **kw)
        return
    if opt.name == "api":
        kw["type"] = api_name  # checked against the built backends in run(), with a hint
    elif opt.choices:
        kw["choices"] = opt.choices
    group.add_argument(*flags, metavar=metavar, **kw)


def add_engine_options(parser: argparse.ArgumentParser, table: Sequence[EngineOption]) -> None:
    """One argparse option per engine option, grouped by owner, with IOR's flags."""
    by_name = {o.name: o for o in table}
    groups: dict[str, argparse._ArgumentGroup] = {}
    for opt in table:
        if opt.type == "action" or opt.name in DRIVEN_BY_PYTHON:
            continue
        if opt.owner not in groups:
            title = "engine options" if opt.owner == "core" else f"{opt.owner} options"
            groups[opt.owner] = parser.add_argument_group(title)
        same = [a for a in IOR_ALIASES if a.option == opt.name and a.const is None]
        _add_one(groups[opt.owner], opt, same)
    ior = parser.add_argument_group("IOR flags that set an engine option")
    for a in IOR_ALIASES:
        if a.const is None:
            continue
        target, const = (a.option, a.const)
        if target not in by_name and a.fallback:
            target, const = a.fallback
        if target not in by_name:
            continue  # that backend is not built
        ior.add_argument(a.flag, dest=DEST_PREFIX + target, action="store_const", const=const,
                         help=f"IOR {a.ior}: --{target}"
                              + ("" if const is True else f" {const}"))


def set_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine options the user set (name -> value), in the order argparse holds them."""
    return {k[len(DEST_PREFIX):]: v for k, v in vars(args).items()
            if k.startswith(DEST_PREFIX) and v is not None}


def check_hints_file(values: Mapping[str, Any]) -> None:
    """-U/--hints-file names a readable file: the engine opens a directory without an error
    and reads no line from it, so the run would go on without the hints asked for."""
    path = values.get("hints-file")
    if path is None:
        return
    where = Path(str(path))
    if where.is_dir():
        raise UsageError(f"-U/--hints-file {path}: a directory, not a hints file; give a "
                         "file of 'key value' lines (the ROMIO_HINTS format)")
    if not where.is_file():
        raise UsageError(f"-U/--hints-file {path}: no such file; give a file of 'key value' "
                         "lines (the ROMIO_HINTS format)")


def engine_argv(values: Mapping[str, Any]) -> list[str]:
    """Engine options back to the engine's command line (values passed as typed)."""
    argv: list[str] = []
    for name, value in values.items():
        if isinstance(value, list):
            for v in value:
                argv += [f"--{name}", str(v)]
        elif value is True:
            argv.append(f"--{name}")
        else:
            argv += [f"--{name}", str(value)]
    return argv


def built_apis(table: Sequence[EngineOption]) -> tuple[str, ...]:
    for o in table:
        if o.name == "api" and o.choices:
            return o.choices
    return ()


def check_api(values: Mapping[str, Any], table: Sequence[EngineOption]) -> None:
    api = values.get("api")
    built = built_apis(table)
    if api is None or not built or api in built:
        return
    known = {"mpiio": "MPI-IO (an MPI library)", "hdf5": "parallel HDF5 (libhdf5-openmpi-dev)",
             "pnetcdf": "PnetCDF (libpnetcdf-dev; Debian has none for MPICH)"}
    if api in known:
        raise UsageError(f"the {api} backend is not built into this iolab-bench (built: "
                         f"{', '.join(built)}); install {known[api]} and re-run ./setup")
    raise UsageError(f"unknown --api {api!r}; choose from {', '.join(built)}")
