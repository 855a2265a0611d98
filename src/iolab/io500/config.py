"""IO500's ini file, read as ``io500 config.ini`` reads it (IO500/io500 ``src/ini-parse.c``).

The sections and their options are IO500's (``./io500 --list``, the io500 main branch of
2026-07, commit 02091cf): one table, in IO500's phase order. The reading follows IO500's
rules: ``[section]`` and ``key = value`` lines, ``#`` or ``;`` comments, names matched without
case, an empty value leaves the default, integers, booleans (``true``/``false``/``1``/``0``)
and floats checked. An unknown section or key, or a value of the wrong type, is one line
naming the line number, as IO500 refuses it; unlike IO500 (which falls back to
``./datafiles``), a file without ``datadir`` is refused too: a benchmark that writes terabytes
should not pick the current folder by itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from iolab.errors import UsageError

# (name, type, default, help); type: str|bool|int|uint|float. IO500's defaults, as text.
Opt = tuple[str, str, str | None, str]

_API: Opt = ("API", "str", None, "the API of this phase (IOR/mdtest -a)")
_RUN: Opt = ("run", "bool", "TRUE", "run this phase")
_FIND: tuple[Opt, ...] = (
    ("external-script", "str", None, "an external find script"),
    ("external-mpi-args", "str", "", "startup arguments of the external script"),
    ("external-extra-args", "str", "", "extra arguments of the external script"),
    ("nproc", "uint", None, "processes of the find (default: every rank)"),
    _RUN,
    ("pfind-queue-length", "int", "10000", "pfind's queue length"),
    ("pfind-steal-next", "bool", "FALSE", "pfind: steal from the next rank"),
    ("pfind-parallelize-single-dir-access-using-hashing", "bool", "FALSE",
     "pfind: readdir of one directory by several ranks"),
)

SECTIONS: dict[str, tuple[Opt, ...]] = {
    "global": (
        ("datadir", "str", None, "the directory where the IO500 runs (required)"),
        ("timestamp-datadir", "bool", "TRUE", "suffix the data directory with the timestamp"),
        ("resultdir", "str", "./results", "the result directory"),
        ("timestamp-resultdir", "bool", "TRUE", "suffix the result directory with the "
         "timestamp"),
        ("api", "str", "POSIX", "the API of every phase"),
        ("drop-caches", "bool", "FALSE", "run drop-caches-cmd before each phase"),
        ("drop-caches-cmd", "str", 'sudo -n bash -c "echo 3 > /proc/sys/vm/drop_caches"',
         "the cache purging command"),
        ("io-buffers-on-gpu", "bool", "FALSE", "I/O buffers on the GPU"),
        ("verbosity", "uint", "1", "verbosity 1-10"),
        ("scc", "bool", "FALSE", "the Student Cluster Competition's rules (30 s minimum)"),
        ("dataPacketType", "str", "timestamp", "IOR's data packet type"),
    ),
    "debug": (
        ("stonewall-time", "int", "300", "stonewall of the write phases; other than 300 "
         "INVALIDATES THE RUN"),
        ("pause-dir", "str", None, "pause between phases (INVALIDATES THE RUN)"),
    ),
    "ior-easy": (_API, ("transferSize", "str", "2m", "transfer size"),
                 ("blockSize", "str", "9920000m", "block size, a multiple of transferSize"),
                 ("filePerProc", "bool", "TRUE", "a file per process"),
                 ("uniqueDir", "bool", "FALSE", "a directory per process"), _RUN,
                 ("verbosity", "int", None, "IOR's verbosity")),
    "ior-easy-write": (_API, _RUN),
    "mdtest-easy": (_API, ("n", "uint", "1000000", "files per process"), _RUN),
    "mdtest-easy-write": (_API, _RUN),
    "mdworkbench": (_API, ("waitingTime", "float", "0.0", "waiting time"),
                    ("precreatePerSet", "uint", None, "files to precreate per set"),
                    ("filesPerProc", "uint", None, "files per iteration and set"), _RUN,
                    ("verbosity", "int", None, "verbosity")),
    "mdworkbench-create": (_RUN,),
    "timestamp": (),
    "find-easy": _FIND,
    "ior-hard": (_API, ("segmentCount", "int", "10000000", "segments of 47008 bytes"),
                 ("collective", "bool", None, "collective I/O"), _RUN,
                 ("verbosity", "int", None, "IOR's verbosity")),
    "ior-hard-write": (_API, ("collective", "bool", None, "collective I/O"), _RUN),
    "mdtest-hard": (_API, ("n", "uint", "1000000", "files per process"),
                    ("files-per-dir", "uint", None, "mdtest -I (INVALIDATES THE RUN)"), _RUN),
    "mdtest-hard-write": (_API, _RUN),
    "find": _FIND,
    "find-hard": _FIND,
    "mdworkbench-bench": (_RUN,),
    "ior-easy-read": (_API, _RUN),
    "mdtest-easy-stat": (_API, _RUN),
    "ior-hard-read": (_API, ("collective", "bool", None, "collective I/O"), _RUN),
    "mdtest-hard-stat": (_API, _RUN),
    "mdworkbench-delete": (_RUN,),
    "mdtest-easy-delete": (_API, _RUN),
    "mdtest-hard-read": (_API, _RUN),
    "mdtest-hard-delete": (_API, _RUN),
    "ior-rnd4K-easy-read": (_API, _RUN),
}

_SECTION = re.compile(r"^\s*\[\s*([0-9a-zA-Z_-]+)\s*\]\s*(\s[#;].*)?$")
_PAIR = re.compile(r"^\s*([0-9a-zA-Z_.-]+)\s*=\s*([^#;]*)\s*(\s[#;].*)?$")
_EMPTY = re.compile(r"^\s*([#;].*)?$")
_CHECKS = {"int": (re.compile(r"^-?[0-9]+$"), "integer"),
           "uint": (re.compile(r"^[0-9]+$"), "integer >= 0"),
           "float": (re.compile(r"^[0-9e.+-]+$"), "float")}


@dataclass
class Io500Config:
    """The ini's values by (section, option), IO500's spelling; unset ones are None."""

    path: str
    text: str
    values: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def get(self, section: str, name: str) -> str | None:
        return self.values[(section, name)]

    def flag(self, section: str, name: str) -> bool | None:
        v = self.get(section, name)
        return None if v is None else v == "TRUE"

    def number(self, section: str, name: str) -> int:
        return int(self.get(section, name) or 0)

    def render(self) -> str:
        """Every section and value, as IO500 writes its config.ini in the result folder."""
        out = []
        for section, opts in SECTIONS.items():
            out.append(f"[{section}]")
            out += [f"{name} = {self.get(section, name) or ''}" for name, *_ in opts]
            out.append("")
        return "\n".join(out) + "\n"


def _option(section: str, name: str) -> Opt | None:
    return next((o for o in SECTIONS[section] if o[0].lower() == name.lower()), None)


def parse_text(text: str, where: str) -> Io500Config:
    cfg = Io500Config(where, text, {(s, o[0]): o[2] for s, opts in SECTIONS.items()
                                    for o in opts})
    section: str | None = None
    lower = {s.lower(): s for s in SECTIONS}
    for number, line in enumerate(text.splitlines(), 1):
        at = f"{where} line {number}"
        if m := _SECTION.match(line):
            section = lower.get(m.group(1).lower())
            if section is None:
                raise UsageError(f"{at}: unknown section [{m.group(1)}]; IO500's sections "
                                 "are listed by 'iolab io500 --list'")
            continue
        if m := _PAIR.match(line):
            name, value = m.group(1), m.group(2).rstrip(" \t\r")
            if not value:
                continue  # IO500: an empty value keeps the default
            if section is None:
                raise UsageError(f"{at}: {name} = {value} is outside any [section]")
            opt = _option(section, name)
            if opt is None:
                raise UsageError(f"{at}: unknown option \"{name}\" in [{section}]; its "
                                 "options are listed by 'iolab io500 --list'")
            cfg.values[(section, opt[0])] = _typed(opt, value, at, section)
            continue
        if not _EMPTY.match(line):
            raise UsageError(f"{at}: unexpected content \"{line.strip()}\" (IO500 takes "
                             "[section], key = value and # comments)")
    if not cfg.get("global", "datadir"):
        raise UsageError(f"{where}: [global] datadir is not set; add 'datadir = DIR' (the "
                         "folder where the benchmark's files go)")
    return cfg


def _typed(opt: Opt, value: str, at: str, section: str) -> str:
    name, kind = opt[0], opt[1]
    if kind == "bool":
        if value.lower() in ("true", "1"):
            return "TRUE"
        if value.lower() in ("false", "0"):
            return "FALSE"
        raise UsageError(f"{at}: [{section}] {name} expects true or false, not \"{value}\"")
    if kind in _CHECKS and not _CHECKS[kind][0].match(value):
        raise UsageError(f"{at}: [{section}] {name} expects an {_CHECKS[kind][1]}, "
                         f"not \"{value}\"")
    return value


def read_config(path: str) -> Io500Config:
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not a text file"
        raise UsageError(f"{path}: cannot read the IO500 ini file ({why})") from None
    return parse_text(text, path)


def list_text() -> str:
    """``io500 --list``: every section and option with its help and default."""
    out = ["# Supported and current values of the ini file:"]
    for section, opts in SECTIONS.items():
        out.append(f"[{section}]")
        for name, _kind, default, helptext in opts:
            out += [f"# {helptext}", f"{name} = {default or ''}"]
        out.append("")
    return "\n".join(out) + "\n"
