"""IO500's find over the run's ranks, as its pfind runs over MPI ranks on every node: the
launcher (mpirun, or srun inside Slurm) starts one walker per rank, the walkers split the tree
and each checks its own part, and the counts are summed.

The split needs no messages between ranks: every rank reads the same top of the tree, level
by level: the folders known to hold subfolders (a link count above 2), down to a level of many
folders a rank (where link counts say nothing, until a level holds a folder a rank). The files
of those shared folders are checked by one rank each (the folder's place in the walk, modulo
the ranks); every other folder met is walked whole by one rank, the widest first to the least
loaded rank (a folder's width: its directory size), so IO500's per-rank mdtest-easy trees
and its one wide mdtest-hard folder spread over the ranks as pfind's work stealing spreads
them. A folder wider than one rank's fair share of the whole (and than WIDE_FOLDER_BYTES:
IO500's one mdtest-hard folder of every rank's files, or a single mdtest-easy tree) is
shared inside: every rank lists it and checks every size-th of its sorted names (see
_wide). The tree does not change during a find, so every
rank computes the same split, and every folder is checked by exactly one rank: the counts are
the serial walk's. The walkers
write their counts and times to one small file each in a folder every node sees (the result
folder); the ranks start together, after a barrier through that folder (each leaves a mark
and waits for all), and the phase's runtime runs from the first rank's start to the last
rank's end, as pfind's from IO500's barrier to its last rank.

    python -m iolab.io500.find_ranks ROOT OUTDIR [--name GLOB] [--size BYTES] [--newer S]
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
from iolab.io500.find import Criteria, FindResult, is_leaf, scan_folder

# the rank and size each launcher gives its processes (Open MPI, MPICH/PMI, PMIx, Slurm)
_RANK_VARS = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
              ("PMIX_RANK", "PMIX_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS"))
MAX_SPLIT_DEPTH = 8
# the top of the tree every rank reads stops at a level of this many folders a rank
SHARED_FOLDERS_PER_RANK = 8
BARRIER_TIMEOUT_S = 60.0
# a folder is shared inside by every rank only from this directory size on (on ext4 about
# 1,500 entries of mdtest's names, on tmpfs about 3,000): below it one rank reads it sooner
# than every rank can list it
WIDE_FOLDER_BYTES = 64 * 1024


def rank_and_size(environ: dict[str, str] | None = None) -> tuple[int, int]:
    env = os.environ if environ is None else environ
    for rank, size in _RANK_VARS:
        if rank in env and size in env:
            return int(env[rank]), int(env[size])
    return 0, 1


def _stat(folder: str) -> os.stat_result | None:
    try:
        return os.stat(folder)
    except OSError:
        return None


def _shared(st: os.stat_result | None, depth: int, level: int, size: int) -> bool:
    """Whether every rank reads this folder of the top of the tree to find the folders below:
    one known to hold subfolders (link count above 2), down to a level of many folders per
    rank; where link counts say nothing (1), the old rule: until a level has a folder a rank."""
    if st is None or depth >= MAX_SPLIT_DEPTH:
        return False
    if st.st_nlink >= 2:
        return st.st_nlink > 2 and level < SHARED_FOLDERS_PER_RANK * size
    return level < size


def _assign(units: list[tuple[int, str]], size: int) -> list[list[str]]:
    """Each rank's folders: the widest first to the least loaded rank (its directory size is
    the width: it grows with the entries on every POSIX file system), ties to the lowest
    rank. Every rank computes the same answer from the same tree."""
    load = [0] * size
    mine: list[list[str]] = [[] for _ in range(size)]
    for width, folder in sorted(units, key=lambda u: (-u[0], u[1])):
        r = min(range(size), key=lambda i: (load[i], i))
        load[r] += max(width, 1)
        mine[r].append(folder)
    return mine


def _wide(units: list[tuple[int, str]], size: int) -> set[str]:
    """The folders every rank shares inside: each wider than a rank's fair share of all the
    walk's width (no assignment of whole folders could balance it) and than
    WIDE_FOLDER_BYTES. Sharing costs every rank a listing of the whole folder, but on a
    parallel file system a listing comes in pages of many entries per request (Lustre's
    readdir pages, GPFS's directory blocks) while the checks that cost (a stat per file whose
    name matched: one request each, to the metadata server and for the size to the data
    servers) are split size ways; index slices of one sorted listing need no message between
    ranks and no readdir cookie (pfind's -H splits a folder by telldir/seekdir offsets, off
    in IO500 because not every file system keeps them valid between processes). Folders no
    wider than a fair share stay whole, so IO500's equal per-rank mdtest-easy trees are not
    listed by every rank."""
    total = sum(width for width, _ in units)
    return {folder for width, folder in units
            if width >= WIDE_FOLDER_BYTES and width * size > total}


def _walk_whole(top: str, crit: Criteria) -> tuple[int, int, int, int]:
    """(found, checked, errors, folders read by name only) of top and everything below."""
    found = checked = errors = names_only = 0
    todo = [top]
    while todo:
        folder = todo.pop()
        leaf = is_leaf(_stat(folder))
        subdirs, n, m, e = scan_folder(folder, crit, leaf)
        checked, found, errors = checked + n, found + m, errors + e
        names_only += leaf
        todo += subdirs
    return found, checked, errors, names_only


def split_walk(root: str, crit: Criteria, rank: int, size: int) -> tuple[int, int, int, int]:
    """(found, checked, errors, folders read by name only) of rank's share of the walk of
    root (see the module)."""
    found = checked = errors = names_only = 0
    units: list[tuple[int, str]] = []
    level, place, depth = [root], 0, 0
    while level:
        below: list[str] = []
        for folder in level:
            st = _stat(folder)
            if not _shared(st, depth, len(level), size):
                units.append((st.st_size if st else 0, folder))
                continue
            subdirs, n, m, e = scan_folder(folder, crit)  # every rank reads it; one counts
            if place % size == rank:
                checked, found, errors = checked + n, found + m, errors + e
            place += 1
            below += sorted(subdirs)
        level, depth = below, depth + 1
    wide = _wide(units, size)
    tops = _assign([u for u in units if u[1] not in wide], size)[rank]
    for folder in sorted(wide):  # every rank lists it, checks its slice, walks its subfolders
        leaf = is_leaf(_stat(folder))
        subdirs, n, m, e = scan_folder(folder, crit, leaf, (rank, size))
        checked, found, errors = checked + n, found + m, errors + e
        names_only += leaf
        tops += subdirs
    for top in tops:
        f, c, e, n = _walk_whole(top, crit)
        found, checked, errors, names_only = found + f, checked + c, errors + e, names_only + n
    return found, checked, errors, names_only


def _wait_for_all(outdir: str, rank: int, size: int) -> None:
    """A barrier through the shared folder: each rank leaves a mark and waits for every
    rank's, so the walk's clock starts when the last rank is ready, as pfind's ranks start
    after IO500's MPI barrier (not while a rank's interpreter is still starting). A rank
    that never comes does not hold the others past BARRIER_TIMEOUT_S."""
    Path(outdir, f".ready.{rank}").touch()
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while sum(n.startswith(".ready.") for n in os.listdir(outdir)) < size:
        if time.monotonic() > deadline:
            return
        time.sleep(0.0005)


def _main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m iolab.io500.find_ranks")
    ap.add_argument("root")
    ap.add_argument("outdir")
    ap.add_argument("--name", default="*01*")
    ap.add_argument("--size", type=int)
    ap.add_argument("--newer", type=int)
    o = ap.parse_args(argv)
    rank, size = rank_and_size()
    ready = time.time()
    _wait_for_all(o.outdir, rank, size)
    start = time.time()
    found, checked, errors, names_only = split_walk(o.root, Criteria(o.name, o.size, o.newer),
                                                    rank, size)
    doc = {"rank": rank, "size": size, "found": found, "checked": checked, "errors": errors,
           "names_only_folders": names_only, "ready": ready, "start": start, "end": time.time()}
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
            *(["--newer", str(crit.newer_than_s)] if crit.newer_than_s is not None else [])]
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
