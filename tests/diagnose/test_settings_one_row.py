"""Adding a ROMIO hint is one row of the settings catalogue (iolab.settings): with the row
added (iolab's own data, patched for the test), diagnose's hints writer writes valid values
in every syntax (ROMIO hints file, Cray MPICH's variable) and drops invalid ones and the
default, and tune takes it as a knob, a space dimension and a winner's files. The engine
side is tests/engine/test_hint_values.py::test_a_new_catalogue_row_reaches_the_engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_artifacts import _scenario, all_problems_of

from iolab.diagnose import fixes
from iolab.settings import catalogue
from iolab.tune import artifacts, objective, space
from iolab.tune.knobs import all_knobs, knob

NEW = catalogue.Setting("romio_example_buffer", ("romio", "cray"), "bytes",
                        "an example buffer size", defaults={"romio": str(1 << 20)},
                        explore=("2M", "8M"))
OUT = "/lus/proj/run42/out.dat"


@pytest.fixture
def new_row(monkeypatch: pytest.MonkeyPatch) -> catalogue.Setting:
    monkeypatch.setattr(catalogue, "SETTINGS", (*catalogue.SETTINGS, NEW))
    return NEW


def test_diagnose_writes_a_new_row_in_every_syntax(new_row: catalogue.Setting) -> None:
    model, _ = _scenario("unknown-mpi-no-command")
    arts = fixes.romio_hints(model, {new_row.name: "4194304", "cb_nodes": "4"}, paths=[OUT])
    by_kind = {a.kind: a.content for a in arts}
    assert f"{new_row.name} 4194304\n" in by_kind["romio-hints"]
    assert f":{new_row.name}=4194304" in by_kind["mpich-hints"]
    assert f"{new_row.name}=4194304" in by_kind["ompio-mca"]  # no OMPIO equivalent: said so
    # the fix carries it as data, in each library's syntax, with its tune knob: what
    # tune --from-log reads
    carried = {(c.library, c.value, c.knob) for a in arts for c in a.settings
               if c.name == new_row.name}
    assert carried == {("romio", "4194304", new_row.name), ("cray", "4194304", new_row.name)}
    arts = fixes.romio_hints(model, {new_row.name: "4M", "cb_nodes": "4"}, paths=[OUT])
    body = next(a for a in arts if a.kind == "romio-hints").content
    assert f"# left out: {new_row.name}=4M (not valid for this job)" in body
    assert f"{new_row.name} " not in body.replace("# left out", "")
    arts = fixes.romio_hints(model, {new_row.name: str(1 << 20), "cb_nodes": "4"}, paths=[OUT])
    body = next(a for a in arts if a.kind == "romio-hints").content
    assert f"{new_row.name}=1048576 (ROMIO's default already)" in body


def test_without_the_row_diagnose_drops_the_hint() -> None:
    """The row is what makes it known: the same call without it writes nothing of it."""
    model, _ = _scenario("unknown-mpi-no-command")
    arts = fixes.romio_hints(model, {NEW.name: "4194304", "cb_nodes": "4"}, paths=[OUT])
    body = next(a for a in arts if a.kind == "romio-hints").content
    assert f"# left out: {NEW.name}=4194304 (not valid for this job)" in body
    assert all_problems_of(model, arts) == []


def test_tune_takes_a_new_row_as_a_knob(new_row: catalogue.Setting, tmp_path: Path) -> None:
    k = knob(new_row.name)
    assert k in all_knobs() and k.kind == "romio" and k.value_type == "size"
    assert k.normalise("8M") == str(8 << 20) and k.is_default("1048576")
    dims = space.build_space([], [f"{new_row.name}=2M,8M"], None, "romio").dimensions
    assert [d.knob.name for d in dims] == [new_row.name]
    params = {new_row.name: str(2 << 20)}
    assert objective.hints_of(params) == {new_row.name: str(2 << 20)}
    written = artifacts.write_artifacts(params, tmp_path)
    text = {p.name: p.read_text() for p in written}
    assert text["romio-hints"] == f"{new_row.name} 2097152\n"
    assert f"MPICH_MPIIO_HINTS='*:{new_row.name}=2097152'" in text["env.sh"]
