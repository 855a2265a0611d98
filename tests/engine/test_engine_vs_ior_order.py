"""bench/engine_vs_ior's order of the tools in a round: over the default 6 rounds each tool
that measures a workload goes first equally often, on every row (the rows fio skips
included). Nothing is run or timed here: the order is the script's own function."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # it imports benchtools from bench/
    loader = importlib.machinery.SourceFileLoader("engine_vs_ior", str(BENCH / "engine_vs_ior"))
    spec = importlib.util.spec_from_loader("engine_vs_ior", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "engine_vs_ior", module)  # its dataclasses look it up
    loader.exec_module(module)
    # both other tools found (their paths are only tested for being set here)
    monkeypatch.setitem(module.TOOL_PATHS, "IOR", "/opt/ior/bin/ior")
    monkeypatch.setitem(module.TOOL_PATHS, "fio", "/usr/bin/fio")
    return module


def firsts(script: ModuleType, case, rounds: int = 6) -> Counter[str]:
    tools = [t for t in script.TOOLS if script.runs(t, case)]
    return Counter(script.round_order(tools, r)[0] for r in range(rounds))


def test_each_tool_goes_first_equally_often_on_every_row(script: ModuleType) -> None:
    """expected iolab and IOR first in 3 rounds of 6 each on the MPI-IO strided rows (fio does
    not run them) / was iolab first in 4 and IOR in 2 (all three tools took turns, fio's
    turn passed to the next tool)."""
    for case in script.cases():
        count = firsts(script, case)
        assert len(set(count.values())) == 1, (case.name, count)
        assert set(count) == {t for t in script.TOOLS if script.runs(t, case)}, case.name


def test_who_runs_each_row(script: ModuleType) -> None:
    """expected fio on the plain POSIX rows only, IOR everywhere but the file-view row /
    guards the one place that says which tool measures which workload."""
    by_name = {c.name: c for c in script.cases()}
    strided = by_name["MPI-IO strided 4K indep"]
    assert [t for t in script.TOOLS if script.runs(t, strided)] == ["iolab", "IOR"]
    view = by_name["MPI-IO strided 4K coll+view"]
    assert [t for t in script.TOOLS if script.runs(t, view)] == ["iolab"]
    posix = by_name["POSIX fpp buffered 4K"]
    assert [t for t in script.TOOLS if script.runs(t, posix)] == ["iolab", "IOR", "fio"]
    assert not script.runs("fio", by_name["POSIX shared random 4K (-z)"])
