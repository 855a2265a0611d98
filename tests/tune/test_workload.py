"""A tune's workload as one typed value (iolab.tune.workload): every ``iolab bench`` option
parses and renders back to options that give the engine the same command line (so the same
JSON config), and a knob is set on the value, whatever spelling the user's options had."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from iolab import paths
from iolab.bench import options
from iolab.bench.subrun import check_args
from iolab.errors import UsageError
from iolab.tune.knobs import knob
from iolab.tune.workload import Workload, parse

# A value of each engine option type the engine's parser accepts (bools take none).
SAMPLE = {"int": "2", "size": "8k", "count": "3", "double": "0.5", "list": "cb_nodes=2"}
# String options whose values have a grammar of their own.
STRING_SAMPLE = {"api": "null", "grid": "8x8", "pgrid": "2x1"}
# Options the engine takes only beside others (its own checks, with MPI not started).
CONTEXT = {"grid": ["--layout", "subarray", "--pgrid", "2x1"],
           "pgrid": ["--layout", "subarray", "--grid", "8x8"],
           "steps": ["--layout", "subarray", "--grid", "8x8", "--pgrid", "2x1"],
           "elem": ["--layout", "subarray", "--grid", "8x8", "--pgrid", "2x1"]}
# iolab bench's own options (launch, placement, striping) and a value each.
LAUNCH = [["--np", "3"], ["--nodes", "1"], ["--ppn", "2"], ["--cpu-bind", "cores"],
          ["--cpus-per-rank", "2"], ["--cpu-freq", "low"], ["--core-spec", "1"],
          ["--membind", "0"], ["--stripe-count", "2"], ["--stripe-size", "1M"],
          ["--launcher", "mpirun"], ["--mpi", "openmpi"],
          ["--launcher-args=--mca io romio321"]]


def _table() -> list[options.EngineOption]:
    try:
        return options.load_table(paths.engine_binary("default"))
    except UsageError as exc:
        pytest.skip(f"the C engine is not built: {exc}")


def _engine_argv(argv: list[str]) -> list[str]:
    """What iolab bench hands the engine for these options (its launch line's engine part)."""
    return options.engine_argv(options.set_options(check_args(argv)))


def _engine_cases() -> list[tuple[str, list[str]]]:
    """One command line per engine option of the engine's own table (--list-options), and
    one per IOR alias: the option with a value of its type."""
    try:
        table = options.load_table(paths.engine_binary("default"))
    except UsageError:
        return []
    cases = []
    for o in table:
        if o.type == "action" or o.name in options.DRIVEN_BY_PYTHON or o.name in (
                "path", "hints-file"):  # two files, in test_the_file_options_round_trip
            continue
        if o.type == "bool":
            words = [f"--{o.name}"]
        elif o.choices:
            words = [f"--{o.name}", o.choices[-1]]
        else:
            words = [f"--{o.name}", STRING_SAMPLE.get(o.name, SAMPLE.get(o.type, "x"))]
        cases.append((o.name, [*CONTEXT.get(o.name, []), *words]))
    built = {o.name for o in table}
    for a in options.IOR_ALIASES:
        if a.option == "hints-file":
            continue  # a file: test_the_file_options_round_trip
        if a.option in built or (a.fallback and a.fallback[0] in built):
            value = [] if a.const is not None or a.option in ("collective", "write", "read",
                                                               "keep", "random", "reorder",
                                                               "fsync-per-write", "unique-dir") \
                else [STRING_SAMPLE.get(a.option, "4k" if a.option in ("block", "transfer")
                                        else "2")]
            cases.append((f"IOR {a.flag}", [a.flag, *value]))
    return cases


@pytest.mark.parametrize("name, argv", _engine_cases() or [("no engine", [])],
                         ids=lambda v: v if isinstance(v, str) else None)
def test_every_bench_option_parses_and_renders_back_to_the_same_engine_line(
        name: str, argv: list[str]) -> None:
    """expected: parse(argv).argv() gives the engine the same options as argv / was argv
    words edited by hand (a knob spelt -c removed only if its spelling was listed)."""
    _table()
    w = parse(argv)
    rendered = w.argv()
    assert parse(rendered) == w, (argv, rendered)
    assert _engine_argv(rendered) == _engine_argv(argv), (argv, rendered)


@pytest.mark.parametrize("argv", LAUNCH, ids=lambda a: a[0].split("=")[0])
def test_every_launch_option_round_trips(argv: list[str]) -> None:
    """expected: iolab bench's own options survive the round trip with their values."""
    _table()
    w = parse(argv)
    assert w.launch, argv  # not the default: the value is held
    assert parse(w.argv()) == w


def test_the_file_options_round_trip_and_the_engine_config_is_the_same(tmp_path: Path) -> None:
    """expected: a user's IOR-style line and its rendering run the engine with the same JSON
    config (the engine itself says) / was only compared as words."""
    _table()
    hints = tmp_path / "hints"
    hints.write_text("cb_nodes 2\n")
    user = ["-a", "MPIIO", "-F", "-t", "4k", "-b", "16k", "-w", "-r", "-e", "-i", "2", "-k",
            "-c", "-o", str(tmp_path / "f"), "-U", str(hints), "--hint",
            "romio_cb_write=enable", "--hint", "cb_config_list=*:2", "--np", "1"]
    w = parse(user)
    assert (w.api, w.hints["cb_config_list"], w.ranks) == ("mpiio", "*:2", 1)
    assert w.test_dir == tmp_path

    def config(argv: list[str]) -> dict:  # type: ignore[type-arg]
        engine = paths.engine_binary("default")
        out = subprocess.run([str(engine), *_engine_argv(argv), "--quiet"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120, check=True)
        return dict(json.loads(out.stdout)["config"])

    assert config(w.argv()) == config(user)


def test_knobs_are_set_on_the_value_whatever_the_user_wrote() -> None:
    """expected: collective=false removes -c as it removes --collective, a knob given again
    replaces the user's value (one hint, one transfer) / was argv words appended after the
    user's, and flags removed only in the spellings listed by hand."""
    _table()
    for spelling in ("-c", "--collective"):
        w = parse(["-a", "mpiio", spelling, "-t", "64k", "--hint", "cb_nodes=1"])
        assert w.collective
        off = w.with_setting(knob("collective"), "false")
        assert not off.collective and "--collective" not in off.argv() and "-c" not in off.argv()
    trial = w.with_settings({"transfer": "1048576", "cb_nodes": "2",
                             "ompio.fcoll": "(default)"})
    assert trial.engine["transfer"] == "1048576" and dict(trial.hints) == {"cb_nodes": "2"}
    assert trial.argv().count("--hint") == 1 and w.engine["transfer"] == "64k"  # w unchanged


def test_output_options_in_a_workload_are_refused() -> None:
    """expected: one line saying tune stores and shows the trials / was the workload's --db
    storing the trials in another database than the tune's."""
    _table()
    for extra in (["--db", "x.db"], ["--json"], ["--label", "x"], ["--dry-run"]):
        with pytest.raises(UsageError, match="iolab tune stores and shows every trial"):
            parse(["-a", "null", *extra])
    assert Workload().argv() == []
