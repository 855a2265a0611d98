#!/usr/bin/env python3
"""`iolab io500 --quick` side by side with the official io500 (IO500/io500 built outside the
repository: --io500 or $IO500), on the same ranks and the same ini file, interleaved inside
every round (io500, then iolab, in one round; the order swaps every round so that neither
always meets the file system the other just left): each phase's score (GiB/s or kIOPS, as
IO500 prints it) and the total score; ratio = iolab median / io500 median with its 95%
bootstrap interval over the paired rounds (iolab.stats, as every bench script) and a
verdict, goal: within noise of the official score.

Both read one ini: datadir and resultdir below --dir, [debug] stonewall-time = --stonewall
(the official io500's short-run setting; iolab --quick keeps it, at most 5 s), the ior and
mdtest sizes below. A run at this size is not valid for submission, for both tools; the
comparison is of what each does with the same settings.

    bench/io500_vs_io500.py --io500 ~/io500/io500 [--np 2] [--rounds 10] [--stonewall 5]
    bench/io500_vs_io500.py --smoke    # tiny sizes, 2 rounds, prints only (no docs)
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

# bench/ is on sys.path when a script runs: its shared helpers
from benchtools import (
    CI_NOTE,
    RATIO_HEADER,
    ROOT,
    PerRound,
    announce,
    find_tool,
    fmt,
    machine,
    mpirun,
    publish,
    ratio_cells,
    run,
    values,
)

INI = """[global]
datadir = {dir}/data
resultdir = {dir}/res
timestamp-resultdir = FALSE
timestamp-datadir = FALSE

[debug]
stonewall-time = {stonewall}

[ior-easy]
transferSize = {transfer}
blockSize = {block}

[mdtest-easy]
n = {files}

[ior-hard]
segmentCount = {segments}

[mdtest-hard]
n = {files}
"""
# IO500's phase and score lines (its print_result and score line)
PHASE = re.compile(r"^\[(?:RESULT|      )\] +(\S+) +(\d+\.\d+) (?:GiB/s|kIOPS) : time")
SCORE = re.compile(r"^\[SCORE \] Bandwidth (\d+\.\d+) GiB/s : IOPS (\d+\.\d+) kiops : "
                   r"TOTAL (\d+\.\d+)")


def scores_of(summary: str) -> dict[str, float] | None:
    """Each phase's score and the score line's three values from a result_summary.txt (the
    same format for both tools); None without a score line (a failed run)."""
    out = {m[1]: float(m[2]) for m in map(PHASE.match, summary.splitlines()) if m}
    score = next((m for m in map(SCORE.match, summary.splitlines()) if m), None)
    if not score:
        return None
    out.update({"score: bandwidth": float(score[1]), "score: IOPS": float(score[2]),
                "score: TOTAL": float(score[3])})
    return out


def one_run(tool: str, o: argparse.Namespace, scratch: Path) -> dict[str, float] | None:
    """One run of one tool in a fresh folder below scratch; its scores, or None."""
    d = scratch / tool
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    ini = d / "config.ini"
    ini.write_text(INI.format(dir=d, stonewall=o.stonewall, transfer=o.transfer,
                              block=o.block, files=o.files, segments=o.segments))
    if tool == "io500":
        cmd = [*mpirun(o.np), o.io500, str(ini)]
    else:
        cmd = [sys.executable, "-m", "iolab", "io500", "--quick", "--np", str(o.np),
               "--db", str(d / "runs.db"), str(ini)]
    p = run(cmd, timeout=3600, extra_env={"PYTHONPATH": str(ROOT / "src")})
    summary = d / "res" / "result_summary.txt"
    got = scores_of(summary.read_text()) if p.returncode == 0 and summary.is_file() else None
    if got is None:
        print(f"{tool}: run failed (exit {p.returncode}): {(p.stderr or p.stdout)[-400:]}",
              file=sys.stderr)
    shutil.rmtree(d / "data", ignore_errors=True)
    return got


def table(theirs: PerRound, ours: PerRound, o: argparse.Namespace, wall: float) -> str:
    keys = [k for k in (next((r for r in theirs if r), None) or {})]
    rows = [f"| {k} | {fmt(values(theirs, k))} | {fmt(values(ours, k))} | "
            f"{ratio_cells(ours, theirs, k)} |" for k in keys]
    return "\n".join([
        "Measured with (the official io500 built from IO500/io500 outside the repository):",
        "",
        f"    bench/io500_vs_io500.py --io500 PATH --np {o.np} --rounds {o.rounds} "
        f"--stonewall {o.stonewall} --transfer {o.transfer} --block {o.block} "
        f"--segments {o.segments} --files {o.files}",
        "",
        machine(),
        f"{o.np} ranks, stonewall {o.stonewall} s, ior-easy -t {o.transfer} -b {o.block}, "
        f"ior-hard {o.segments} segments, mdtest n = {o.files}; {o.rounds} rounds, "
        f"interleaved; {wall / 60:.1f} min.",
        "",
        f"| phase | io500 median [min–max] | iolab median [min–max] | {RATIO_HEADER} |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        CI_NOTE + ". GiB/s for ior phases, kIOPS for the others, as IO500 prints them.",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--io500", help="the official io500 binary (default $IO500)")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--stonewall", type=int, default=5, help="[debug] stonewall-time, s")
    ap.add_argument("--transfer", default="1m")
    ap.add_argument("--block", default="256m", help="ior-easy blockSize per rank")
    ap.add_argument("--segments", type=int, default=20000, help="ior-hard segmentCount")
    ap.add_argument("--files", type=int, default=100000, help="mdtest n per rank")
    ap.add_argument("--dir", type=Path, default=Path.cwd() / "io500_vs_io500.scratch")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes, 2 rounds, 1 s stonewall; prints only")
    o = ap.parse_args()
    o.io500 = find_tool(o.io500, "IO500", "io500")
    if not o.io500:
        print("io500_vs_io500.py: no official io500: give --io500 PATH or set $IO500 "
              "(build IO500/io500 outside the repository)", file=sys.stderr)
        return 2
    if o.smoke:
        o.rounds, o.stonewall, o.transfer, o.block = 2, 1, "64k", "4m"
        o.segments, o.files = 100, 200
        o.dir = Path(tempfile.mkdtemp(prefix="io500_vs_io500."))
    announce(o.rounds * 2 * (13 * o.stonewall + 10), {"io500": o.io500})
    theirs: PerRound = []
    ours: PerRound = []
    start = time.monotonic()
    for i in range(o.rounds):
        order = ("io500", "iolab") if i % 2 == 0 else ("iolab", "io500")
        got = {tool: one_run(tool, o, o.dir) for tool in order}
        theirs.append(got["io500"])
        ours.append(got["iolab"])
        print(f"round {i + 1}/{o.rounds}: io500 TOTAL "
              f"{(got['io500'] or {}).get('score: TOTAL')}, iolab TOTAL "
              f"{(got['iolab'] or {}).get('score: TOTAL')}", file=sys.stderr)
    body = table(theirs, ours, o, time.monotonic() - start)
    shutil.rmtree(o.dir, ignore_errors=True)
    if o.smoke:
        print(body)
        return 0 if any(ours) and any(theirs) else 1
    return publish(o.output, "io500_vs_io500", "IO500: iolab io500 --quick against the "
                   "official io500", body, any(r is not None for r in ours))


if __name__ == "__main__":
    sys.exit(main())
