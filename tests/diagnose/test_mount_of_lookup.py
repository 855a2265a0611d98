"""The mount of a path, looked up by the path's folders, is the one the scan over every mount
found (the first in the facts' order), for awkward mounts and paths."""

from __future__ import annotations

import dataclasses
import random

import corpus
import pytest

from iolab.diagnose.jobfacts import job_facts
from iolab.model.job import build_model

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
from iolab.sources.darshan import load_darshan_log  # noqa: E402

MOUNTS = ["/", "/scratch", "/scratch/", "/scratch/a", "/scratch/ab", "/home", "/home/u/x.dat",
          "/lus//x", "/a/b/c/d", "/a/b", "/proj/", "/scratch/a/b/c"]
PARTS = ["", "scratch", "a", "ab", "b", "c", "d", "home", "u", "x.dat", "lus", "proj", "q"]


def _scan(mounts: tuple[tuple[str, str], ...], path: str) -> tuple[str, str] | None:
    """The lookup it replaces: every mount in order."""
    for mnt, typ in mounts:
        if path == mnt or path.startswith(mnt.rstrip("/") + "/"):
            return mnt, typ
    return None


def test_mount_of_is_the_first_mount_holding_the_path() -> None:
    """Expected: mount_of(path) equals the scan over every mount for 4,000 random mount
    tables and paths (repeats, "/", trailing "/", a file as a mount, "//") / was: the scan
    itself, 46 startswith calls a path on a node with 46 mounts."""
    logs = corpus.REAL_LOGS or corpus.GENERATED_LOGS
    if not logs:
        pytest.skip(corpus.REAL_MISSING)
    base = job_facts(build_model([load_darshan_log(logs[0], isolate=False)]))
    rng = random.Random(5)
    for _ in range(200):
        picked = rng.sample(MOUNTS, rng.randint(0, len(MOUNTS)))
        mounts = tuple(sorted(((m, rng.choice(["lustre", "nfs", "xfs"])) for m in picked),
                              key=lambda mt: -len(mt[0])))
        facts = dataclasses.replace(base, mounts=mounts)
        for _ in range(20):
            path = "/".join(rng.choice(PARTS) for _ in range(rng.randint(1, 6)))
            path = path if rng.random() < 0.2 else "/" + path
            assert facts.mount_of(path) == _scan(mounts, path), (mounts, path)
