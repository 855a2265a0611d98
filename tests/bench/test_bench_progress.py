"""``iolab bench`` off a terminal: plain progress lines, from the first phase, with the
bytes done inside a long phase. Expected: a long phase shows bytes, rate and time left and
the log starts at the first phase; was: only a line per finished phase, none inside one."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench_helpers import db_rows, run_iolab

MIB = 1 << 20


def test_plain_progress_inside_a_long_phase(engine: Path, db: Path, workdir: Path) -> None:
    # 2 ranks, 48 transfers of 1 MiB at 80 ms: write and read about 3.9 s each, so the
    # quiet period (5 s) ends inside the read phase
    r = run_iolab("bench", "--api", "null", "--null.delay-us", "80000", "--transfer", "1M",
                  "--block", "48M", "--reps", "1", "--layout", "fpp", "--db", str(db),
                  cwd=workdir)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.err_lines() if ln.startswith("iolab bench: ")]
    assert lines and lines[0] == "iolab bench: repetition 1, write done (1/2)", r.stderr
    inside = [ln for ln in lines if " of 96.0 MiB (" in ln]
    assert inside, r.stderr
    m = re.search(r"read pass 1: ([\d.]+) MiB of 96\.0 MiB \((\d+)%\), ([\d.]+) MiB/s, "
                  r"about (\d+) s left$", inside[0])
    assert m, inside[0]
    assert 0 < float(m.group(1)) < 96 and 0 < float(m.group(3))
    assert lines[-1] == "iolab bench: repetition 1, read pass 1 done (2/2)"
    (run,) = db_rows(db)  # and the stored result is the engine's, with no progress in it
    assert run["status"] == "ok"
    doc = json.loads(run["engine_json"])
    assert [p["bytes"] for rep in doc["repetitions"] for p in rep["phases"]] \
        == [96 * MIB, 96 * MIB]
