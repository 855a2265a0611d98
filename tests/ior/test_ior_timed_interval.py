"""What iolab puts between a phase's clock reads, on IOR's DUMMY backend (iolab's null api),
where a phase lasts microseconds and whatever else is timed decides the bandwidth.

IOR's definition is the reference (ior.c: the file named by GetTestFileName before the
barrier; timed: the create/open, WriteOrRead, the close; no collective in WriteOrRead unless
stoneWallingWearOut), and mdtest's directory_test (no collective between its t_start and its
closing phase_end barrier). The test does not time anything: it runs the engine's ranks under
gdb with breakpoints on the clock (MPI_Wtime), the MPI collectives, the allocator and the
snprintf family, and lists what each rank called between the first clock read after the
phase's barrier and the last one before the phase's gather of results (iolab_phase_collect).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from ior_helpers import mpirun_env, run_iolab

CLOCK = "MPI_Wtime"
COLLECTIVES = ("MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Gather")
NAMING = ("snprintf", "__snprintf_chk", "vsnprintf", "__vsnprintf_chk")
ALLOCATION = ("malloc", "calloc", "realloc", "free")
WATCHED = (CLOCK, *COLLECTIVES, *NAMING, *ALLOCATION)


def gdb_script(path: Path) -> Path:
    """Breakpoints that print "CALL <name>" and go on, armed from the first phase on
    (iolab_phase_run, iolab_metadata_run), so MPI's start-up stays out."""
    # Symbols of the engine, libc and libmpi only (each of Open MPI's ~100 components
    # would be read as it is opened: ~2 s of gdb a rank for nothing watched there).
    lines = ["set pagination off", "set confirm off", "set breakpoint pending on",
             "set print thread-events off", "set print inferior-events off",
             "set auto-solib-add off", "break main", "run",
             r"sharedlibrary ^/.*/lib(c|mpi)\.so"]
    for arm in ("iolab_phase_run", "iolab_metadata_run"):
        lines += [f"break {arm}", "commands", "silent", "enable", "continue", "end"]
    for name in WATCHED:
        lines += [f"break {name}", "commands", "silent", f'printf "CALL {name}\\n"',
                  "continue", "end"]
    lines += ["disable", "enable 2 3", "continue"]
    path.write_text("\n".join(lines) + "\n")
    return path


def engine_words(tool: str, words: list[str], tmp_path: Path) -> list[str]:
    """The engine's arguments for an IOR/mdtest line: `iolab <tool> --dry-run`'s
    `iolab bench ...` line without the launch options (--np, --launcher, --mpi)."""
    target = ["-o", str(tmp_path / "ior")] if tool == "ior" else ["-d", str(tmp_path / "md")]
    ran = run_iolab(tool, "--np", "2", "--dry-run", *words, *target, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    bench = shlex.split(ran.stdout.strip().splitlines()[-1])
    assert bench[:2] == ["iolab", "bench"], bench
    out, i = [], 2
    while i < len(bench):
        if bench[i] in ("--np", "--launcher", "--mpi"):
            i += 2
            continue
        out.append(bench[i])
        i += 1
    return out


def timed_calls(log: str) -> list[list[str]]:
    """Per phase of one rank's log, the watched calls between its first clock read after its
    last barrier and its last clock read before its gather (a gather with no clock read
    since the last one gathers something else: the run's environment)."""
    calls = [ln.split()[1] for ln in log.splitlines() if ln.startswith("CALL ")]
    phases, begin = [], 0
    for g, name in enumerate(calls):
        if name != "MPI_Gather":
            continue
        clocks = [k for k in range(begin, g) if calls[k] == CLOCK]
        if not clocks:
            begin = g + 1
            continue
        end = clocks[-1]
        barrier = max(k for k in range(begin, end) if calls[k] == "MPI_Barrier")
        start = next(k for k in range(barrier, end) if calls[k] == CLOCK)
        phases.append(calls[start + 1:end])
        begin = g + 1
    return phases


def calls_inside(engine: Path, words: list[str], tmp_path: Path) -> list[list[list[str]]]:
    """[rank][phase] -> the watched calls inside the phase's timed interval."""
    script = gdb_script(tmp_path / "calls.gdb")
    gdb = (f"exec gdb -q -batch -x {shlex.quote(str(script))} --args "
           f"{shlex.quote(str(engine))} {shlex.join(words)} --quiet --json /dev/null "
           f'> "log.${{OMPI_COMM_WORLD_RANK:-$PMI_RANK}}" 2>&1')
    p = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "sh", "-c", gdb],
                       cwd=tmp_path, env=mpirun_env(), capture_output=True, text=True,
                       timeout=300)
    logs = [(tmp_path / f"log.{r}").read_text() for r in range(2)]
    assert p.returncode == 0, p.stderr + "".join(logs)[-2000:]
    return [timed_calls(log) for log in logs]


