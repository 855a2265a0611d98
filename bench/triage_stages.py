#!/usr/bin/env python3
"""Where a triage worker's CPU goes, per log: read (libdarshan-util into a RawJob), model
(build_model), diagnose, rows (the store's columns and fix texts), and read_log as the
worker runs it (hash, read, model, diagnose, rows together). CPU time (time.process_time),
not wall: on a shared machine the other processes' load stays out of it (mostly: caches
and a busy core still slow it; compare builds run back to back, best of a few).

The logs: the real corpora (../shared/darshan-logs, ../shared/darshan-generated) and the
folders given. A warm-up reads five logs first (imports, the cffi handle, the rule table:
what a long-running worker already has). Median and total CPU ms per log, per stage.

    bench/triage_stages.py                         # the shared corpora
    bench/triage_stages.py /tmp/farm --rounds 3    # and a log farm's logs, three passes
    bench/triage_stages.py --profile out.prof      # and cProfile of read_log, by own time
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
sys.path.insert(0, str(HERE.parent / "src"))

STAGES = ("read", "model", "diagnose", "rows", "read_log")


def corpus(extra: list[str]) -> list[Path]:
    logs = sorted((SHARED / "darshan-logs").rglob("*.darshan"))
    logs += sorted((SHARED / "darshan-generated").glob("*.darshan"))
    for folder in extra:
        logs += sorted(Path(folder).rglob("*.darshan"))
    return [p for p in logs if p.stat().st_size > 0]


def one_log(p: Path, prof: cProfile.Profile | None) -> dict[str, float] | None:
    """CPU ms of each stage on log ``p`` (None: the log cannot be read)."""
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.model.job import build_model
    from iolab.sources import load_source
    from iolab.triage import read
    from iolab.triage.columns import job_columns

    clock = time.process_time
    t0 = clock()
    try:
        raw = load_source(p, isolate=False)
    except Exception:  # noqa: BLE001 - a corrupt log: triage's row, no stage times
        return None
    t1 = clock()
    model = build_model([raw])
    t2 = clock()
    rep = diagnose(model, Thresholds(), read._rules())
    t3 = clock()
    job_columns(model, "key", "day")
    _ = [f.fix.text for f in rep.findings]
    t4 = clock()
    if prof is not None:
        prof.enable()
    read.read_log(str(p), isolate=False)
    if prof is not None:
        prof.disable()
    t5 = clock()
    return {k: v * 1000 for k, v in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", help="more folders of logs (walked recursively)")
    ap.add_argument("--rounds", type=int, default=1, help="passes over the logs")
    ap.add_argument("--profile", metavar="FILE", help="cProfile of read_log into FILE")
    a = ap.parse_args()
    from iolab.triage import read

    logs = corpus(a.folders)
    for p in logs[:5]:
        read.read_log(str(p), isolate=False)
    prof = cProfile.Profile() if a.profile else None
    ms: dict[str, list[float]] = {k: [] for k in STAGES}
    for _ in range(a.rounds):
        for p in logs:
            got = one_log(p, prof)
            for k, v in (got or {}).items():
                ms[k].append(v)
    n = len(ms["read_log"])
    print(f"{len(logs)} logs, {n} reads; CPU ms per log (median / mean):")
    for k in STAGES:
        print(f"  {k:9} {statistics.median(ms[k]):7.2f} {sum(ms[k]) / n:7.2f}")
    if prof is not None:
        prof.dump_stats(a.profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
