#!/usr/bin/env python3
"""Where the command's own process spends its CPU in ``iolab triage`` (not the readers'):
start-up (the interpreter and iolab's imports), reading (the pool's results taken in,
the store opened, without the Parquet writes), writing (the batches' Parquet files), the
report; and the total. CPU time (time.process_time: every thread of this process, none of
the pool's workers), not wall: on a shared machine the other processes' load stays out.

Each run reads the logs into a new store (a temporary folder) and reports it, in this
process, as ``iolab triage LOGS... --store NEW -j N -q`` would; then the report alone of that
store (``--store NEW --json``). Medians over the runs, in ms per log and in all.

    bench/triage_parent_cpu.py ../shared/darshan-generated /tmp/farm          # 3 runs, -j 1
    bench/triage_parent_cpu.py /tmp/farm --runs 5 -j 2 --format --csv
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
STAGES = ("start-up", "reading", "writing", "report", "total")


def _timed(mod: Any, name: str, key: str, acc: dict[str, float]) -> None:
    """``mod.name`` wrapped to add its CPU seconds to ``acc[key]``."""
    fn = getattr(mod, name)

    def wrapper(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            acc[key] = acc.get(key, 0.0) + time.process_time() - t0
    setattr(mod, name, wrapper)


def one_run(argv: list[str]) -> dict[str, float]:
    """CPU seconds of this process by stage: the first run in a process counts its start-up
    (process_time counts from the process's start)."""
    import iolab.cli
    from iolab.triage import cli, ingest, store

    acc: dict[str, float] = {"start-up": time.process_time()}
    saved = (store.write_batch, ingest.ingest, cli._report)
    _timed(store, "write_batch", "writing", acc)
    _timed(ingest, "ingest", "reading", acc)
    _timed(cli, "_report", "report", acc)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            rc = iolab.cli.main(["triage", *argv])
    finally:
        store.write_batch, ingest.ingest, cli._report = saved
    if rc != 0:
        raise SystemExit(f"iolab triage {' '.join(argv)}: exit {rc}")
    acc["total"] = time.process_time()
    acc["reading"] = acc.get("reading", 0.0) - acc.get("writing", 0.0)
    return acc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="folders of logs, as iolab triage takes them")
    ap.add_argument("--runs", type=int, default=3, help="runs, each in its own process")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="the pool's processes")
    ap.add_argument("--format", default="--json", help="the report's option (--json, --csv, "
                    "--text: none)")
    a = ap.parse_args()
    import json
    import subprocess

    fmt = [] if a.format == "--text" else [a.format]
    runs: dict[str, list[list[float]]] = {"read": [], "report-only": []}
    nlogs = 0
    for _ in range(a.runs):
        with tempfile.TemporaryDirectory(prefix="triage-parent-") as tmp:
            where = str(Path(tmp) / "store")
            for kind, argv in (("read", [*a.folders, "--store", where, "-j", str(a.jobs),
                                         "-q", *fmt]),
                               ("report-only", ["--store", where, *fmt])):
                out = subprocess.run([sys.executable, __file__, "--child", json.dumps(argv)],
                                     capture_output=True, text=True, check=True)
                got = json.loads(out.stdout)
                runs[kind].append([got.get(s, 0.0) for s in STAGES])
            nlogs = _stored_logs(Path(where))
    print(f"{nlogs} logs stored, {a.runs} runs, -j {a.jobs}; this process's CPU, median "
          "(ms per log / s in all):")
    for kind, rows in runs.items():
        med = [statistics.median(col) for col in zip(*rows)]
        cells = "  ".join(f"{s} {1000 * v / max(nlogs, 1):6.2f} / {v:5.2f}"
                          for s, v in zip(STAGES, med))
        print(f"  {kind:11} {cells}")
    return 0


def _stored_logs(where: Path) -> int:
    from iolab.triage import store

    con = store.connect(where)
    try:
        return int(con.execute("SELECT count(*) FROM jobs").fetchall()[0][0])
    finally:
        con.close()


if __name__ == "__main__":  # the pool's forkserver imports this file again: nothing at import
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        import json

        print(json.dumps(one_run(json.loads(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main())
