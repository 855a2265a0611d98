"""``iolab bench`` option parsing: the engine's table becomes the options, IOR's flags are
aliases, and values go back to the engine's command line unchanged."""

from __future__ import annotations

import argparse
import stat
from pathlib import Path

import pytest
from bench_helpers import run_iolab

from iolab.bench import options
from iolab.cli import build_parser


@pytest.fixture(scope="module")
def parser(engine: Path) -> argparse.ArgumentParser:
    return build_parser()


def parse(parser: argparse.ArgumentParser, *argv: str) -> argparse.Namespace:
    return parser.parse_args(["bench", *argv])


# (IOR flags, engine options they set). Every alias of options.IOR_ALIASES appears here.
IOR_CASES = [
    (["-a", "MPIIO"], {"api": "mpiio"}),
    (["-a", "POSIX"], {"api": "posix"}),
    (["-a", "NCMPI"], {"api": "pnetcdf"}),
    (["-a", "DUMMY"], {"api": "null"}),
    (["-b", "4m"], {"block": "4m"}),
    (["-t", "64k"], {"transfer": "64k"}),
    (["-s", "3"], {"segments": "3"}),
    (["-F"], {"layout": "fpp"}),
    (["-B"], {"posix.mode": "direct"}),
    (["-e"], {"fsync": True}),
    (["-C"], {"reorder": True}),
    (["-c"], {"collective": True}),
    (["-w"], {"write": True}),
    (["-r"], {"read": True}),
    (["-wr"], {"write": True, "read": True}),
    (["-i", "5"], {"reps": "5"}),
    (["-k"], {"keep": True}),
    (["-o", "/scratch/me/ior.dat"], {"path": "/scratch/me/ior.dat"}),
    (["-U", "hints.txt"], {"hints-file": "hints.txt"}),
    (["-z"], {"random": True}),
    (["-Y"], {"fsync-per-write": True}),
    (["-D", "30"], {"stonewall": "30"}),
    (["-u"], {"unique-dir": True}),
    (["--posix.odirect"], {"posix.mode": "direct"}),
]


@pytest.mark.parametrize("argv,expected", IOR_CASES, ids=[" ".join(c[0]) for c in IOR_CASES])
def test_ior_alias(parser: argparse.ArgumentParser, argv: list[str],
                   expected: dict[str, object]) -> None:
    assert options.set_options(parse(parser, *argv)) == expected


def test_every_ior_alias_is_tested() -> None:
    tested = {argv[0] for argv, _ in IOR_CASES if len(argv[0]) == 2 or argv[0][:2] == "--"}
    assert tested == {a.flag for a in options.IOR_ALIASES}


def test_ior_command_line_becomes_engine_command_line(parser: argparse.ArgumentParser) -> None:
    ns = parse(parser, "-a", "POSIX", "-F", "-B", "-e", "-C", "-w", "-r", "-t", "1m", "-b",
               "16m", "-s", "2", "-i", "3", "-k", "-o", "/tmp/x")
    argv = options.engine_argv(options.set_options(ns))
    pairs = {"--api": "posix", "--layout": "fpp", "--posix.mode": "direct", "--transfer": "1m",
             "--block": "16m", "--segments": "2", "--reps": "3", "--path": "/tmp/x"}
    for flag, value in pairs.items():
        assert argv[argv.index(flag) + 1] == value
    for flag in ("--fsync", "--reorder", "--write", "--read", "--keep"):
        assert flag in argv
    assert len(argv) == 2 * len(pairs) + 5


def test_long_options_repeatable_and_namespaced(parser: argparse.ArgumentParser) -> None:
    ns = parse(parser, "--api", "null", "--hint", "cb_nodes=1", "--hint", "romio_cb_write=enable",
               "--null.delay-us", "5", "--file-view", "--read-times", "3", "--layout", "strided")
    assert options.engine_argv(options.set_options(ns)) == [
        "--api", "null", "--layout", "strided", "--file-view", "--hint", "cb_nodes=1",
        "--hint", "romio_cb_write=enable", "--read-times", "3", "--null.delay-us", "5"]


def test_launch_options(parser: argparse.ArgumentParser) -> None:
    ns = parse(parser, "--np", "4", "--nodes", "2", "--ppn", "2", "--launcher", "srun",
               "--mpi", "mpich", "--launcher-args=--mpi=pmix -c 2", "--db", "x.db")
    assert (ns.np, ns.nodes, ns.ppn, ns.launcher, ns.mpi) == (4, 2, 2, "srun", "mpich")
    assert ns.launcher_args == "--mpi=pmix -c 2" and ns.db == "x.db"
    assert options.set_options(ns) == {}  # no engine option: the default job


def test_engine_options_python_drives_are_not_offered(parser: argparse.ArgumentParser) -> None:
    ns = parse(parser, "--json")
    assert ns.format == "json" and options.set_options(ns) == {}


def test_help_text_comes_from_the_engine_table(engine: Path) -> None:
    table = {o.name: o for o in options.load_table(engine)}
    r = run_iolab("bench", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for name in ("transfer", "posix.mode", "null.delay-us", "read-times"):
        assert f"--{name}" in text
        assert " ".join(table[name].help.split())[:40] in text
    assert "IOR: -t transferSize" in text


def _fake_engine(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "iolab-bench"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_other_verbs_never_start_the_engine(tmp_path: Path) -> None:
    marker = tmp_path / "engine-was-run"
    exe = _fake_engine(tmp_path, f"touch {marker}; exit 1")
    env = {"IOLAB_BENCH": str(exe)}
    # a read-only verb on a missing database: exit 2, nothing created, no engine started
    assert run_iolab("results", "--db", str(tmp_path / "r.db"), env=env).returncode == 2
    assert not marker.exists() and not (tmp_path / "r.db").exists()
    r = run_iolab("bench", "--help", env=env)  # help still works, and says why no options
    assert r.returncode == 0 and marker.exists()
    assert "Engine options are not available" in r.stdout


def test_broken_engine_is_one_line(tmp_path: Path) -> None:
    exe = _fake_engine(tmp_path, "echo garbage; exit 0")
    r = run_iolab("bench", "--api", "null", "--db", str(tmp_path / "r.db"),
                  env={"IOLAB_BENCH": str(exe)})
    assert r.returncode == 2
    assert len(r.err_lines()) == 1 and "printed no option table" in r.stderr
    assert "Traceback" not in r.stderr


def test_api_names_are_case_insensitive() -> None:
    assert [options.api_name(a) for a in ("MPIIO", "HDF5", "NCMPI", "posix", "Dummy")] == \
        ["mpiio", "hdf5", "pnetcdf", "posix", "null"]


def test_no_engine_option_means_default_job(parser: argparse.ArgumentParser) -> None:
    from iolab.bench import cli, jobs

    ns = parse(parser, "--np", "2")
    cases, scratch, _note = cli._cases(ns)
    assert [c.label for c in cases] == ["default:fpp", "default:shared"] and scratch
    assert all("--evict" in c.engine_args and "--fsync" in c.engine_args for c in cases)
    assert cases == list(jobs.DEFAULT_JOB)


def test_engine_table_is_read_lazily_only_once(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    exe = _fake_engine(tmp_path, f"echo x >> {counter}; echo '[]'")
    r = run_iolab("bench", "--dry-run", "--np", "1", env={"IOLAB_BENCH": str(exe)})
    assert r.returncode == 0, r.stderr
    assert counter.read_text().count("x") == 1
