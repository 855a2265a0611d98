"""IOR's remaining patterns and its semantics, checked on the files written: --random (-z)
moves the same transfers in another order, --fsync-per-write (-Y) syncs after every write,
--stonewall (-D) stops every rank at a deadline and wears out to the furthest one,
--unique-dir (-u) puts each rank's file in its own directory; and IOR's letters given to
`iolab bench` with `--layout segmented` write IOR's file (one shared file, IOR's offsets).

`iolab bench -a MPIIO -c -t 256k -b 1m` once switched to IOR's one shared file because of the
letters used; since issue #28 a short and a long spelling are one option with one default (a
file per process), and IOR's own defaults are left to a verb of their own."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from array_model import pattern_bytes
from engine_helpers import B, Engine, S, T, _env, doc, run_engine, run_refused, strace_run


def ior_shared_owner(ranks: int, block: int, segments: int) -> np.ndarray:
    """IOR's shared file: segment s holds every rank's block in rank order, so rank r's
    transfer j of segment s sits at (s * ranks + r) * block + j * transfer."""
    own = np.empty(ranks * block * segments, dtype=np.int64)
    for s in range(segments):
        for r in range(ranks):
            start = (s * ranks + r) * block
            own[start:start + block] = r
    return own


def small(scratch: Path, *extra: str) -> list[str]:
    return ["--transfer", str(T), "--block", str(B), "--segments", str(S), "--path",
            str(scratch / "f"), "--quiet", "--verify", *extra]


def written_offsets(trace: str) -> list[int]:
    # pwrite64(fd, "..."..., 4096, 8192) = 4096 ; only the test file's writes are this size
    return [int(m.group(1)) for m in re.finditer(rf"pwrite64\(\d+, .*, {T}, (\d+)\) = {T}",
                                                 trace)]


def test_random_file_per_process(engine: Engine, scratch: Path, tmp_path: Path):
    """-z with -F: each rank's file is byte for byte the sequential one, while the writes
    visit each block's transfers in a random order, block after block (IOR's
    GetOffsetArrayRandom for filePerProc)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    r = run_engine(engine, 2, small(scratch, "--layout", "fpp", "--keep", "--random"),
                   scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr
    for rank in range(2):
        f = scratch / f"f.{rank}"
        assert f.read_bytes() == pattern_bytes(np.full(B * S, rank), 1)
        f.unlink()
    k = 32  # transfers per block
    trace = strace_run(engine, small(scratch, "--layout", "fpp", "--write", "--random",
                                     "--block", str(k * T)), tmp_path / "trace", "pwrite64")
    offs = written_offsets(trace)
    assert len(offs) == k * S
    for seg in range(S):
        block = offs[seg * k:(seg + 1) * k]
        assert sorted(block) == [(seg * k + j) * T for j in range(k)]
        assert block != sorted(block)


def test_random_shared_file_deals_transfers(engine: Engine, scratch: Path):
    """-z on one shared file (IOR's definition): every transfer slot of the file is written
    exactly once, by a rank chosen at random (the same deal in every segment), so ranks move
    different amounts; the data verifies. Each slot's writer is found from its bytes."""
    ranks, per = 3, 16
    r = run_engine(engine, ranks, small(scratch, "--layout", "segmented", "--keep",
                                        "--random", "--block", str(per * T)), scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr
    raw = (scratch / "f").read_bytes()
    assert len(raw) == ranks * per * T * S
    writer = []
    for slot in range(ranks * per * S):
        lo = slot * T
        who = [k for k in range(ranks)
               if raw[lo:lo + T] == pattern_bytes(np.full(T, k), 1, start=lo)]
        assert len(who) == 1, f"slot {slot}: written by {who}"
        writer.append(who[0])
    (w,) = r.phases("write")
    counts = [writer.count(k) for k in range(ranks)]
    assert [p["bytes"] for p in w["per_rank"]] == [c * T for c in counts]
    assert writer[:ranks * per] == writer[ranks * per:]  # the same deal in each segment
    sequential = [s // per % ranks for s in range(ranks * per * S)]
    assert writer != sequential


def test_fsync_per_write(engine: Engine, scratch: Path, tmp_path: Path):
    """-Y: one fsync after every write call (8 writes, 8 fsyncs), none without it."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    for per_write, want in ((True, 8), (False, 0)):
        extra = ["--fsync-per-write"] if per_write else []
        trace = strace_run(engine, small(scratch, "--write", *extra), tmp_path / "t",
                           "pwrite64,fsync")
        assert len(written_offsets(trace)) == 8
        assert len(re.findall(r"^\d+ +fsync\(", trace, re.M)) == want, trace[-2000:]


@pytest.mark.parametrize("api", ["mpiio", "hdf5"])
def test_fsync_per_write_collective_sync(engine: Engine, scratch: Path, api: str):
    """With MPI-IO based APIs the sync is collective: the run completes and verifies."""
    if api not in engine.apis:
        pytest.skip(f"api {api} not built")
    r = run_engine(engine, 2, small(scratch, "--api", api, "--layout", "strided",
                                    "--fsync-per-write"), scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr


def test_stonewall_wears_out_to_the_furthest_rank(engine: Engine, scratch: Path):
    """-D with wear-out on the null backend (2 ms per transfer, 1024 transfers = 2 s per
    rank): every rank stops near 0.2 s, then all reach the same count."""
    r = run_engine(engine, 3, ["--api", "null", "--null.delay-us", "2000", "--transfer", "4K",
                               "--block", "4M", "--stonewall", "0.2", "--quiet", "--write"],
                   scratch.parent)
    assert r.rc == 0, r.stderr
    (ph,) = r.phases("write")
    sw = ph["stonewall"]
    assert sw["hit"] is True and sw["deadline_s"] == 0.2
    assert 0 < sw["xfers_min"] <= sw["xfers_max"] < 1024
    assert {p["bytes"] for p in ph["per_rank"]} == {sw["xfers_max"] * 4096}
    assert ph["bytes"] == 3 * sw["xfers_max"] * 4096 and ph["time_s"] < 1.5


def test_stonewall_reads_what_was_written(engine: Engine, scratch: Path):
    """A stonewalled write on a real file, then the read of the same transfers: the bytes
    agree, they verify, and the file holds each rank's first xfers_max transfers at IOR's
    segmented offsets."""
    block = 2048 * T
    r = run_engine(engine, 2, ["--transfer", str(T), "--block", str(block), "--path",
                               str(scratch / "f"), "--layout", "segmented", "--verify",
                               "--keep", "--quiet", "--fsync-per-write", "--stonewall", "0.05"],
                   scratch.parent, timeout=120)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr
    (w,), (rd,) = r.phases("write"), r.phases("read")
    n = w["stonewall"]["xfers_max"]
    assert w["stonewall"]["hit"] is True and 0 < n < 2048
    assert rd["bytes"] == w["bytes"] == 2 * n * T
    raw = (scratch / "f").read_bytes()
    want = pattern_bytes(ior_shared_owner(2, block, 1), 1)
    for rank in range(2):
        lo = rank * block
        assert raw[lo:lo + n * T] == want[lo:lo + n * T]


def test_unique_dir(engine: Engine, scratch: Path):
    """-u: rank r's file is <dir>/<r>/f.<r>, with that rank's data; without --keep the
    directories go with the files."""
    r = run_engine(engine, 3, small(scratch, "--layout", "fpp", "--unique-dir", "--keep"),
                   scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr
    assert sorted(p.name for p in scratch.iterdir()) == ["0", "1", "2"]
    for rank in range(3):
        f = scratch / str(rank) / f"f.{rank}"
        assert f.read_bytes() == pattern_bytes(np.full(B * S, rank), 1)
    for rank in range(3):
        (scratch / str(rank) / f"f.{rank}").unlink()
        (scratch / str(rank)).rmdir()
    r = run_engine(engine, 3, small(scratch, "--layout", "fpp", "--unique-dir"),
                   scratch.parent)
    assert r.rc == 0, r.stderr
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("extra,message", [
    (["--layout", "segmented", "--unique-dir"], "--unique-dir applies to --layout fpp"),
    (["--layout", "strided", "--stonewall", "1", "--threads", "2"],
     "--stonewall cannot be combined with --threads"),
    (["--layout", "strided", "--random", "--api", "mpiio", "--file-view"],
     "apply to the fpp, segmented and strided layouts without --file-view"),
    (["--stonewall", "-1"], "--stonewall -1"),
    (["--layout", "segmented", "--random", "--api", "mpiio", "--collective"],
     "deals the transfers to random ranks"),
])
def test_bad_input(engine: Engine, scratch: Path, extra: list[str], message: str):
    r = run_refused(engine, 2, ["--path", str(scratch / "f"), "--quiet", *extra],
                    scratch.parent)
    assert r.rc == 2 and r.doc is None
    assert message in r.stderr, r.stderr
    assert list(scratch.iterdir()) == []


# --- `iolab bench` with IOR's command line ----------------------------------------------

def iolab_bench(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iolab", "bench", "--db", str(tmp_path / "r.db"),
           "--json", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=120)


def stored_config(p: subprocess.CompletedProcess[str]) -> dict:
    runs = json.loads(p.stdout)["runs"]
    assert len(runs) == 1 and runs[0]["status"] == "ok", p.stderr
    engine_json = runs[0]["engine"]
    doc_ = json.loads(engine_json) if isinstance(engine_json, str) else engine_json
    return doc_["config"]


def test_ior_line_writes_iors_shared_file(engine: Engine, scratch: Path, tmp_path: Path):
    """`-a MPIIO -c -t 4k -b 16k -s 2 --layout segmented`: one shared file with IOR's offsets
    and each rank's bytes. The layout is named: IOR's letters are only other spellings of
    iolab's options, with iolab's default (a file per process)."""
    path = scratch / "ior.dat"
    p = iolab_bench(tmp_path, "--np", "2", "-a", "MPIIO", "-c", "-t", str(T), "-b", str(B),
                    "-s", str(S), "--layout", "segmented", "-k", "-o", str(path), "--verify")
    assert p.returncode == 0, p.stderr
    cfg = stored_config(p)
    assert cfg["layout"] == "segmented" and cfg["collective"] is True
    assert sorted(x.name for x in scratch.iterdir()) == ["ior.dat"]
    assert path.read_bytes() == pattern_bytes(ior_shared_owner(2, B, S), 1)


def test_ior_line_with_F_writes_a_file_per_process(engine: Engine, scratch: Path,
                                                   tmp_path: Path):
    path = scratch / "ior.dat"
    p = iolab_bench(tmp_path, "--np", "2", "-a", "POSIX", "-F", "-t", str(T), "-b", str(B),
                    "-s", str(S), "-k", "-o", str(path), "--verify", "-z")
    assert stored_config(p)["random"] is True
    assert p.returncode == 0, p.stderr
    assert "IOR flags used" not in p.stderr
    assert stored_config(p)["layout"] == "fpp"
    for rank in range(2):
        f = scratch / f"ior.dat.{rank}"
        assert f.read_bytes() == pattern_bytes(np.full(B * S, rank), 1)


def test_iolab_options_keep_iolabs_default(engine: Engine, scratch: Path, tmp_path: Path):
    """Long options only: iolab's own default (a file per process), no note."""
    p = iolab_bench(tmp_path, "--np", "2", "--api", "posix", "--transfer", str(T), "--block",
                    str(B), "--keep", "--path", str(scratch / "f"))
    assert p.returncode == 0, p.stderr
    assert "IOR flags used" not in p.stderr
    assert stored_config(p)["layout"] == "fpp"
    assert sorted(x.name for x in scratch.iterdir()) == ["f.0", "f.1"]
