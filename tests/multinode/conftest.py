"""The two-node Slurm on one machine (tests/slurm_twonode.sh), started once per session.

Skipped, with the reason, when the tests are not root, Slurm or unshare is not installed, or
the machine cannot make UTS and mount namespaces; a cluster that should start and does not
is a failure, not a skip. The cluster is left running (the script reuses it next time).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "slurm_twonode.sh"
NODES = ("n1", "n2")


@pytest.fixture(scope="session")
def twonode_env() -> dict[str, str]:
    if os.geteuid() != 0:
        pytest.skip("the two-node Slurm needs root (it starts munged, slurmctld and two "
                    "slurmd in namespaces)")
    missing = [c for c in ("slurmctld", "slurmd", "munged", "sbatch", "salloc", "srun",
                           "unshare") if shutil.which(c) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed; IOLAB_WITH_TEST_DEPS=1 "
                    "tools/install-deps.sh installs Slurm (unshare is in util-linux)")
    probe = subprocess.run(["unshare", "--uts", "--mount", "true"], capture_output=True,
                           text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("no UTS and mount namespaces here (unshare --uts --mount: "
                    f"{probe.stderr.strip() or probe.returncode}), so no emulated second host")
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        pytest.fail(f"tests/slurm_twonode.sh failed: {p.stderr.strip()[-2000:]}")
    conf = p.stdout.strip().splitlines()[-1]
    assert conf.startswith("SLURM_CONF="), p.stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = conf.split("=", 1)[1]
    return env
