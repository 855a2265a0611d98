"""``iolab buffer`` and the IOLAB_BUFFER variable: the seed's case (many 512-byte writes)
gives identical bytes and the IOBUF-shaped table with the right counts; bad input is one
line (CLI: exit 2; library: one warning, then the program runs unbuffered); C and Python
read the variable the same way; the tracer can be preloaded with the library."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from buffer_helpers import LIB_TRACE, iolab, lib_env, parse_table, pattern, read_ahead_line, run

from iolab.buffer import spec as bufspec
from iolab.errors import UsageError


def test_seed_case_512_byte_writes(buflib, cprog, tmp_path):
    # The KAUST seminar's case, scaled: 20,000 writes of 512 B; 1 MiB buffers.
    total, size = 20_000 * 512, 1 << 20
    f = tmp_path / "ssef.dat"
    r = iolab("buffer", "--spec", f"*.dat:size={size}:count=4", "--", cprog("writer"), f, total,
              512, "write", "close")
    assert r.returncode == 0, r.stderr
    assert f.read_bytes() == pattern(total)
    t = parse_table(r.stderr)[str(f)]
    assert t["Open calls"] == 1 and t["Close calls"] == 1
    assert t["Write calls"] == 20_000 and t["Write avg"] == 512
    assert t["Write MB"] == pytest.approx(total / 2**20, abs=1e-5)
    assert t["Total calls"] == 20_002
    full = total // size
    # aligned 1 MiB writes, then the rest at close (+1 if the run stalled over a second and
    # the idle check wrote a partly filled buffer: a loaded CI machine)
    assert full + 1 <= t["Sys Write calls"] <= full + 2
    assert t["Sys Write MB"] == pytest.approx(total / 2**20, abs=1e-5)
    assert t["Preflushes"] == full
    assert 1 <= t["Buffers used"] <= 4
    assert t["Read calls"] == 0 and t["Sys Read calls"] == 0


def test_fwrite_512_bytes_identical(buflib, cprog, tmp_path):
    total = 5_000 * 512 + 77
    f = tmp_path / "fw.dat"
    r = iolab("buffer", "--spec", "*.dat:size=256K", "--", cprog("writer"), f, total, 512,
              "fwrite", "close")
    assert r.returncode == 0, r.stderr
    assert f.read_bytes() == pattern(total)
    t = parse_table(r.stderr)[str(f)]
    assert t["Sys Write MB"] == pytest.approx(total / 2**20, abs=1e-5)
    assert t["Sys Write calls"] <= total // (256 << 10) + 1


def test_sequential_reads_are_prefetched(buflib, cprog, tmp_path):
    f = tmp_path / "r.dat"
    run([cprog("threads"), "pshared", f, 1, 4000, 100], buflib, None)
    r = iolab("buffer", "--spec", "*.dat:size=64K:count=4:prefetch=2", "--", cprog("threads"),
              "reads", f, 1, 4000, 100)
    assert r.stdout.split() == ["intact", "4000"]
    t = parse_table(r.stderr)[str(f)]
    assert t["Read calls"] == 4000 and t["Read avg"] == 100
    assert t["Sys Read MB"] == pytest.approx(400_000 / 2**20, abs=1e-5)  # each byte once
    assert t["Prefetches"] >= 7  # 400,000 B in 64 KiB buffers
    # filled in 16 KiB chunks (a quarter buffer): ~25 reads, plus one at EOF per buffer
    assert t["Sys Read calls"] < 40


def test_auto_prefetch_steps_aside_on_a_local_file_system(buflib, cprog, tmp_path):
    # prefetch=auto (the default) reads ahead only where each read is a round trip; on the
    # local test folder the kernel's readahead does the job, so reads pass straight through.
    # An explicit number keeps forcing read-ahead.
    f = tmp_path / "r.dat"
    run([cprog("threads"), "pshared", f, 1, 4000, 100], buflib, None)
    tables = {}
    for pf in ("auto", "2"):
        r = iolab("buffer", "--spec", f"*.dat:size=64K:count=4:prefetch={pf}", "--",
                  cprog("threads"), "reads", f, 1, 4000, 100)
        assert r.returncode == 0 and r.stdout.split() == ["intact", "4000"], r.stderr
        tables[pf] = (parse_table(r.stderr)[str(f)], read_ahead_line(r.stderr, f))
    auto, why = tables["auto"]
    if not why.startswith("off (auto: local"):
        pytest.skip(f"the test folder is not on a local file system: {why}")
    assert auto["Read calls"] == 4000 and auto["Prefetches"] == 0
    assert auto["Sys Read MB"] == pytest.approx(400_000 / 2**20, abs=1e-5)
    assert auto["Sys Read calls"] >= 4000  # every read() went to the kernel as it was
    forced, why = tables["2"]
    assert why == "on (prefetch=2)"
    assert forced["Read calls"] == 4000 and forced["Prefetches"] >= 7
    assert forced["Sys Read MB"] == pytest.approx(400_000 / 2**20, abs=1e-5)
    assert forced["Sys Read calls"] < 40  # 16 KiB chunks, not 100 B reads


def test_default_prefetch_is_auto(buflib, cprog, tmp_path):
    f = tmp_path / "d.dat"
    run([cprog("threads"), "pshared", f, 1, 400, 100], buflib, None)
    r = iolab("buffer", "--spec", "*.dat:size=64K", "--", cprog("threads"), "reads", f, 1, 400, 100)
    assert r.returncode == 0, r.stderr
    assert read_ahead_line(r.stderr, f).startswith(("off (auto: ", "on (auto: "))
    assert bufspec.parse("*.dat")[0].prefetch_auto
    assert not bufspec.parse("*.dat:prefetch=2")[0].prefetch_auto
    assert bufspec.parse("*.dat:prefetch=2:prefetch=auto")[0].prefetch_auto


def test_exit_status_and_output_are_the_programs(buflib, cprog, tmp_path):
    r = iolab("buffer", "-q", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
    assert (r.returncode, r.stdout, r.stderr) == (7, "out\n", "err\n")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["buffer", "--spec", "*.dat:size=12Q", "--", "true"], "size=12Q"),
        (["buffer", "--spec", "*.dat:colour=red", "--", "true"], "unknown key 'colour'"),
        (["buffer", "--", "/nonexistent/program"], "cannot start /nonexistent/program"),
        (["buffer"], "nothing to run"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(buflib, argv, message):
    r = iolab(*argv)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr


# (value, valid): one table for both parsers.
SPECS = [
    ("", True), ("*", True), ("*.dat", True), (":size=1M", True),
    ("*.dat:size=64M:count=4:prefetch=2,%stdout:size=1M", True),
    ("a*:size=512,b*:count=64:prefetch=63,c*:verbose", True), ("*:size=1G", True),
    ("*:size=4k", True), ("*:size=100", False), ("*:size=2G", False), ("*:size=", False),
    ("*:size", False), ("*:count=0", False), ("*:count=65", False), ("*:prefetch=-1", False),
    ("*:count=x", False), ("%stdin", False), ("*:bogus=1", False), ("*:size=1M:count=4x", False),
    ("*:prefetch=auto", True), ("*:count=1:prefetch=auto", True), ("*:prefetch=AUTO", False),
    ("*:prefetch=", False), ("*:prefetch=autox", False),
]


@pytest.mark.parametrize("value,valid", SPECS)
def test_c_and_python_read_the_variable_alike(buflib, cprog, tmp_path, value, valid):
    try:
        bufspec.parse(value)
        py_ok = True
    except UsageError:
        py_ok = False
    r = run([cprog("writer"), tmp_path / "x.dat", 1000, 100, "write", "close"], buflib, value)
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("iolab-buffer:")]
    assert r.returncode == 0  # a bad value never stops the program
    assert (py_ok, len(warnings) == 0) == (valid, valid), r.stderr
    assert len(warnings) <= 1
    assert (tmp_path / "x.dat").read_bytes() == pattern(1000)


def test_verbose_goes_to_stderr_or_file(buflib, cprog, tmp_path):
    f, stats = tmp_path / "v.dat", tmp_path / "stats.txt"
    r = run([cprog("writer"), f, 10_000, 512, "write", "close"], buflib, "*.dat:verbose")
    assert parse_table(r.stderr)[str(f)]["Write calls"] == 20
    r = run([cprog("writer"), f, 10_000, 512, "write", "close"], buflib,
            f"*.dat:verbose={stats}")
    assert r.stderr == "" and parse_table(stats.read_text())[str(f)]["Write calls"] == 20


def test_stdout_to_a_file_is_byte_identical(buflib, tmp_path):
    outs = []
    for spec in (None, "%stdout:size=1M"):
        out = tmp_path / f"out{spec is None}.txt"
        with open(out, "w") as fh:
            subprocess.run(["sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line $i; "
                            "i=$((i+1)); done; echo done >&2"],
                           stdout=fh, env=lib_env(buflib, spec), check=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].endswith(b"line 2999\n")


def test_chains_with_the_tracer(buflib, cprog, tmp_path):
    if not LIB_TRACE.is_file():
        pytest.skip("libiolab-trace.so is not built")
    f = tmp_path / "chain.dat"
    env = lib_env(buflib, "*.dat:size=64K", IOLAB_TRACE_DIR=str(tmp_path))
    for order in ([buflib, LIB_TRACE], [LIB_TRACE, buflib]):
        env["LD_PRELOAD"] = ":".join(map(str, order))
        r = subprocess.run([str(cprog("writer")), str(f), "300000", "512", "write", "close"],
                           env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert f.read_bytes() == pattern(300_000)
        # both libraries handle SIGTERM: the process still dies of it, everything written
        p = subprocess.Popen([str(cprog("writer")), str(f), "300000", "512", "write", "hang"],
                             env=env, stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().startswith("ready")
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == -signal.SIGTERM
        assert f.read_bytes() == pattern(300_000)


def test_unset_variable_means_pass_through(buflib, cprog, tmp_path):
    f = tmp_path / "p.dat"
    env = {k: v for k, v in os.environ.items() if k != "IOLAB_BUFFER"}
    env["LD_PRELOAD"] = str(buflib)
    r = subprocess.run([str(cprog("writer")), str(f), "5000", "512", "write", "close"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "" and f.read_bytes() == pattern(5000)
    assert Path(f).stat().st_size == 5000


def test_absolute_pattern_matches_a_relative_open(buflib, cprog, tmp_path):
    # Patterns written from a Darshan log (iolab diagnose) name files absolutely.
    r = subprocess.run([str(cprog("writer")), "rel.dat", "10000", "512", "write", "close"],
                       cwd=tmp_path, env=lib_env(buflib, f"{tmp_path}/*.dat:verbose"),
                       capture_output=True, text=True)
    assert parse_table(r.stderr)["rel.dat"]["Write calls"] == 20
