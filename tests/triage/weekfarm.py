"""Six weeks of a small centre's Darshan logs whose trends are known by construction, written
with libdarshan-util's write API (tests/diagnose/darshan_writer.py), one folder per day.

Weeks start on Monday 2024-06-03 (UTC); each application runs RUNS_PER_WEEK times a week,
moving the same bytes each run, its slowest rank's I/O time varying by a few per cent
(a seeded jitter) around its base, times its slowdown factor in the weeks named:

- ``steady.exe`` (uid 3001, /scratch lustre): no slowdown: never flagged;
- ``slowing.exe`` (uid 3002, /scratch): 2.5x slower from week 3 on: flagged, the cause the
  application (the other /scratch application did not slow down);
- ``homea.exe`` and ``homeb.exe`` (uids 3003, 3004, /home nfs): 3x slower in week 4 only,
  both: /home is flagged in week 4, the applications' cause the file system;
- ``closer.exe`` (uid 3005, 128 ranks, no node count: 2 nodes at 64 ranks per node): a
  checkpoint close of CLOSE_S each run (slow-close): its savings a week are known.
Plus ``evil``: one job whose executable and file names carry HTML (``<script>``).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from darshan_writer import Rec, write_log

GIB = 1 << 30
MiB = 1 << 20
DAY = 86400
W0 = 1_717_372_800  # Monday 2024-06-03 00:00 UTC
WEEKS = 6
RUNS_PER_WEEK = 4
CLOSE_S = 200.0
MOUNTS = (("/scratch", "lustre"), ("/home", "nfs"), ("/", "ext4"))
EVIL_APP = "<script>alert(1)<&script>"  # no '/': the application name is all of it
EVIL_EXE = f"/apps/bin/{EVIL_APP}"
EVIL_PATH = "/scratch/<script>alert(2)</script>/out.dat"


@dataclass
class TrendApp:
    name: str
    uid: int
    folder: str  # where its files are (the file system)
    ranks: int
    base_io_s: float
    slow: dict[int, float] = field(default_factory=dict)  # week index -> slowdown factor


APPS = (
    TrendApp("steady.exe", 3001, "/scratch/steady", 64, 20.0),
    TrendApp("slowing.exe", 3002, "/scratch/slowing", 64, 20.0,
             {w: 2.5 for w in range(3, WEEKS)}),
    TrendApp("homea.exe", 3003, "/home/a", 16, 10.0, {4: 3.0}),
    TrendApp("homeb.exe", 3004, "/home/b", 16, 12.0, {4: 3.0}),
)


@dataclass
class WeekCentre:
    root: Path
    logs: list[Path] = field(default_factory=list)
    closer_runs: int = 0

    @property
    def closer_node_hours_per_week(self) -> float:
        return RUNS_PER_WEEK * CLOSE_S * 2 / 3600.0  # 2 nodes, every week of the six


def week_label(week: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(W0 + week * 7 * DAY))


def _shared_write(path: str, ranks: int, total: int, io_s: float) -> Rec:
    """One file every rank writes in 4 MiB blocks: a record reduced over the ranks whose
    slowest rank took ``io_s`` (the job's I/O time)."""
    n = total // (4 * MiB)
    return Rec("POSIX", path, -1, {
        "POSIX_OPENS": ranks, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": total,
        "POSIX_SIZE_WRITE_4M_10M": n, "POSIX_CONSEC_WRITES": n - ranks,
        "POSIX_SEQ_WRITES": n - ranks, "POSIX_MAX_BYTE_WRITTEN": total - 1,
        "POSIX_F_WRITE_TIME": io_s * ranks * 0.98, "POSIX_F_META_TIME": 0.001 * ranks,
        "POSIX_F_SLOWEST_RANK_TIME": io_s, "POSIX_F_FASTEST_RANK_TIME": io_s * 0.97})


def _folder(root: Path, start: int) -> Path:
    y, m, d = time.gmtime(start)[:3]
    out = root / f"{y:04d}" / f"{m:02d}" / f"{d:02d}"
    out.mkdir(parents=True, exist_ok=True)
    return out


def make_weeks(root: Path, seed: int = 31) -> WeekCentre:
    c = WeekCentre(root)
    rng = random.Random(seed)
    jobid = 5000
    for week in range(WEEKS):
        for run in range(RUNS_PER_WEEK):
            start = W0 + week * 7 * DAY + run * DAY + 3600
            for app in APPS:
                jobid += 1
                io_s = app.base_io_s * app.slow.get(week, 1.0) * rng.uniform(0.95, 1.05)
                rec = _shared_write(f"{app.folder}/out.{run}", app.ranks, 16 * GIB, io_s)
                c.logs.append(write_log(
                    _folder(root, start) / f"{app.name}_id{jobid}.darshan", nprocs=app.ranks,
                    run_time_s=600.0, exe=f"/apps/bin/{app.name} -c run.cfg", records=[rec],
                    jobid=jobid, start=start + jobid % 7, uid=app.uid, mounts=MOUNTS))
            jobid += 1
            c.logs.append(_closer(root, start + 7200, jobid, run))
            c.closer_runs += 1
    return c


def _closer(root: Path, start: int, jobid: int, n: int) -> Path:
    recs = [_shared_write("/scratch/closer/field.dat", 128, 8 * GIB, 4.0),
            Rec("POSIX", f"/scratch/closer/ckpt.{n}", 0, {
                "POSIX_OPENS": 1, "POSIX_WRITES": 64, "POSIX_BYTES_WRITTEN": 64 * 4 * MiB,
                "POSIX_SIZE_WRITE_4M_10M": 64, "POSIX_CONSEC_WRITES": 63,
                "POSIX_SEQ_WRITES": 63, "POSIX_MAX_BYTE_WRITTEN": 64 * 4 * MiB - 1,
                "POSIX_F_WRITE_TIME": 1.0, "POSIX_F_META_TIME": CLOSE_S,
                "POSIX_F_CLOSE_START_TIMESTAMP": 500.0,
                "POSIX_F_CLOSE_END_TIMESTAMP": 500.0 + CLOSE_S})]
    return write_log(_folder(root, start) / f"closer.exe_id{jobid}.darshan", nprocs=128,
                     run_time_s=1200.0, exe="/apps/bin/closer.exe", records=recs,
                     jobid=jobid, start=start, uid=3005, mounts=MOUNTS)


def add_evil(root: Path) -> Path:
    """A job whose executable and file names carry HTML: every page must show them as text."""
    return write_log(_folder(root, W0) / "evil.darshan", nprocs=4, run_time_s=60.0,
                     exe=EVIL_EXE, records=[_shared_write(EVIL_PATH, 4, GIB, 5.0)],
                     jobid=666, start=W0 + 100, uid=6666, mounts=MOUNTS)
