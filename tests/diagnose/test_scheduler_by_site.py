"""The scheduler a job's file names point at (a site's file system), found by scanning the
names joined by line breaks, is the one the startswith per name found: the first site in
SITE_SCHEDULERS' order with a name that is its prefix or starts with its head."""

from __future__ import annotations

import dataclasses
import random

import corpus
import pytest

from iolab.diagnose.jobfacts import SITE_SCHEDULERS, _scheduler
from iolab.model.job import build_model

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
from iolab.sources.darshan import load_darshan_log  # noqa: E402

PARTS = ["lus", "theta-fs0", "gpfs", "alpine", "alpine2", "alpine2x", "flare", "global",
         "cscratch1", "pscratch", "pscratchy", "lustre", "orion", "scratch", "project_",
         "project_12", "project", "x.dat", "", "\n", "a\n/pscratch"]


def _per_name(names: list[str]) -> tuple[str, str]:
    """The lookup it replaces: a startswith per name."""
    heads = [(p, p if p.endswith("_") else p + "/") for p, _, _ in SITE_SCHEDULERS]
    for (prefix, head), (_, sched, site) in zip(heads, SITE_SCHEDULERS):
        if any(n == prefix or n.startswith(head) for n in names):
            return sched, f"files on {prefix} ({site})"
    return "", ""


def test_scheduler_by_site_is_the_per_name_lookup() -> None:
    """Expected: _scheduler gives the per-name lookup's answer for 3,000 random sets of
    names and mounts (a prefix alone, its head, near misses such as /pscratchy and
    /gpfs/alpine2x, names holding line breaks) / was: a startswith per name (60 ms on a
    64,000-file log)."""
    logs = corpus.REAL_LOGS or corpus.GENERATED_LOGS
    if not logs:
        pytest.skip(corpus.REAL_MISSING)
    model = build_model([load_darshan_log(logs[0], isolate=False)])
    rng = random.Random(27)
    answers = set()
    for _ in range(3000):
        names = ["/".join(rng.choice(PARTS) for _ in range(rng.randint(1, 4)))
                 for _ in range(rng.randint(0, 6))]
        names = [n if rng.random() < 0.1 else "/" + n for n in names]
        mounts = [(n, "lustre") for n in names[:rng.randint(0, 2)]]
        job = dataclasses.replace(model.job, mounts=mounts, metadata={})
        got = _scheduler(dataclasses.replace(model, job=job), frozenset(names[len(mounts):]))
        assert got == _per_name(names), names
        answers.add(got[0])
    assert answers >= {"", "cobalt", "lsf", "pbs", "slurm"}
