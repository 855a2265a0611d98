"""One option, one meaning: IOR's short letters are other spellings of iolab's long options,
with the same default, never a mode.

Expected: ``iolab bench -t 64k -b 256k`` runs the workload ``--transfer 64k --block 256k``
runs (a file per process). Was: the short letters switched on an "IOR mode" with IOR's
defaults, so the same sizes wrote one shared file (--layout segmented) and printed a note.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from bench_helpers import run_iolab

from iolab.bench import options
from iolab.cli import build_parser

# (IOR's spelling, iolab's long spelling): every alias of options.IOR_ALIASES
SPELLINGS = [
    (["-a", "POSIX"], ["--api", "posix"]),
    (["-b", "4m"], ["--block", "4m"]),
    (["-t", "64k"], ["--transfer", "64k"]),
    (["-s", "3"], ["--segments", "3"]),
    (["-F"], ["--layout", "fpp"]),
    (["-B"], ["--posix.mode", "direct"]),
    (["-e"], ["--fsync"]),
    (["-C"], ["--reorder"]),
    (["-c"], ["--collective"]),
    (["-w"], ["--write"]),
    (["-r"], ["--read"]),
    (["-i", "5"], ["--reps", "5"]),
    (["-k"], ["--keep"]),
    (["-o", "/scratch/me/f"], ["--path", "/scratch/me/f"]),
    (["-U", "hints.txt"], ["--hints-file", "hints.txt"]),
    (["-z"], ["--random"]),
    (["-Y"], ["--fsync-per-write"]),
    (["-D", "30"], ["--stonewall", "30"]),
    (["-u"], ["--unique-dir"]),
    (["--posix.odirect"], ["--posix.mode", "direct"]),
]


@pytest.fixture(scope="module")
def parser(engine: Path) -> argparse.ArgumentParser:
    return build_parser()


def test_every_alias_has_its_long_spelling_here() -> None:
    assert {short[0] for short, _ in SPELLINGS} == {a.flag for a in options.IOR_ALIASES}


@pytest.mark.parametrize("short,long", SPELLINGS, ids=[" ".join(s) for s, _ in SPELLINGS])
def test_short_and_long_spelling_give_one_engine_command(
        parser: argparse.ArgumentParser, short: list[str], long: list[str]) -> None:
    """expected the same engine options from either spelling / was a layout added for IOR's"""
    def engine_args(argv: list[str]) -> list[str]:
        ns = parser.parse_args(["bench", *argv])
        return options.engine_argv(options.set_options(ns))

    # with sizes given too: the line a user copies from an IOR script
    assert engine_args([*short, "-t", "4k"]) == engine_args([*long, "--transfer", "4k"])


def _dry_run_engine_line(workdir: Path, *argv: str) -> str:
    r = run_iolab("bench", "--dry-run", "--np", "2", "--path", str(workdir / "f"), *argv)
    assert r.returncode == 0, r.stderr
    assert "IOR flags used" not in r.stderr and not r.stderr.strip(), r.stderr
    return r.stdout


def test_dry_run_lines_are_identical(engine: Path, workdir: Path) -> None:
    """expected `-t 64k -b 4m -s 2 -i 2` and the long spellings to launch one engine command /
    was `--layout segmented` added to the short one"""
    short = _dry_run_engine_line(workdir, "-t", "64k", "-b", "4m", "-s", "2", "-i", "2")
    long = _dry_run_engine_line(workdir, "--transfer", "64k", "--block", "4m", "--segments",
                                "2", "--reps", "2")
    assert "--layout" not in short and "--transfer 64k" in short
    assert short == long


def _run(workdir: Path, db: Path, name: str, *argv: str) -> dict:
    target = workdir / name
    target.mkdir()
    r = run_iolab("bench", "--np", "2", "--api", "posix", *argv, "-k", "--path",
                  str(target / "f"), "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    assert "IOR flags used" not in r.stderr
    (run,) = r.json()["runs"]
    assert run["status"] == "ok"
    return {"config": run["engine"]["config"],
            "files": sorted((p.name, p.stat().st_size) for p in target.iterdir())}


def test_both_spellings_run_the_same_workload(engine: Path, db: Path, workdir: Path) -> None:
    """expected a file per process from `-t 16k -b 64k -s 2` as from `--transfer 16k --block
    64k --segments 2`, the engine's workload identical / was one shared file from the short"""
    short = _run(workdir, db, "short", "-t", "16k", "-b", "64k", "-s", "2")
    long = _run(workdir, db, "long", "--transfer", "16k", "--block", "64k", "--segments", "2")
    same = ("layout", "workload", "transfer_bytes", "block_bytes", "segments", "files",
            "rank_bytes", "total_bytes", "write", "read", "repetitions")
    assert {k: short["config"][k] for k in same} == {k: long["config"][k] for k in same}
    assert short["config"]["layout"] == "fpp" and short["config"]["files"] == 2
    assert short["files"] == long["files"] == [("f.0", 2 * 64 * 1024), ("f.1", 2 * 64 * 1024)]
    # everything else the engine recorded about its options is the same too, but the path
    rest = {k: v for k, v in short["config"].items() if k != "path"}
    assert rest == {k: v for k, v in long["config"].items() if k != "path"}
