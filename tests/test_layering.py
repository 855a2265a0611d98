"""One way down: every package of iolab imports only the packages below it (DESIGN.md's data
flow: sources -> model -> diagnose / settings -> tune; engine JSON -> results -> pages ->
the verbs that draw them). The table below is the order, as data; each module's imports
(top-level, inside functions and under TYPE_CHECKING alike) are checked against it, so an
import cycle between packages cannot come back hidden in a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import iolab

SRC = Path(iolab.__file__).parent

# The foundation: top-level modules every package may import. They import only each other.
BASE = frozenset({"errors", "units", "stats", "paths", "launch", "counters", "cli_common",
                  "backends"})
# package -> the packages it may import (besides itself and BASE). A new package gets a row.
ALLOWED: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "model": (),  # reads RawJobs only: no loader, verb or renderer
    "sources": ("model",),  # Darshan logs and iolab profiles -> RawJob
    "settings": (),  # the catalogue of I/O settings
    "runs": (),  # the engine's JSON document read into typed values (the measured-run model)
    "results": ("runs",),  # the database: runs, sweeps, tunes, trials, studies
    "pages": ("model", "runs"),  # HTML pages and plots; prepared data of runs and job models
    "buffer": (),
    "profile": ("model", "sources"),
    "diagnose": ("model", "sources", "settings", "results", "pages"),
    "bench": ("results", "settings", "runs"),  # striping: the catalogue's Lustre rows, lfs
    "hints": ("bench", "runs"),
    "ior": ("bench", "runs"),
    "mdtest": ("bench", "ior", "runs"),
    "io500": ("bench", "ior", "mdtest", "runs"),
    "sweep": ("bench", "results", "pages"),
    "study": ("bench", "sweep", "results", "pages"),
    "tune": ("bench", "model", "sources", "settings", "diagnose", "results", "pages", "runs"),
    "triage": ("model", "sources", "diagnose", "pages"),
    "compare": ("model", "sources", "diagnose", "results", "pages", "sweep", "study", "tune"),
    "report": ("model", "sources", "diagnose", "results", "pages", "sweep", "study", "tune"),
}.items()}
# Entry points above everything: the dispatcher finds verb modules by name (importlib).
ENTRY = frozenset({"cli", "__main__", "__init__"})


def _is_module(name: str) -> bool:
    return (SRC / f"{name}.py").is_file() or (SRC / name / "__init__.py").is_file()


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every iolab import in a file, wherever it stands."""
    here = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")[: -node.level]
                base = ".".join(parts + ([node.module] if node.module else []))
            # `from iolab import cli_common`: the names are modules (`__version__` is not)
            names = ([f"{base}.{a.name}" if _is_module(a.name) else base for a in node.names]
                     if base == "iolab" else [base])
            out += [(node.lineno, n) for n in names]
    return [(line, m) for line, m in out if m.split(".")[0] == "iolab"]


def _unit(module: str) -> str | None:
    """The package or base module an iolab module belongs to ('iolab' alone: None)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _owner(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_the_table_names_every_package_and_is_an_order() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(ALLOWED), f"place each package in ALLOWED: {packages ^ set(ALLOWED)}"
    # acyclic: a topological order exists
    left = dict(ALLOWED)
    while left:
        ready = [p for p, deps in left.items() if not (deps & set(left))]
        assert ready, f"ALLOWED has a cycle among {sorted(left)}"
        for p in ready:
            del left[p]


def _violations() -> list[str]:
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        me = _owner(path)
        if me in ENTRY:
            continue
        may = BASE if me in BASE else ALLOWED[me] | BASE
        for line, mod in _imports(path):
            to = _unit(mod)
            if to is None or to == me or to in may:
                continue
            bad.append(f"{path.relative_to(SRC)}:{line}: {me} imports {mod}")
    return bad


def test_every_package_imports_only_what_lies_below_it() -> None:
    bad = _violations()
    assert not bad, "imports against the order (tests/test_layering.py):\n" + "\n".join(bad)


@pytest.mark.parametrize("below, above", [("model", "sources"), ("results", "tune"),
                                           ("pages", "report"), ("diagnose", "tune")])
def test_the_order_holds_the_cycles_that_were_there(below: str, above: str) -> None:
    """expected: a lower package may not import the one above it / was: model <- sources
    loaders, results -> tune (tunes listed), report <-> diagnose (the log page), diagnose ->
    tune (a stored proof), all hidden in function-level imports."""
    assert above not in ALLOWED[below]
    assert below in ALLOWED[above]
