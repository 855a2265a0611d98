"""What the comparison scripts in bench/ share: where each tool is (an option, else an
environment variable, else PATH), how MPI programs are launched, the machine line above each
table, the median [min-max] cells, the ratio cells with their confidence interval and
verdict, and the expected duration printed before the first run."""

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
from typing import Optional

from benchdoc import replace_section  # bench/ is on sys.path when a script runs

from iolab.tune.stats import CONFIDENCE, RESAMPLES, median_ratio_interval

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


def run(cmd: list[str], timeout: float = 7200, extra_env: dict[str, str | None] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """cmd with its output captured, in cwd (default: this one); extra_env sets variables
    (None: removes one)."""
    e = env()
    for k, v in (extra_env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e,
                          cwd=cwd)


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


# One tool's results in one comparison: one entry per round, None where it failed or did not
# run, so that round i of two tools (measured one after the other) can be paired.
PerRound = list[Optional[dict[str, float]]]  # runtime alias: no "X | None" before 3.10

# Below this many paired rounds no interval is given: a bootstrap resamples the rounds
# themselves, and from 2 to 4 of them it mostly reproduces their range.
CI_MIN_ROUNDS = 5
CI_NOTE = (f"{CONFIDENCE:.0%} CI: percentile bootstrap ({RESAMPLES} resamples) of the "
           "ratio of medians over the rounds where both tools ran, rounds resampled in pairs "
           "(the runs of a round, made one after the other, stay together), given from "
           f"{CI_MIN_ROUNDS} such rounds; verdict: faster (CI above 1), same within noise "
           "(CI includes 1), slower (CI below 1)")
RATIO_HEADER = "ratio | 95% CI | verdict"


def values(rounds: PerRound, key: str) -> list[float]:
    """The values of key over the rounds that have one (for the median [min–max] cells)."""
    return [r[key] for r in rounds if r and key in r]


def paired(num: PerRound, den: PerRound, key: str) -> tuple[list[float], list[float]]:
    """key's values of the rounds where both tools have one, in round order."""
    pairs = [(a[key], b[key]) for a, b in zip(num, den)
             if a and b and key in a and key in b and b[key] > 0]
    return [a for a, _ in pairs], [b for _, b in pairs]


def ratio_interval(num: list[float], den: list[float], seed: int = 0
                   ) -> tuple[float, float] | None:
    """The interval of median(num) / median(den) for paired samples (num[i] and den[i] from
    the same round), by the bootstrap iolab tune's claims use (iolab.tune.stats), resampling
    whole rounds; None with fewer than CI_MIN_ROUNDS pairs."""
    if len(num) < CI_MIN_ROUNDS or len(num) != len(den):
        return None
    return median_ratio_interval(num, den, paired=True, seed=seed)


def mean_interval(vals: list[float], seed: int = 0) -> tuple[float, float] | None:
    """The CONFIDENCE interval of the mean of independent values (a search's seeds), by a
    percentile bootstrap (RESAMPLES resamples); None with fewer than CI_MIN_ROUNDS values."""
    if len(vals) < CI_MIN_ROUNDS:
        return None
    import numpy as np
    from scipy import stats

    if min(vals) == max(vals):  # nothing to resample: the interval is the value
        return vals[0], vals[0]
    boot = stats.bootstrap((np.asarray(vals, dtype=float),), np.mean, vectorized=True,
                           confidence_level=CONFIDENCE, n_resamples=RESAMPLES,
                           method="percentile", random_state=np.random.default_rng(seed))
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high)


def verdict(interval: tuple[float, float] | None) -> str:
    if interval is None:
        return "too few rounds"
    low, high = interval
    return "faster" if low > 1 else "slower" if high < 1 else "same within noise"


def ratio_cells(num: PerRound, den: PerRound, key: str) -> str:
    """The three cells of RATIO_HEADER for key: ratio of the paired medians, its interval,
    the verdict (see CI_NOTE)."""
    a, b = paired(num, den, key)
    if not a:
        return "– | – | –"
    interval = ratio_interval(a, b)
    ci = f"{interval[0]:.2f}–{interval[1]:.2f}" if interval else "–"
    return f"{ratio(a, b)} | {ci} | {verdict(interval)}"


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
