"""IO500's find over the run's ranks, as its pfind runs over MPI ranks on every node: the
launcher (mpirun, or srun inside Slurm) starts one walker per rank, the walkers split the tree
and each checks its own part, and the counts are summed.

The split needs no messages between ranks: every rank reads the same top of the tree, level
by level, until a level holds at least as many folders as there are ranks (or the tree ends);
the files of the folders above that level are checked by one rank each (the folder's place in
the walk, modulo the ranks), and each folder of that level is walked whole by one rank
(likewise). The tree does not change during a find, so every rank computes the same split,
and every folder is checked by exactly one rank: the counts are the serial walk's. The walkers
write their counts and times to one small file each in a folder every node sees (the result
folder); the phase's runtime runs from the first rank's start to the last rank's end, as
pfind's from its barrier to its last rank.

    python -m iolab.io500.find_ranks ROOT OUTDIR [--name GLOB] [--size BYTES] [--newer NS]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from iolab import launch as launchers
from iolab.io500.find import Criteria, FindResult, scan_folder

# the rank and size each launcher gives its processes (Open MPI, MPICH/PMI, PMIx, Slurm)
_RANK_VARS = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
              ("PMIX_RANK", "PMIX_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS"))
MAX_SPLIT_DEPTH = 8


def rank_and_size(environ: dict[str, str] | None = None) -> tuple[int, int]:
    env = os.environ if environ is None else environ
    for rank, size in _RANK_VARS:
        if rank in env and size in env:
            return int(env[rank]), int(env[size])
    return 0, 1


def split_walk(root: str, crit: Criteria, rank: int, size: int) -> tuple[int, int, int]:
    """(found, checked, errors) of rank's share of the walk of root (see the module)."""
    found = checked = errors = 0
    level, place, depth = [root], 0, 0
    while level and len(level) < size and depth < MAX_SPLIT_DEPTH:
        below: list[str] = []
        for folder in level:  # every rank reads these; one rank counts each
            subdirs, n, m, e = scan_folder(folder, crit)
            if place % size == rank:
                checked, found, errors = checked + n, found + m, errors + e
            place += 1
            below += sorted(subdirs)
        level, depth = below, depth + 1
    for i, top in enumerate(level):
        if i % size != rank:
            continue
        todo = [top]
        while todo:
            subdirs, n, m, e = scan_folder(todo.pop(), crit)
            checked, found, errors = checked + n, found + m, errors + e
            todo += subdirs
    return found, checked, errors


def _main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m iolab.io500.find_ranks")
    ap.add_argument("root")
    ap.add_argument("outdir")
    ap.add_argument("--name", default="*01*")
    ap.add_argument("--size", type=int)
    ap.add_argument("--newer", type=int)
    o = ap.parse_args(argv)
    rank, size = rank_and_size()
    start = time.time()
    found, checked, errors = split_walk(o.root, Criteria(o.name, o.size, o.newer), rank, size)
    doc = {"rank": rank, "size": size, "found": found, "checked": checked, "errors": errors,
           "start": start, "end": time.time()}
    tmp = Path(o.outdir, f".{rank}.json.part")
    tmp.write_text(json.dumps(doc))
    tmp.rename(Path(o.outdir, f"{rank}.json"))  # whole or absent, for the reader
    return 0


def rank_find(root: str, crit: Criteria, spec: launchers.LaunchSpec, shared_dir: str
              ) -> tuple[FindResult, list[dict[str, float]]]:
    """The walk over spec.np ranks launched as spec says; (the summed result, each rank's
    counts). shared_dir (seen by every node) holds the ranks' files while it runs. A launch
    that fails, or a walker that does not report, is a RuntimeError saying so."""
    outdir = Path(shared_dir, f".iolab-find-{uuid.uuid4().hex[:8]}")
    outdir.mkdir()
    src = str(Path(__file__).resolve().parents[2])  # the iolab package's folder, for ranks
    spec = launchers.LaunchSpec(**{**spec.__dict__, "env": {
        **spec.env, "PYTHONPATH": os.pathsep.join(
            [src, *filter(None, [os.environ.get("PYTHONPATH")])])}})
    argv = [sys.executable, "-m", "iolab.io500.find_ranks", root, str(outdir), "--name",
            crit.name, *(["--size", str(crit.size)] if crit.size is not None else []),
            *(["--newer", str(crit.newer_than_ns)] if crit.newer_than_ns is not None else [])]
    try:
        cmd, env = launchers.build_command(spec, argv)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        ranks = [json.loads(f.read_text()) for f in sorted(outdir.glob("*.json"))]
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    if p.returncode != 0 or len(ranks) != spec.np:
        raise RuntimeError(f"the find's {spec.np} walkers did not all finish (exit "
                         f"{p.returncode}, {len(ranks)} reported): "
                         f"{(p.stderr or p.stdout).strip()[-300:]}")
    runtime = max(r["end"] for r in ranks) - min(r["start"] for r in ranks)
    return FindResult(sum(r["found"] for r in ranks), sum(r["checked"] for r in ranks),
                      sum(r["errors"] for r in ranks), runtime), ranks


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
