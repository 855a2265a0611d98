"""MPI 0-byte latency and bandwidth between two ranks of this node: iolab's own ping-pong
(``iolab/data/pingpong.c``), compiled with this machine's ``mpicc`` into a scratch folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from iolab.launch import LaunchSpec, prepare

SOURCE = Path(__file__).resolve().parents[1] / "data" / "pingpong.c"


def measure(reps: int, message_bytes: int, runs: int, mpi: str = "default"
            ) -> tuple[list[dict[str, Any]], str | None]:
    """``runs`` ping-pong runs (each a list entry), or ([], why it could not run)."""
    cc = shutil.which("mpicc.mpich" if mpi == "mpich" else "mpicc")
    if cc is None:
        return [], "no mpicc on PATH to build the ping-pong"
    if not SOURCE.is_file():
        return [], f"{SOURCE} is missing from this installation"
    with tempfile.TemporaryDirectory(prefix="iolab-pingpong-") as tmp:
        exe = Path(tmp) / "pingpong"
        cc_run = subprocess.run([cc, "-O2", "-o", str(exe), str(SOURCE)], capture_output=True,
                                text=True, check=False)
        if cc_run.returncode != 0:
            return [], f"mpicc failed: {(cc_run.stderr.strip().splitlines() or ['?'])[-1]}"
        launch = prepare(LaunchSpec(np=2, launcher="mpirun", mpi=mpi),
                         [str(exe), str(reps), str(message_bytes)])
        out: list[dict[str, Any]] = []
        for _ in range(runs):
            done = subprocess.run(launch.argv, env=launch.env, capture_output=True, text=True,
                                  check=False, timeout=300, stdin=subprocess.DEVNULL)
            line = next((ln for ln in done.stdout.splitlines() if ln.startswith("{")), None)
            if done.returncode != 0 or line is None:
                why = (done.stderr.strip().splitlines() or ["no output"])[-1]
                return out, f"the ping-pong failed (exit {done.returncode}): {why}"
            out.append(json.loads(line))
    return out, None
