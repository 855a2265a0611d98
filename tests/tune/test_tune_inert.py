"""Knobs that cannot act on the winner's calls are not part of it.

ROMIO reads its collective-buffering hints (cb_buffer_size, cb_nodes, cb_config_list,
romio_cb_write/read) and OMPIO its aggregation parameters only inside collective MPI-IO
calls. In a workload whose calls are all independent they change nothing, yet a search's
noisy runs can rank a configuration with one of them first (BTIO's independent method: a
winner with cb_config_list=*:2, "what mattered: cb_buffer_size 71%"). Expected: such a knob is
not tuned when no configuration of the space can make the calls collective; otherwise it is
left out of a winner whose calls are independent, with a note, the confirmation measures
what is left, and a winner that differed from the defaults only in such knobs is no winner
("keep the defaults")."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tunelab.replay import ReplayObjective

from iolab.tune.objective import BenchObjective, TrialOutcome
from iolab.tune.search import Tuner, key_of
from iolab.tune.workload import Workload, parse


@functools.cache
def workload(args: tuple[str, ...]) -> Workload:
    """The workload of these bench options, parsed once by bench's own parsers."""
    return parse(list(args))

INDEPENDENT = ["-a", "mpiio", "-t", "64k", "-b", "1m", "-w"]


@pytest.mark.parametrize("args, params, inert", [
    (INDEPENDENT, {"cb_buffer_size": "4194304", "romio_ds_write": "enable",
                   "striping_unit": "1048576"}, ("cb_buffer_size",)),
    (["--api=mpiio"], {"cb_nodes": "2", "cb_config_list": "*:2", "romio_cb_write": "disable",
                       "ompio.fcoll": "vulcan"},
     ("cb_nodes", "cb_config_list", "romio_cb_write", "ompio.fcoll")),
    ([*INDEPENDENT, "-c"], {"cb_buffer_size": "4194304"}, ()),  # collective calls
    (INDEPENDENT, {"cb_buffer_size": "4194304", "collective": "true"}, ()),  # made collective
    ([*INDEPENDENT, "--collective"], {"cb_nodes": "2", "collective": "false"}, ("cb_nodes",)),
    (["-a", "hdf5"], {"cb_buffer_size": "4194304"}, ()),  # metadata I/O can be collective
    (["-a", "pnetcdf"], {"cb_buffer_size": "4194304"}, ()),
    (["-t", "1m"], {"cb_buffer_size": "4194304"}, ()),  # POSIX: no MPI-IO at all
    (INDEPENDENT, {"cb_buffer_size": "(default)", "romio_ds_write": "enable"}, ()),
])
def test_which_knobs_are_inert_for_the_calls_a_configuration_makes(
        args: list[str], params: dict[str, str], inert: tuple[str, ...]) -> None:
    assert BenchObjective(workload(tuple(args))).inert(params) == inert


@dataclass
class RecordedIndependentRuns(ReplayObjective):
    """Recorded runs of an independent MPI-IO workload, judged by the bench objective's own
    rule for which knobs act."""

    bench_args: tuple[str, ...] = tuple(INDEPENDENT)

    def evaluate(self, params: Mapping[str, str], label: str) -> TrialOutcome:
        out = super().evaluate(params, label)
        out.implementation = "romio"  # as the engine's read-back says under MPICH
        return out

    def inert(self, params: Mapping[str, str]) -> tuple[str, ...]:
        return BenchObjective(workload(self.bench_args)).inert(params)


def tune(tmp_path: Path, knobs: list[str], samples: dict[str, list[float]],
         bench_args: tuple[str, ...] = tuple(INDEPENDENT)) -> tuple[Any, list[Any]]:
    from iolab.results import db
    from iolab.results import tunes as store
    from iolab.tune.space import build_space

    space = build_space([], knobs, None, "romio")
    objective = RecordedIndependentRuns(samples, {}, 0, bench_args=bench_args)
    conn = db.connect(tmp_path / f"t{len(list(tmp_path.iterdir()))}.db")
    tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 24, 4, 0)
    result = Tuner(objective, space, 24, 4, 0, conn, tid).run()
    return result, store.trials(conn, tid)


