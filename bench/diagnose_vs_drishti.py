#!/usr/bin/env python3
"""Compare ``iolab diagnose`` with Drishti: wall time and peak memory, per Darshan log.

Drishti (PyPI ``drishti-io``) is installed into a separate temporary venv, only for this
comparison. Logs: every shared log, plus a generated log with 64,000 file records (written
here from a real 3.41 log: same header and job region, a new name map and POSIX region).

    bench/diagnose_vs_drishti.py                  # full run (5 rounds), writes docs/benchmarks.md
    bench/diagnose_vs_drishti.py --quick          # one small log, no table (smoke test)
    bench/diagnose_vs_drishti.py --large-only     # the 64,000-file log alone, its own table
    bench/diagnose_vs_drishti.py --generate-only OUT.darshan

Peak memory is the maximum RSS that GNU time (/usr/bin/time, Debian package "time") reports
(it includes the children it waited for, so iolab's forked loader counts). Run it on an idle
machine: timings of a loaded one are wrong.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import benchtools as bt  # bench/ is on sys.path when a script runs
from benchdoc import replace_section

GNU_TIME = "/usr/bin/time"  # Debian package "time"

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
TEMPLATE = SHARED / "darshan-generated" / "posix_write_1M_x_64B.darshan"
HEADER = 32 + 65 * 16 + 64 * 4  # Darshan 3.41 header
POSIX_INDEX = 1 + 1  # map slot: slot 0 is the name map, then module ids (POSIX_MOD = 1)


def generate_log(out: Path, nfiles: int = 64_000) -> Path:
    """A 3.41 log with ``nfiles`` POSIX records (1 process, 16 x 4 KiB writes per file)."""
    data = TEMPLATE.read_bytes()
    maps = list(struct.unpack_from("<130Q", data, 32))
    name_off = maps[0]
    job = data[HEADER:name_off]  # compressed job region, kept as is
    rec0 = zlib.decompress(data[maps[2 * POSIX_INDEX]:][:maps[2 * POSIX_INDEX + 1]])
    cnt = bytearray(69 * 8)
    fct = bytearray(rec0[16 + 69 * 8:])
    struct.pack_into("<3d", fct, 8 * 8, 0.0, 0.002, 0.001)  # read, write, meta time (s)

    def setc(i: int, v: int) -> None:
        struct.pack_into("<q", cnt, 8 * i, v)

    # POSIX counters by index (darshan 3.5 order): OPENS 0, WRITES 4, BYTES_WRITTEN 15,
    # MAX_BYTE_WRITTEN 17, CONSEC 19, SEQ 21, SIZE_WRITE_1K_10K 42, ACCESS1 57 / COUNT 61.
    # MMAPS 7 (-1: not counted), MEM_ALIGNMENT 24, FILE_ALIGNMENT 26, MAX_BYTE_READ 16 (-1).
    for i, v in ((0, 1), (4, 16), (15, 16 * 4096), (17, 16 * 4096 - 1), (19, 15), (21, 15),
                 (42, 16), (57, 4096), (61, 16), (7, -1), (24, 8), (26, 4096), (16, -1)):
        setc(i, v)
    names = bytearray()
    recs = bytearray()
    for k in range(nfiles):
        rid = (0x9E3779B97F4A7C15 * (k + 1)) & ((1 << 64) - 1)
        path = f"/scratch/run/out/d{k // 1000:03d}/file_{k:06d}.dat".encode()
        names += struct.pack("<Q", rid) + path + b"\0"
        recs += struct.pack("<Qq", rid, 0) + cnt + fct
    zn, zr = zlib.compress(bytes(names)), zlib.compress(bytes(recs))
    new_maps = [0] * 130
    new_maps[0], new_maps[1] = name_off, len(zn)
    new_maps[2 * POSIX_INDEX], new_maps[2 * POSIX_INDEX + 1] = name_off + len(zn), len(zr)
    head = bytearray(data[:HEADER])
    struct.pack_into("<130Q", head, 32, *new_maps)
    out.write_bytes(bytes(head) + job + zn + zr)
    return out


def measure(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one command.

    Through GNU time: a child forked (or vforked) from this script would carry this
    script's own peak RSS into its ru_maxrss (Linux keeps the pre-exec high-water mark)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        p = subprocess.run([GNU_TIME, "-q", "-f", "%M", "-o", rss.name, *cmd], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        kib = int(rss.read().split()[-1] or 0)
    return wall, kib / 1024, p.returncode


def drishti_venv(root: Path) -> Path:
    venv = root / "drishti-venv"
    if not (venv / "bin" / "drishti").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "drishti-io"], check=True)
    return venv / "bin" / "drishti"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small log, print only")
    ap.add_argument("--generate-only", metavar="OUT", help="write the 64,000-file log and exit")
    ap.add_argument("--large-only", action="store_true",
                    help="only the generated many-file log (its own section of the table)")
    ap.add_argument("--files", type=int, default=64_000)
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds per log; in each, both tools once, the order turned")
    ap.add_argument("--workdir", default=None, help="keep the Drishti venv and logs here")
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    args = ap.parse_args()
    if args.generate_only:
        generate_log(Path(args.generate_only), args.files)
        return 0
    root = Path(args.workdir or tempfile.mkdtemp(prefix="iolab-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    if args.quick:
        logs = [TEMPLATE]
    elif args.large_only:
        logs = [generate_log(root / f"generated_{args.files}_files.darshan", args.files)]
    else:
        logs = sorted((SHARED / "darshan-logs").rglob("*.darshan"))
        logs += sorted((SHARED / "darshan-generated").glob("*.darshan"))
        logs.append(generate_log(root / f"generated_{args.files}_files.darshan", args.files))
    drishti = drishti_venv(root)
    # the report to stdout (discarded by measure): what a user waits for
    iolab = [sys.executable, "-m", "iolab", "diagnose", "--json"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    rows = []
    for log in logs:
        cmds = {"iolab": iolab + [str(log)], "drishti": [str(drishti), str(log)]}
        res: dict[str, bt.PerRound] = {"iolab": [], "drishti": []}
        codes: dict[str, set[int]] = {"iolab": set(), "drishti": set()}
        for r in range(1 if args.quick else args.rounds):
            order = ["iolab", "drishti"] if r % 2 == 0 else ["drishti", "iolab"]
            for tool in order:
                wall, mib, rc = measure(cmds[tool], env)
                codes[tool].add(rc)
                res[tool].append({"s": wall, "mib": mib} if rc == 0 else None)
        rows.append((log, res, codes))
        print(f"{log.name[:50]:50} iolab {bt.fmt(bt.values(res['iolab'], 's'))} s "
              f"rc={sorted(codes['iolab'])}   drishti {bt.fmt(bt.values(res['drishti'], 's'))}"
              f" s rc={sorted(codes['drishti'])}", flush=True)
    if not args.quick:
        write_table(Path(args.out), rows, args.rounds,
                    "diagnose_vs_drishti_large" if args.large_only else "diagnose_vs_drishti")
    return 0


def write_table(out: Path, rows: list, rounds: int, section: str) -> None:
    title = ("### The many-file log alone (`bench/diagnose_vs_drishti.py --large-only`)"
             if section.endswith("_large") else
             "## iolab diagnose vs Drishti (`bench/diagnose_vs_drishti.py`)")
    lines = [title, "",
             f"{bt.machine()}", "",
             f"Wall time of `iolab diagnose --json LOG` and `drishti LOG` (0.8, its own venv), "
             f"each the whole command a user waits for (start-up included), {rounds} rounds "
             "a log, the two tools one after the other, the order turned each round; "
             "seconds and peak RSS (GNU time, children included) as median [min–max] over "
             "the rounds that exited 0; speed-up: Drishti's time over iolab's, ratio of "
             f"medians. {bt.CI_NOTE}. rc: the exit codes seen (a Drishti crash shows as "
             "non-zero; a tool that failed on a log has no time).", "",
             "| log | iolab s | drishti s | speed-up | 95% CI | verdict | iolab MiB | "
             "drishti MiB | rc iolab / drishti |", "|---|---|---|---|---|---|---|---|---|"]
    for log, r, codes in rows:
        i, d = r["iolab"], r["drishti"]
        rc = f"{','.join(map(str, sorted(codes['iolab'])))} / " \
             f"{','.join(map(str, sorted(codes['drishti'])))}"
        lines.append(f"| {log.name[:60]} | {bt.fmt(bt.values(i, 's'))} | "
                     f"{bt.fmt(bt.values(d, 's'))} | {bt.ratio_cells(d, i, 's')} | "
                     f"{bt.fmt(bt.values(i, 'mib'))} | {bt.fmt(bt.values(d, 'mib'))} | {rc} |")
    replace_section(out, section, "\n".join(lines), after="diagnose_vs_drishti")


if __name__ == "__main__":
    raise SystemExit(main())
