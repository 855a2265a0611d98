"""What the comparison scripts in bench/ share: where each tool is (an option, else an
environment variable, else PATH), how MPI programs are launched, the machine line above each
table, the median [min-max] cells, and the expected duration printed before the first run."""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

from benchdoc import replace_section  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]


def iolab_bench() -> str:
    """The engine: $IOLAB_BENCH, else this checkout's build."""
    for c in (os.environ.get("IOLAB_BENCH"), ROOT / ".venv" / "bin" / "iolab-bench",
              ROOT / "build" / "default" / "engine" / "iolab-bench", shutil.which("iolab-bench")):
        if c and Path(c).is_file():
            return str(c)
    sys.exit(f"{Path(sys.argv[0]).name}: iolab-bench not built; run ./setup")


def find_tool(given: str | None, env_var: str, name: str) -> str | None:
    """A third-party tool's path: the option's value, else $env_var, else `name` on PATH.
    A path given that is not an executable file stops the script (a typo must not silently
    drop a column)."""
    path = given or os.environ.get(env_var)
    if path:
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            print(f"{Path(sys.argv[0]).name}: {path} (for {name}) is not an executable "
                  f"file; give the path of a built {name} or leave the option out",
                  file=sys.stderr)
            sys.exit(2)
        return path
    return shutil.which(name)


def env() -> dict[str, str]:
    e = dict(os.environ)
    if os.geteuid() == 0:
        e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return e


def run(cmd: list[str], timeout: float = 7200, extra_env: dict[str, str | None] | None = None
        ) -> subprocess.CompletedProcess:
    """cmd with its output captured; extra_env sets variables (None: removes one)."""
    e = env()
    for k, v in (extra_env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


@lru_cache(maxsize=1)
def mpi_version() -> str:
    p = subprocess.run(["mpirun", "--version"], capture_output=True, text=True)
    return (p.stdout.splitlines() or ["MPI ?"])[0]


def mpirun(np: int) -> list[str]:
    cmd = ["mpirun", "-np", str(np)]
    if "Open MPI" in mpi_version():
        cmd += ["-q", "--oversubscribe"]
    return cmd


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), platform.processor())
    return (f"Machine: {platform.node()}, {os.cpu_count()} CPUs ({cpu}), Linux "
            f"{platform.release()}, {mpi_version()}. "
            f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.")


def _num(v: float) -> str:
    """Whole numbers from 10 up; two significant digits below, so a tiny smoke run's
    0.4 MiB/s is not printed as 0."""
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.2g}"


def fmt(vals: list[float]) -> str:
    if not vals:
        return "–"
    return f"{_num(statistics.median(vals))} [{_num(min(vals))}–{_num(max(vals))}]"


def ratio(num: list[float], den: list[float]) -> str:
    return f"{statistics.median(num) / statistics.median(den):.2f}" if num and den else "–"


def announce(expected_s: float, tools: dict[str, str | None]) -> None:
    """One line before the first run: how long the whole script should take, and which tool
    binaries it found (a missing one leaves its column empty)."""
    found = "".join(f"; {k} {v or 'not found: its column stays empty'}"
                    for k, v in tools.items())
    print(f"{Path(sys.argv[0]).name}: expected duration about {expected_s / 60:.0f} min "
          f"({expected_s:.0f} s){found}", file=sys.stderr)


def publish(output: Path, section: str, title: str, body: str, measured: bool) -> int:
    """Print the table; put it into its section of output only when iolab measured
    something (a run where every iolab attempt failed keeps the last good table).
    Returns the script's exit code."""
    print(body)
    name = Path(sys.argv[0]).name
    if not measured:
        print(f"{name}: no iolab run succeeded; {output} left as it was", file=sys.stderr)
        return 1
    replace_section(output, section, f"## {title}\n\n{body}")
    print(f"{name}: table written to {output}", file=sys.stderr)
    return 0