@pytest.fixture(scope="module")
def gdb() -> str:
    path = shutil.which("gdb")
    if path is None:
        pytest.skip("gdb is not installed (apt-get install gdb): it lists the timed calls")
    return path


# id, tool, line, phases, what may be called inside each phase's interval besides the clock
LINES = [
    ("fpp-1m", "ior", "-a DUMMY -e -F -t 1m -b 1m", 2, ()),
    ("shared-4k", "ior", "-a DUMMY -k -t 4k -b 8k", 2, ()),
    ("stonewall-read", "ior",
     "-a DUMMY -r -O stoneWallingStatusFile=stonewall.log -D 1 -t 1000 -b 1000 -s 30 -k", 1, ()),
]


@pytest.mark.parametrize("tool,line,nphases,allowed", [r[1:] for r in LINES],
                         ids=[r[0] for r in LINES])
def test_ior_dummy_phase_times_only_open_xfer_close(engine: Path, gdb: str, tmp_path: Path,
                                                    tool: str, line: str, nphases: int,
                                                    allowed: tuple[str, ...]) -> None:
    """expected: nothing but clock reads between a DUMMY phase's clock reads on every rank, as
    IOR (file named before the barrier; -D without wear-out reduces nothing it times) / was: a
    snprintf of the file's name inside the open (2-8 us of a 3 us IOR phase) and, with -D,
    two MPI_Allreduce of the stonewall counts inside the transfers' time."""
    per_rank = calls_inside(engine, engine_words(tool, line.split(), tmp_path), tmp_path)
    for rank, phases in enumerate(per_rank):
        assert len(phases) == nphases, (rank, phases)
        for k, calls in enumerate(phases):
            extra = [c for c in calls if c != CLOCK and c not in allowed]
            assert extra == [], f"rank {rank} phase {k}: {extra} inside the timed interval"


def test_mdtest_dummy_directory_creation_times_no_collective(engine: Path, gdb: str,
                                                             tmp_path: Path) -> None:
    """expected: no MPI collective and one snprintf per item (plus two naming the directory)
    between the clock reads of `mdtest -I 20 -a DUMMY -W 1 -C`'s directory creation on
    either rank, as mdtest's directory_test (no wear-out for directories; one sprintf per
    item) / was: two MPI_Allreduce of the stonewall counts, timed, whose result the
    directory phase throws away, and 41 snprintf for 20 items (the directory named again
    for every item)."""
    words = engine_words("mdtest", "-I 20 -a DUMMY -W 1 -x stonewall-md.log -C".split(),
                         tmp_path)
    for rank, phases in enumerate(calls_inside(engine, words, tmp_path)):
        # tree creation, directory creation, file creation (whose wear-out reduces, as mdtest's)
        assert len(phases) == 3, (rank, phases)
        timed = [c for c in phases[1] if c in COLLECTIVES]
        assert timed == [], f"rank {rank}: {timed} inside the directory creation's interval"
        assert phases[1].count(CLOCK) >= 20, phases[1]  # the deadline read after each mkdir
        naming = [c for c in phases[1] if c in NAMING]
        assert len(naming) <= 20 + 2, f"rank {rank}: {len(naming)} snprintf for 20 items"
