"""The one-node Slurm on localhost (tests/slurm_localhost.sh), started once per session.

Skipped, with the reason, when the tests are not root or Slurm is not installed; a Slurm that
is installed but does not start is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "slurm_localhost.sh"


@pytest.fixture(scope="session")
def slurm_env() -> dict[str, str]:
    if os.geteuid() != 0:
        pytest.skip("the one-node Slurm needs root (it starts munged, slurmctld, slurmd)")
    missing = [c for c in ("slurmctld", "slurmd", "munged", "sbatch", "salloc", "srun")
               if shutil.which(c) is None]
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing); "
                    "IOLAB_WITH_TEST_DEPS=1 tools/install-deps.sh installs it")
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        pytest.fail(f"tests/slurm_localhost.sh failed: {p.stderr.strip()[-2000:]}")
    conf = p.stdout.strip().splitlines()[-1]
    assert conf.startswith("SLURM_CONF="), p.stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = conf.split("=", 1)[1]
    return env