CB, DS, COLL = "cb_buffer_size", "romio_ds_write", "collective"


def recorded(knobs: dict[str, list[str]], speed: dict[tuple[str, str], float]
             ) -> dict[str, list[float]]:
    """Three runs of every configuration: 1000 MiB/s times the factor of each value set."""
    out = {}
    for combo in itertools.product(*(["(default)", *v] for v in knobs.values())):
        params = dict(zip(knobs, combo))
        value = 1000.0 * math.prod(speed.get(kv, 1.0) for kv in params.items())
        out[key_of(params)] = [value * 0.97, value, value * 1.03]
    return out


def test_a_knob_that_can_act_on_no_configuration_is_not_tuned(tmp_path: Path) -> None:
    """Independent calls and no knob that makes them collective: collective buffering can
    act nowhere, so no run is spent on it (and no noisy run can make it a winner)."""
    knobs = {CB: ["1048576", "4194304"], DS: ["enable"]}
    samples = recorded(knobs, {(DS, "enable"): 1.9, (CB, "4194304"): 1.25})
    result, trials = tune(tmp_path, [f"{CB}=1m,4m", f"{DS}=enable"], samples)
    assert any(n.startswith(f"{CB}: not tuned, it acts inside collective MPI-IO calls only")
               for n in result.notes), result.notes
    assert all(t.params.get(CB, "(default)") == "(default)" for t in trials)
    assert result.winner == {DS: "enable"}
    assert result.claim is not None and result.claim.significant
    # the same runs of a collective workload: the hint acts, is tuned, and wins with the other
    result, trials = tune(tmp_path, [f"{CB}=1m,4m", f"{DS}=enable"], samples,
                          bench_args=(*INDEPENDENT, "--collective"))
    assert result.winner == {CB: "4194304", DS: "enable"}
    assert not any("collective MPI-IO calls only" in n for n in result.notes)


def test_a_collective_buffering_hint_is_left_out_of_an_independent_winner(
        tmp_path: Path) -> None:
    """Collective calls are a knob of the space, so collective buffering is tuned; the
    search's best has it with independent calls (a noisy edge), and it is left out."""
    knobs = {CB: ["1048576", "4194304"], DS: ["enable"], COLL: ["true"]}
    samples = recorded(knobs, {(DS, "enable"): 1.9, (CB, "4194304"): 1.25,
                               (COLL, "true"): 0.8})
    result, trials = tune(tmp_path, [f"{CB}=1m,4m", f"{DS}=enable", f"{COLL}=true"], samples)
    assert result.winner == {DS: "enable"}  # the search's best had cb_buffer_size=4m too
    assert list(result.left_out) == [CB]
    assert any(n.startswith(f"{CB}: it acts inside collective MPI-IO calls only")
               for n in result.notes), result.notes
    confirm = [t for t in trials if t.phase == "confirm"]
    assert len(confirm) == 8 and all(t.params[CB] == "(default)" for t in confirm)
    assert result.claim is not None and result.claim.significant


def test_a_winner_only_in_inert_knobs_is_no_winner(tmp_path: Path) -> None:
    knobs = {CB: ["1048576", "4194304"], COLL: ["true"]}
    samples = recorded(knobs, {(CB, "4194304"): 1.5, (COLL, "true"): 0.8})
    result, trials = tune(tmp_path, [f"{CB}=1m,4m", f"{COLL}=true"], samples)
    assert result.winner == {} and result.claim is None
    assert not [t for t in trials if t.phase == "confirm"]
    assert any("only in knobs that do not act here: keep the defaults" in n
               for n in result.notes), result.notes


def test_list_knobs_says_which_knobs_act_in_collective_calls_only() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "iolab", "tune", "--list-knobs"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines()}
    for name in ("cb_buffer_size", "cb_nodes", "cb_config_list", "romio_cb_write",
                 "ompio.fcoll"):
        assert "acts in collective calls only" in lines[name], lines[name]
    for name in ("romio_ds_write", "striping_unit", "transfer"):
        assert "collective calls only" not in lines[name], lines[name]
