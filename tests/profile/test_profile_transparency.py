"""The program must not be able to tell the tracer is there: same stdout, stderr, exit status
and files with and without it; threads, fork, signals, descriptors 0-2, O_APPEND, pipes."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, profile, record

PY_WRITER = r"""
import hashlib, os, sys
d = sys.argv[1]
with open(os.path.join(d, "py.bin"), "wb") as f:
    for i in range(200):
        f.write(bytes([i % 256]) * (i + 1))
with open(os.path.join(d, "py.bin"), "rb") as f:
    data = f.read()
print(hashlib.sha256(data).hexdigest(), len(data))
print("to stderr", file=sys.stderr)
sys.exit(3)
"""


def _tree(d: Path) -> dict[str, str]:
    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


def _run_both(
    tmp_path: Path,
    make_argv: Callable[[Path], list[str]],
    setup: Callable[[Path], None] | None = None,
    timeout: int = 120,
) -> Path:
    """Run argv in two fresh folders, without and with the tracer; compare everything."""
    results = []
    for traced in (False, True):
        work = tmp_path / ("traced" if traced else "plain")
        work.mkdir()
        if setup:
            setup(work)
        env = {**os.environ, "LD_PRELOAD": "", "IOLAB_TRACE_DIR": ""}  # same variables in both
        if traced:
            env["LD_PRELOAD"] = str(LIBDIR / "libiolab-trace.so")
            env["IOLAB_TRACE_DIR"] = str(tmp_path / "parts")
            (tmp_path / "parts").mkdir()
        run = subprocess.run(
            make_argv(work), cwd=work, env=env, capture_output=True, timeout=timeout
        )
        out = run.stdout.replace(str(work).encode(), b"WORK")
        err = run.stderr.replace(str(work).encode(), b"WORK")
        results.append((run.returncode, out, err, _tree(work)))
    assert results[0] == results[1]
    return tmp_path / "parts"


def _source(work: Path) -> None:
    (work / "src").mkdir()
    for i in range(5):
        (work / "src" / f"f{i}.dat").write_bytes(bytes(range(256)) * 4 * (i + 1))
        os.utime(work / "src" / f"f{i}.dat", (1_700_000_000, 1_700_000_000))
    os.utime(work / "src", (1_700_000_000, 1_700_000_000))


@pytest.mark.parametrize(
    "argv",
    [
        ["cp", "-r", "src", "dst"],
        ["dd", "if=src/f4.dat", "of=out.dat", "bs=512", "status=none"],
        ["dd", "if=missing.dat", "of=out.dat"],
        ["tar", "cf", "-", "--sort=name", "--owner=0", "--group=0", "src"],
        ["sh", "-c", "cat src/f1.dat src/f2.dat > cat.out; wc -c < cat.out; exit 7"],
    ],
)
def test_tools_unchanged(tracer: Path, tmp_path: Path, argv: list[str]) -> None:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} not installed")
    _run_both(tmp_path, lambda w: argv, setup=_source)


def test_python_unchanged_and_profiled(tracer: Path, tmp_path: Path) -> None:
    script = tmp_path / "w.py"
    script.write_text(PY_WRITER)
    parts = _run_both(tmp_path, lambda w: [sys.executable, str(script), str(w)])
    assert list(parts.glob("*.iolabp"))


def test_mpi_program_unchanged(tracer: Path, prog: Callable[[str], Path], tmp_path: Path) -> None:
    exe = prog("mpi_strided")
    argv = ["mpirun", "--oversubscribe", "-np", "2", "-x", "LD_PRELOAD", "-x", "IOLAB_TRACE_DIR"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    parts = _run_both(tmp_path, lambda w: [*argv, str(exe), str(w / "m.dat"), "64", "4096", "coll"])
    assert len(list(parts.glob("*.iolabp"))) == 2  # the ranks, not mpirun


def test_fd_games_unchanged(tracer: Path, prog: Callable[[str], Path], tmp_path: Path) -> None:
    exe = prog("fdgames")
    _run_both(tmp_path, lambda w: [str(exe), str(w)])
    run, job = profile([str(exe), str(tmp_path / "traced")], tmp_path / "p")
    red = record(job, "POSIX", "redirected.txt")
    assert (red.counters["POSIX_OPENS"], red.counters["POSIX_DUPS"]) == (2, 1)  # open, dup2 onto 1
    assert (red.counters["POSIX_WRITES"], red.counters["POSIX_BYTES_WRITTEN"]) == (1, 14)
    app = record(job, "POSIX", "append.txt")
    assert (app.counters["POSIX_OPENS"], app.counters["POSIX_DUPS"]) == (2, 1)
    assert (app.counters["POSIX_WRITES"], app.counters["POSIX_BYTES_WRITTEN"]) == (2, 7)
    assert {Path(r.path).name for r in job.rows()} == {"redirected.txt", "append.txt", "<STDOUT>"}
    out = [r for r in job.rows() if r.path == "<STDOUT>"][0].counters  # two printf, one fflush
    assert run.stdout == "before dup2\nafter: through a pipe\n"
    assert (out["STDIO_OPENS"], out["STDIO_WRITES"], out["STDIO_FORMATTED_WRITES"]) == (1, 2, 2)
    assert (out["STDIO_FLUSHES"], out["STDIO_BYTES_WRITTEN"]) == (1, len(run.stdout))


def test_threads(prog: Callable[[str], Path], tmp_path: Path) -> None:
    """The issue's size: 8 threads x 100,000 write() of 16 B to their own files and 100,000
    pwrite() each to one shared file (1.6 million calls, ~6 s here); no count lost."""
    n = 100_000
    _, job = profile([str(prog("threads")), str(tmp_path), "8", str(n)], tmp_path / "p")
    for t in range(8):
        r = record(job, "POSIX", f"thread_{t}.dat")
        assert (r.counters["POSIX_WRITES"], r.counters["POSIX_BYTES_WRITTEN"]) == (n, 16 * n)
        assert r.counters["POSIX_CONSEC_WRITES"] == n - 1
    s = record(job, "POSIX", "shared.dat")
    assert (s.counters["POSIX_WRITES"], s.counters["POSIX_BYTES_WRITTEN"]) == (8 * n, 128 * n)
    assert s.counters["POSIX_SIZE_WRITE_0_100"] == 8 * n
    assert s.counters["POSIX_MAX_BYTE_WRITTEN"] == 128 * n - 1


def test_fork_child_has_its_own_profile(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile([str(prog("forker")), str(tmp_path)], tmp_path / "p")
    assert job.nprocs == 2
    parent = record(job, "POSIX", "parent.dat")
    child = record(job, "POSIX", "child.dat")
    assert parent.rank != child.rank
    assert (parent.counters["POSIX_OPENS"], parent.counters["POSIX_WRITES"]) == (2, 15)
    assert parent.counters["POSIX_MAX_BYTE_WRITTEN"] == 1499  # O_APPEND: after the 1000 bytes
    assert (child.counters["POSIX_OPENS"], child.counters["POSIX_WRITES"]) == (1, 20)


def test_python_multiprocessing(tracer: Path, tmp_path: Path) -> None:
    script = tmp_path / "mp.py"
    script.write_text(
        "import multiprocessing as mp, sys\n"
        "def work(i):\n"
        "    with open(f'{sys.argv[1]}/mp_{i}.dat', 'wb') as f:\n"
        "        f.write(b'x' * 1000 * (i + 1))\n"
        "if __name__ == '__main__':\n"
        "    ctx = mp.get_context('fork')\n"
        "    with ctx.Pool(2) as p:\n"
        "        p.map(work, range(4))\n"
    )
    _, job = profile([sys.executable, str(script), str(tmp_path)], tmp_path / "p")
    for i in range(4):
        assert record(job, "POSIX", f"mp_{i}.dat").counters["POSIX_BYTES_WRITTEN"] == 1000 * (i + 1)


def test_unwritable_output_dir_warns_once(
    tracer: Path, prog: Callable[[str], Path], tmp_path: Path
) -> None:
    (tmp_path / "afile").write_text("")
    env = {
        **os.environ,
        "LD_PRELOAD": str(tracer),
        "IOLAB_TRACE_DIR": str(tmp_path / "afile" / "x"),
    }
    run = subprocess.run(
        [str(prog("posix_write")), str(tmp_path / "o.dat"), "10", "64"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and "iolab-trace: warning" in run.stderr
    assert (tmp_path / "o.dat").stat().st_size == 640


def test_sigterm_partial_profile(tracer: Path, tmp_path: Path) -> None:
    script = tmp_path / "k.py"
    script.write_text(
        "import os, signal, sys\n"
        "open(sys.argv[1], 'w').write('x' * 100)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
    )
    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "iolab",
            "profile",
            "-q",
            "-o",
            str(tmp_path / "p"),
            "--name",
            "job",
            "--",
            sys.executable,
            str(script),
            str(tmp_path / "k.txt"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 128 + signal.SIGTERM
    from iolab.sources.profile import load

    job = load(tmp_path / "p" / "job.iolab")
    assert job.partial_modules and any("SIGTERM" in n for n in job.notes)
    assert record(job, "POSIX", "k.txt").counters["POSIX_BYTES_WRITTEN"] == 100


@pytest.mark.parametrize("trace_first", [True, False])
def test_chains_with_buffer_library(
    tracer: Path, prog: Callable[[str], Path], tmp_path: Path, trace_first: bool
) -> None:
    """Preloaded with libiolab-buffer.so in either order: the file is right, and the tracer
    sees the program's writes (trace first) or the buffer's (buffer first), bytes complete."""
    buf = LIBDIR.parent / "buffer" / "libiolab-buffer.so"
    if not buf.is_file():
        pytest.skip("libiolab-buffer.so is not built")
    libs = [str(tracer), str(buf)] if trace_first else [str(buf), str(tracer)]
    (tmp_path / "parts").mkdir()
    env = {
        **os.environ,
        "LD_PRELOAD": ":".join(libs),
        "IOLAB_BUFFER": "*",
        "IOLAB_TRACE_DIR": str(tmp_path / "parts"),
    }
    subprocess.run(
        [str(prog("posix_write")), str(tmp_path / "c.dat"), "10000", "64"], env=env, check=True
    )
    assert (tmp_path / "c.dat").stat().st_size == 640000
    from iolab.sources.profile import load

    rec = record(load(tmp_path / "parts"), "POSIX", "c.dat")
    assert rec.counters["POSIX_BYTES_WRITTEN"] == 640000
    if trace_first:
        assert rec.counters["POSIX_WRITES"] == 10000
    else:
        assert rec.counters["POSIX_WRITES"] < 10000


def test_python_sees_its_own_signal_dispositions(tracer: Path, tmp_path: Path) -> None:
    """The tracer's SIGTERM/SIGINT handler is invisible: Python still installs its
    KeyboardInterrupt handler, getsignal() answers as without the tracer."""
    script = tmp_path / "s.py"
    script.write_text(
        "import os, signal, sys\n"
        "print(signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT))\n"
        "open(os.path.join(sys.argv[1], 'f.txt'), 'w').write('x')\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    signal.pause()\n"
        "except KeyboardInterrupt:\n"
        "    print('caught')\n"
        "    sys.exit(5)\n"
    )
    parts = _run_both(tmp_path, lambda w: [sys.executable, str(script), str(w)])
    assert list(parts.glob("*.iolabp"))  # written at the (normal) exit


def test_io_before_exec_is_kept(tracer: Path, tmp_path: Path) -> None:
    """A shell redirects into a file, then exec's: the shell's image is gone without exit
    handlers, its profile is written just before."""
    _, job = profile(["sh", "-c", f"echo hello > {tmp_path}/before.txt; exec true"], tmp_path / "p")
    rec = record(job, "POSIX", "before.txt")
    c = rec.counters  # the shell opens, then dup2()s onto 1: a dup counts as an open too
    assert (c["POSIX_OPENS"], c["POSIX_DUPS"], c["POSIX_BYTES_WRITTEN"]) == (2, 1, 6)


def test_failed_exec_changes_nothing(tracer: Path, tmp_path: Path) -> None:
    script = tmp_path / "e.py"
    script.write_text(
        "import os, sys\n"
        "open(sys.argv[1], 'w').write('a')\n"
        "try:\n"
        "    os.execv('/nonexistent/prog', ['x'])\n"
        "except OSError as e:\n"
        "    print('errno', e.errno)\n"
        "open(sys.argv[1], 'a').write('bc')\n"
    )
    _run_both(tmp_path, lambda w: [sys.executable, str(script), str(w / "f.txt")])
    _, job = profile([sys.executable, str(script), str(tmp_path / "g.txt")], tmp_path / "p")
    assert record(job, "POSIX", "g.txt").counters["POSIX_BYTES_WRITTEN"] == 3  # one file, final


def test_io_in_exit_handlers_and_destructors(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile([str(prog("exit_hooks")), str(tmp_path)], tmp_path / "p")
    assert record(job, "POSIX", "atexit.dat").counters["POSIX_BYTES_WRITTEN"] == 3
    assert record(job, "POSIX", "destructor.dat").counters["POSIX_BYTES_WRITTEN"] == 4


def test_descriptor_numbers_reused_after_close_range(
    tracer: Path, prog: Callable[[str], Path], tmp_path: Path
) -> None:
    exe = prog("fdreuse")
    _run_both(tmp_path, lambda w: [str(exe), str(w)])
    _, job = profile([str(exe), str(tmp_path)], tmp_path / "p")
    c = record(job, "POSIX", "reused.dat").counters
    assert (c["POSIX_OPENS"], c["POSIX_WRITES"], c["POSIX_READS"]) == (2, 2, 0)
    assert c["POSIX_BYTES_WRITTEN"] == 6


def test_python_subprocess_children(tracer: Path, tmp_path: Path) -> None:
    """CPython starts children with vfork + exec: the children are profiled, the parent too."""
    script = tmp_path / "sp.py"
    script.write_text(
        "import subprocess, sys\n"
        "for i in range(3):\n"
        "    subprocess.run(['sh', '-c', f'echo {i} > {sys.argv[1]}/child_{i}.txt'], check=True)\n"
        "print(subprocess.run(['cat', f'{sys.argv[1]}/child_2.txt'], capture_output=True,\n"
        "                     text=True).stdout.strip())\n"
        "open(f'{sys.argv[1]}/parent.txt', 'w').write('p')\n")
    _run_both(tmp_path, lambda w: [sys.executable, str(script), str(w)])
    _, job = profile([sys.executable, str(script), str(tmp_path)], tmp_path / "p")
    for i in range(3):
        recs = [r for r in job.rows() if r.path.endswith(f"/child_{i}.txt")]
        assert sum(r.counters["POSIX_BYTES_WRITTEN"] for r in recs) == 2  # the shell's
        assert sum(r.counters["POSIX_BYTES_READ"] for r in recs) == (2 if i == 2 else 0)  # cat
    assert record(job, "POSIX", "parent.txt").counters["POSIX_BYTES_WRITTEN"] == 1
    assert job.nprocs >= 5  # python, 3 shells, cat
