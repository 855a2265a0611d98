"""A small centre of Darshan logs with known problems of known cost, written with
libdarshan-util's write API (tests/diagnose/darshan_writer.py), in a year/month/day tree.

Each application's runs carry one injected problem whose net cost per run is known (the
seconds diagnose attributes to it, checked in the tests), so each application's wasted
node-hours are known in advance:

- ``climate.exe``: 1,024 ranks, no node count in the log (estimated from ranks per node);
  a checkpoint whose close takes CLOSE_S (slow-close); the costliest by design.
- ``wrf.exe``: 32 ranks on 4 nodes (every rank's host in DXT); each rank writes its file in
  64-byte pieces, SMALL_S on the slowest rank (small-requests).
- ``indep.exe``: 4 ranks write a shared file with independent MPI-IO calls (an experiment:
  collective calls to be tried), no waste injected.
- ``clean.exe``: 512 ranks write large sequential blocks: many node-hours, no waste.
Plus an empty, a truncated and a corrupt log: rows with their reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from darshan_writer import Dxt, Rec, write_log

MiB = 1 << 20
DAY = 86400
T0 = 1_717_200_000  # 2024-06-01 UTC
CLOSE_S = 300.0
SMALL_S = 60.0
RANKS_PER_NODE = 64  # the triage default used for climate.exe's estimate


@dataclass
class App:
    name: str
    uid: int
    runs: int
    nodes: int  # known or, for climate.exe, what ranks / RANKS_PER_NODE gives
    waste_per_run_s: float
    nodes_estimated: bool

    @property
    def wasted_node_hours(self) -> float:
        return self.runs * self.waste_per_run_s * self.nodes / 3600.0


@dataclass
class Centre:
    root: Path
    apps: dict[str, App] = field(default_factory=dict)
    logs: list[Path] = field(default_factory=list)
    bad: dict[Path, str] = field(default_factory=dict)  # log -> a word its reason contains


def _day_dir(root: Path, start: int) -> Path:
    import time

    y, m, d = time.gmtime(start)[:3]
    folder = root / f"{y:04d}" / f"{m:02d}" / f"{d:02d}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _climate(n: int) -> list[Rec]:
    ranks = 1024
    return [
        Rec("POSIX", "/scratch/climate/out.nc", -1, {
            "POSIX_OPENS": ranks, "POSIX_WRITES": 1000 * ranks,
            "POSIX_BYTES_WRITTEN": 1000 * 4 * MiB * ranks, "POSIX_SIZE_WRITE_4M_10M": 1000 * ranks,
            "POSIX_CONSEC_WRITES": 999 * ranks, "POSIX_SEQ_WRITES": 999 * ranks,
            "POSIX_MAX_BYTE_WRITTEN": 1000 * 4 * MiB * ranks - 1,
            "POSIX_F_WRITE_TIME": 10.0 * ranks, "POSIX_F_META_TIME": 0.01 * ranks,
            "POSIX_F_SLOWEST_RANK_TIME": 10.01, "POSIX_F_FASTEST_RANK_TIME": 9.9}),
        Rec("POSIX", f"/scratch/climate/ckpt.{n}", 0, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 64, "POSIX_BYTES_WRITTEN": 64 * 4 * MiB,
            "POSIX_SIZE_WRITE_4M_10M": 64, "POSIX_CONSEC_WRITES": 63, "POSIX_SEQ_WRITES": 63,
            "POSIX_MAX_BYTE_WRITTEN": 64 * 4 * MiB - 1, "POSIX_F_WRITE_TIME": 1.0,
            "POSIX_F_META_TIME": CLOSE_S, "POSIX_F_CLOSE_START_TIMESTAMP": 500.0,
            "POSIX_F_CLOSE_END_TIMESTAMP": 500.0 + CLOSE_S}),
    ]


def _wrf(ranks: int) -> tuple[list[Rec], list[Dxt]]:
    n = 1_000_000
    recs = [Rec("POSIX", f"/scratch/wrf/part.{r}", r, {
        "POSIX_OPENS": 1, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * 64,
        "POSIX_SIZE_WRITE_0_100": n, "POSIX_CONSEC_WRITES": n - 1, "POSIX_SEQ_WRITES": n - 1,
        "POSIX_MAX_BYTE_WRITTEN": n * 64 - 1, "POSIX_F_WRITE_TIME": SMALL_S,
        "POSIX_F_META_TIME": 0.01}) for r in range(ranks)]
    dxt = [Dxt("DXT_POSIX", f"/scratch/wrf/part.{r}", r, f"nid{r // 8:05d}",
               writes=[(0, 64, 1.0, 1.1)]) for r in range(ranks)]
    return recs, dxt


def _indep() -> list[Rec]:
    path, ranks, n = "/scratch/indep/shared.dat", 4, 65536
    return [
        Rec("POSIX", path, -1, {
            "POSIX_OPENS": ranks, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * 4096,
            "POSIX_MAX_BYTE_WRITTEN": n * 4096 - 1, "POSIX_SEQ_WRITES": n - 1,
            "POSIX_SIZE_WRITE_1K_10K": n, "POSIX_F_WRITE_TIME": 14.0,
            "POSIX_F_SLOWEST_RANK_TIME": 3.6, "POSIX_F_FASTEST_RANK_TIME": 3.3,
            "POSIX_SLOWEST_RANK_BYTES": n * 1024, "POSIX_FASTEST_RANK_BYTES": n * 1024}),
        Rec("MPI-IO", path, -1, {
            "MPIIO_COLL_OPENS": ranks, "MPIIO_INDEP_WRITES": n, "MPIIO_BYTES_WRITTEN": n * 4096,
            "MPIIO_SIZE_WRITE_AGG_1K_10K": n, "MPIIO_F_WRITE_TIME": 15.0,
            "MPIIO_F_SLOWEST_RANK_TIME": 3.8, "MPIIO_F_FASTEST_RANK_TIME": 3.7,
            "MPIIO_SLOWEST_RANK_BYTES": n * 1024, "MPIIO_FASTEST_RANK_BYTES": n * 1024}),
    ]


def _clean(ranks: int) -> list[Rec]:
    return [Rec("POSIX", "/scratch/clean/field.dat", -1, {
        "POSIX_OPENS": ranks, "POSIX_WRITES": 100 * ranks,
        "POSIX_BYTES_WRITTEN": 100 * 8 * MiB * ranks, "POSIX_SIZE_WRITE_4M_10M": 100 * ranks,
        "POSIX_CONSEC_WRITES": 99 * ranks, "POSIX_SEQ_WRITES": 99 * ranks,
        "POSIX_MAX_BYTE_WRITTEN": 100 * 8 * MiB * ranks - 1, "POSIX_F_WRITE_TIME": 2.0 * ranks,
        "POSIX_F_META_TIME": 0.001 * ranks, "POSIX_F_SLOWEST_RANK_TIME": 2.0,
        "POSIX_F_FASTEST_RANK_TIME": 1.9})]


def make_centre(root: Path, scale: int = 1) -> Centre:
    """The centre's logs under ``root``; ``scale`` multiplies each application's runs."""
    c = Centre(root)
    c.apps = {
        "climate.exe": App("climate.exe", 2001, 3 * scale, 1024 // RANKS_PER_NODE, CLOSE_S,
                           True),
        "wrf.exe": App("wrf.exe", 2002, 3 * scale, 4, SMALL_S, False),
        "indep.exe": App("indep.exe", 2003, 2 * scale, 1, 0.0, True),
        "clean.exe": App("clean.exe", 2004, 2 * scale, 8, 0.0, True),
    }
    jobid = 100
    for name, app in c.apps.items():
        for n in range(app.runs):
            jobid += 1
            start = T0 + (jobid % 5) * DAY + jobid * 60
            folder = _day_dir(root, start)
            out = folder / f"user{app.uid}_{name}_id{jobid}.darshan"
            dxt = None
            if name == "climate.exe":
                recs, nprocs, run = _climate(n), 1024, 1200.0
            elif name == "wrf.exe":
                recs, dxt = _wrf(32)
                nprocs, run = 32, 300.0
            elif name == "indep.exe":
                recs, nprocs, run = _indep(), 4, 20.0
            else:
                recs, nprocs, run = _clean(512), 512, 3600.0
            c.logs.append(write_log(out, nprocs=nprocs, run_time_s=run,
                                    exe=f"/apps/{name.split('.')[0]}/bin/{name} -i in.nml",
                                    records=recs, dxt=dxt, jobid=jobid, start=start,
                                    uid=app.uid))
    _bad_logs(c)
    return c


def _bad_logs(c: Centre) -> None:
    folder = _day_dir(c.root, T0)
    empty = folder / "empty.darshan"
    empty.write_bytes(b"")
    c.bad[empty] = "empty"
    good = c.logs[0].read_bytes()
    cut = folder / "cut.darshan"
    cut.write_bytes(good[: len(good) // 2])
    c.bad[cut] = "truncated"
    corrupt = folder / "corrupt.darshan"
    corrupt.write_bytes(b"this is not a Darshan log at all\n" * 8)
    c.bad[corrupt] = "not a Darshan log"
