#!/usr/bin/env python3
"""How fast ``iolab triage`` reads a centre's logs: on 1 and 2 processes and on Dask.

Generates N Darshan logs with the tests' log farm (tests/triage/logfarm.py: real logs through
libdarshan-util, four applications with known problems, some with DXT, plus an empty, a cut
and a corrupt log), then reads them into a fresh store per run, the configurations
interleaved round by round (a drift of the machine hits each alike). Reported per
configuration: logs/s over the reading itself (the command's own "in X s", without start-up
and report), median [min-max] and its 95% interval over the rounds; the speed-up over -j 1
with its interval (rounds paired); the peak RSS of the largest process (the command or one
of its workers: os.wait4's ru_maxrss); then an incremental day: --increment new logs added
to a full store.

    bench/triage_scale.py                       # 100,000 logs, 5 rounds: an idle machine, hours
    bench/triage_scale.py --logs 40 --rounds 1  # a smoke run (no table written)
    bench/triage_scale.py --dask tcp://host:8786  # also on an existing cluster
    bench/triage_scale.py --publish             # the table into docs/benchmarks.md

Run it on an idle machine: the timings of a shared one are wrong.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for folder in (REPO / "tests" / "triage", REPO / "tests" / "diagnose", REPO / "src"):
    sys.path.insert(0, str(folder))

from benchdoc import replace_section  # noqa: E402
from benchtools import fmt, machine, mean_interval, paired, ratio_interval  # noqa: E402

SUMMARY = re.compile(r"(\d+) read, (\d+) could not be read, .* in ([0-9.]+) s$", re.M)


def generate(root: Path, logs: int, weeks_later: int = 0) -> int:
    """About ``logs`` logs under root (the farm makes 10 per scale step, plus 3 bad ones);
    ``weeks_later``: the same jobs that many weeks on, so new bytes (new logs, not copies)."""
    import logfarm

    logfarm.T0 += weeks_later * 7 * logfarm.DAY  # read at each make_centre call
    centre = logfarm.make_centre(root, scale=max(1, math.ceil((logs - 3) / 10)))
    return len(centre.logs) + len(centre.bad)


def run_triage(inputs: list[Path], where: Path, how: list[str]) -> dict[str, float]:
    """One run: its reading rate, wall time and the peak RSS of its largest process."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    cmd = [sys.executable, "-m", "iolab", "triage", *map(str, inputs), "--store", str(where),
           *how, "--json"]
    with tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # rusage of it and the children it waited
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        err.seek(0)
        text = err.read().decode(errors="replace")
    m = SUMMARY.search(text)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"triage_scale.py: {' '.join(how)} failed ({proc.returncode}): "
                         f"{text.strip()[-1000:]}")
    logs, secs = int(m.group(1)) + int(m.group(2)), float(m.group(3))
    return {"logs_per_s": logs / secs if secs > 0 else 0.0, "read_s": secs, "wall_s": wall,
            "peak_mib": usage.ru_maxrss / 1024.0, "logs": logs}


def _interval(vals: list[float]) -> str:
    ci = mean_interval(vals)
    return f"{ci[0]:.1f}–{ci[1]:.1f}" if ci else "–"


def table(results: dict[str, list[dict[str, float]]], nlogs: int, rounds: int,
          increment: dict[str, float] | None) -> str:
    base = results.get("-j 1", [])
    lines = [machine(), "",
             f"{nlogs} generated logs (tests/triage/logfarm.py), {rounds} rounds, "
             "configurations interleaved; a fresh store per run.", "",
             "| reading on | logs/s median [min–max] | 95% CI of the mean | speed-up vs -j 1 "
             "(95% CI) | peak RSS MiB, largest process |",
             "|---|---|---|---|---|"]
    for how, runs in results.items():
        rate = [r["logs_per_s"] for r in runs]
        a, b = paired([dict(r) for r in runs], [dict(r) for r in base], "logs_per_s")
        ci = ratio_interval(a, b)
        speed = (f"{sorted(a)[len(a) // 2] / sorted(b)[len(b) // 2]:.2f}"
                 + (f" ({ci[0]:.2f}–{ci[1]:.2f})" if ci else "")) if a and b else "–"
        lines.append(f"| `{how}` | {fmt(rate)} | {_interval(rate)} | {speed} | "
                     f"{fmt([r['peak_mib'] for r in runs])} |")
    if increment:
        lines += ["", f"Incremental day: {increment['logs']:.0f} new logs into the store of "
                  f"`-j 2` in {increment['read_s']:.1f} s of reading ({increment['wall_s']:.1f} "
                  "s in all, the stored logs skipped by path, size and time)."]
    lines += ["", "logs/s: logs read (or found unreadable) over the command's own reading "
              "time; intervals by bootstrap (bench/benchtools.py) from 5 rounds."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=int, default=100_000, help="logs generated (default 100000)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of every configuration")
    ap.add_argument("--dask", metavar="ADDRESS", help="also read on this Dask scheduler")
    ap.add_argument("--dask-local", type=int, default=2, metavar="N",
                    help="worker processes of the LocalCluster configuration (0: none)")
    ap.add_argument("--increment", type=int, default=1000, metavar="N",
                    help="new logs read into a full store at the end (0: none)")
    ap.add_argument("--workdir", type=Path, help="where logs and stores go (default: a "
                    "temporary folder, removed at the end)")
    ap.add_argument("--publish", action="store_true", help="write the table into "
                    "docs/benchmarks.md (section triage_scale)")
    a = ap.parse_args()
    configs = [["-j", "1"], ["-j", "2"]]
    if a.dask_local:
        configs.append(["--dask-local", str(a.dask_local)])
    if a.dask:
        configs.append(["--dask", a.dask])
    work = Path(tempfile.mkdtemp(prefix="triage-scale-", dir=a.workdir))
    try:
        t0 = time.monotonic()
        nlogs = generate(work / "logs", a.logs)
        print(f"triage_scale.py: {nlogs} logs generated in {time.monotonic() - t0:.0f} s; "
              f"{a.rounds} rounds of {len(configs)} configurations", file=sys.stderr)
        results: dict[str, list[dict[str, float]]] = {" ".join(c): [] for c in configs}
        for rnd in range(a.rounds):
            order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
            for how in order:
                where = work / "store"
                shutil.rmtree(where, ignore_errors=True)
                r = run_triage([work / "logs"], where, how)
                results[" ".join(how)].append(r)
                if how == ["-j", "2"]:  # the increment starts from a full -j 2 store: keep one
                    shutil.rmtree(work / "store-j2", ignore_errors=True)
                    where.rename(work / "store-j2")
                print(f"triage_scale.py: round {rnd + 1} {' '.join(how)}: "
                      f"{r['logs_per_s']:.1f} logs/s, {r['peak_mib']:.0f} MiB", file=sys.stderr)
        increment = None
        if a.increment:
            # the last round's full -j 2 store: reading 100,000 logs again only to have a
            # store would cost as long as a round
            where = work / "store-j2"
            generate(work / "new", a.increment, weeks_later=52)
            increment = run_triage([work / "logs", work / "new"], where, ["-j", "2"])
        body = table(results, nlogs, a.rounds, increment)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(body)
    if a.publish:
        replace_section(REPO / "docs" / "benchmarks.md", "triage_scale",
                        "## iolab triage: logs per second, 1-2 processes and Dask "
                        "(`bench/triage_scale.py`)\n\n" + body)
        print("triage_scale.py: table written to docs/benchmarks.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
