"""``iolab study --cpu-freq`` outside a Slurm allocation: refused before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_cpu_freq_outside_slurm_is_refused_before_any_run(tmp_path: Path) -> None:
    """expected: one line naming the Slurm allocation it needs, exit 2, no study stored,
    nothing written / was: the whole study ran and cpu-freq was listed as skipped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    db = tmp_path / "r.db"
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run([sys.executable, "-m", "iolab", "study", "--quick", "--cpu-freq",
                        "1200000,2400000", "--db", str(db)], capture_output=True, text=True,
                       cwd=work, env=env, timeout=30)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and not r.stdout, r.stderr
    assert "--cpu-freq needs a Slurm allocation" in lines[0] and "salloc" in lines[0]
    assert not db.exists() and list(work.iterdir()) == []
