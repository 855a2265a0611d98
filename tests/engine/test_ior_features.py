"""IOR 4.1's own orders and names in the engine, checked on real runs: --random-seed (IOR -z
with --random-offset-seed: glibc random()'s shuffle), --random-repeat (IOR -z -z: IOR's
rand64 draws a block per segment), --random-prefill (IOR --randomPrefill) and --fpp-digits
(IOR's PATH.00000000 names). The expected offsets come from IOR's algorithms written again
here in Python (glibc's random() through ctypes, rand64 in integers), never from the engine.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, doc, run_engine, run_refused

T = 4096
MASK = (1 << 64) - 1


def glibc_random(seed: int) -> list[int]:
    """An endless-enough stream of glibc's random() after srandom(seed)."""
    name = ctypes.util.find_library("c")
    if name is None or "libc.so.6" not in name:
        pytest.skip("glibc is not the C library here")
    libc = ctypes.CDLL(name)
    libc.srandom(ctypes.c_uint(seed))
    libc.random.restype = ctypes.c_long
    return [libc.random() for _ in range(4096)]


def ior_permutation(ranks: int, rank: int, block: int, seed: int, fpp: bool) -> list[int]:
    """IOR's GetOffsetArrayRandom: offsets within a segment in the order a rank moves them."""
    slots = ranks * block // T
    stream = iter(glibc_random(seed + rank if fpp else seed))
    if fpp:
        offs = [j * T for j in range(block // T)]
    else:
        offs = [k * T for k in range(slots) if next(stream) % ranks == rank]
        stream = iter(glibc_random(seed)[slots:])  # IOR deals twice from the seed
    n = len(offs)
    for i in range(n):
        v = next(stream) % n
        offs[i], offs[v] = offs[v], offs[i]
    return offs


def ior_rand64_blocks(seed: int, rank: int, draws: int, nblocks: int) -> list[int]:
    """IOR's -z -z: srand64(seed * (rank + 1)), one rand64() per segment, modulo blocks."""
    hi, lo, out = 0, seed * (rank + 1), []
    for _ in range(draws):
        lo2 = (lo * 0x866458CD56F5E605) & MASK
        hi = (hi * 0x0FC94E3BF4E9AB32 + (lo2 >> 32)) & MASK
        lo = lo2
        out.append(hi % nblocks)
    return out


def traced_offsets(engine: Engine, np_: int, args: list[str], out: Path,
                   call: str) -> list[list[int]]:
    """Each rank's offsets of `call` with T bytes, in order (strace -ff per rank)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    argv = engine.argv(np_, args)
    i = argv.index(str(engine.binary))
    argv[i:i] = ["strace", "-ff", "-qq", "-e", f"trace={call}", "-o", str(out / "tr")]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    per_rank = []
    for f in sorted(out.glob("tr.*")):
        offs = [int(m.group(1)) for m in re.finditer(
            rf"{call}\(\d+, .*, {T}, (\d+)\) = {T}", f.read_text())]
        if offs:
            per_rank.append(offs)
    return per_rank


@pytest.mark.parametrize("layout", ["fpp", "segmented"])
def test_random_seed_moves_iors_shuffled_offsets(engine: Engine, scratch: Path,
                                                  tmp_path: Path, layout: str) -> None:
    """expected IOR's -z order with --random-offset-seed 7 (glibc random(), per rank for
    fpp, one deal for the shared file) / was the engine's own shuffle for every seed."""
    ranks, block, segs, seed = 2, 8 * T, 2, 7
    fpp = layout == "fpp"
    got = traced_offsets(engine, ranks, [
        "--layout", layout, "--transfer", str(T), "--block", str(block), "--segments",
        str(segs), "--path", str(scratch / "f"), "--write", "--random", "--random-seed",
        str(seed), "--quiet", "--json", str(tmp_path / "r.json")], tmp_path, "pwrite64")
    want = []
    for rank in range(ranks):
        offs = ior_permutation(ranks, rank, block, seed, fpp)
        step = block if fpp else ranks * block
        want.append([s * step + o for s in range(segs) for o in offs])
    assert sorted(got) == sorted(want)


def test_random_repeat_draws_iors_blocks_from_the_file_on_disk(
        engine: Engine, scratch: Path, tmp_path: Path) -> None:
    """expected IOR -z -z on a read: per segment one block of the whole file drawn with
    rand64 (the file's size on disk), its transfers in order / was not in the engine."""
    path = str(scratch / "f")
    w = run_engine(engine, 2, ["--layout", "segmented", "--transfer", str(T), "--block",
                               str(4 * T), "--segments", "3", "--path", path, "--write",
                               "--keep", "--quiet"], tmp_path)
    assert w.rc == 0, w.why()
    block, segs, seed = 2 * T, 5, 5
    got = traced_offsets(engine, 2, [
        "--layout", "segmented", "--transfer", str(T), "--block", str(block), "--segments",
        str(segs), "--path", path, "--read", "--random-repeat", "--random-seed", str(seed),
        "--keep", "--quiet", "--json", str(tmp_path / "r.json")], tmp_path, "pread64")
    nblocks = 2 * 4 * T * 3 // block  # the file on disk, not this run's layout
    want = [[b * block + j * T for b in ior_rand64_blocks(seed, rank, segs, nblocks)
             for j in range(block // T)] for rank in range(2)]
    assert sorted(got) == sorted(want)


def test_random_repeat_write_starts_with_the_last_block(engine: Engine, scratch: Path,
                                                        tmp_path: Path) -> None:
    """expected the file at its full size from the first write (IOR writes the last block
    first on rank 0) and the moved bytes counted / was not in the engine."""
    r = run_engine(engine, 2, ["--layout", "segmented", "--transfer", str(T), "--block",
                               str(2 * T), "--segments", "4", "--path", str(scratch / "f"),
                               "--write", "--random-repeat", "--keep", "--quiet"], tmp_path)
    assert r.rc == 0, r.why()
    assert (scratch / "f").stat().st_size == 2 * 2 * T * 4
    assert sum(p["bytes"] for p in r.phases("write")) == 2 * 2 * T * 4


def test_random_prefill_writes_the_blocks_in_order_first(engine: Engine, scratch: Path,
                                                         tmp_path: Path) -> None:
    """expected each rank's blocks written in order in prefill-sized calls before the random
    writes, the prefill's bytes not counted / was refused."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    block, pf = 8 * T, 2 * T
    argv = engine.argv(1, ["--layout", "fpp", "--transfer", str(T), "--block", str(block),
                           "--segments", "2", "--path", str(scratch / "f"), "--write",
                           "--random", "--random-prefill", str(pf), "--quiet", "--json",
                           str(tmp_path / "r.json")])
    i = argv.index(str(engine.binary))
    argv[i:i] = ["strace", "-f", "-qq", "-e", "trace=pwrite64", "-o", str(tmp_path / "tr")]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    calls = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(
        r"pwrite64\(\d+, .*, (\d+), (\d+)\) = \d+", (tmp_path / "tr").read_text())]
    prefill = [c for c in calls if c[0] == pf]
    assert prefill == [(pf, j * pf) for j in range(2 * block // pf)]
    assert calls.index(prefill[-1]) < min(calls.index(c) for c in calls if c[0] == T)
    result = json.loads((tmp_path / "r.json").read_text())
    assert [ph["bytes"] for r in result["repetitions"] for ph in r["phases"]] == [2 * block]


def test_fpp_digits_names_files_as_ior(engine: Engine, scratch: Path) -> None:
    """expected PATH.00000000 and PATH.00000001 (IOR's %08d) / was PATH.0 and PATH.1, which
    a user's IOR script could not find."""
    r = run_engine(engine, 2, ["--layout", "fpp", "--transfer", str(T), "--block", str(T),
                               "--path", str(scratch / "testFile"), "--fpp-digits", "8",
                               "--keep", "--quiet", "--verify"], scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.why()
    assert sorted(p.name for p in scratch.iterdir()) == ["testFile.00000000",
                                                         "testFile.00000001"]


@pytest.mark.parametrize("extra,says", [
    (["--random-prefill", "4k"], "add --random"),
    (["--random", "--random-prefill", "3k"], "must divide --block"),
    (["--random", "--random-seed", "-5"], "--random-seed -5"),
    (["--random-repeat", "--layout", "strided"], "fpp and segmented"),
    (["--random-repeat", "--threads", "2"], "drop --threads"),
    (["--fpp-digits", "40"], "--fpp-digits 40"),
])
def test_ior_options_refuse_bad_combinations_in_one_line(engine: Engine, scratch: Path,
                                                         extra: list[str], says: str) -> None:
    """expected exit 2, one line naming the option, nothing written."""
    r = run_refused(engine, 2, ["--transfer", "4k", "--block", "16k", "--path",
                                str(scratch / "f"), "--quiet", *extra], scratch.parent)
    assert r.rc == 2 and says in r.stderr, r.why()
    assert len(r.stderr.strip().splitlines()) == 1
    assert not list(scratch.iterdir())


def traced_calls(engine: Engine, np_: int, args: list[str], out: Path, calls: str) -> str:
    """Every rank's trace of the given calls, one text (strace -f under mpirun)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    argv = engine.argv(np_, args)
    i = argv.index(str(engine.binary))
    argv[i:i] = ["strace", "-f", "-qq", "-e", f"trace={calls}", "-o", str(out / "calls")]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    return (out / "calls").read_text()


def test_remove_each_rep_removes_between_repetitions(engine: Engine, scratch: Path,
                                                     tmp_path: Path) -> None:
    """expected IOR's order on -i 2 without -k: remove, write, read, remove, remove, write,
    read, remove / was one truncating open per write and one removal at the end."""
    f = scratch / "f"
    trace = traced_calls(engine, 1, ["--layout", "segmented", "--transfer", "4k", "--block",
                                     "8k", "--reps", "2", "--path", str(f), "--quiet",
                                     "--remove-each-rep", "--json", str(tmp_path / "r.json")],
                         tmp_path, "openat,unlink")
    steps = []
    for line in trace.splitlines():
        if f'"{f}"' not in line:
            continue
        if "unlink(" in line:
            steps.append("rm")
        elif "O_WRONLY" in line or "O_RDWR" in line:
            steps.append("w")
        elif "openat(" in line and steps[-1:] != ["r"]:  # the cache probe opens it too
            steps.append("r")
    assert steps == ["rm", "w", "r", "rm", "rm", "w", "r", "rm"], steps
    assert not f.exists()


def test_use_existing_keeps_the_file_before_the_write(engine: Engine, scratch: Path,
                                                      tmp_path: Path) -> None:
    """expected no removal before the write with --use-existing (IOR -E) / was refused."""
    f = scratch / "f"
    f.write_bytes(b"x" * 100)
    trace = traced_calls(engine, 1, ["--layout", "segmented", "--transfer", "4k", "--block",
                                     "8k", "--path", str(f), "--quiet", "--write", "--keep",
                                     "--remove-each-rep", "--use-existing", "--json",
                                     str(tmp_path / "r.json")], tmp_path, "unlink")
    assert f'"{f}"' not in trace
    assert f.stat().st_size == 8192


def test_file_per_rep_names_each_repetitions_files(engine: Engine, scratch: Path) -> None:
    """expected f.00000000.0, f.00000001.0, f.00000000.1, ... (IOR -m: .<rep>) / was one set
    of files rewritten by every repetition."""
    r = run_engine(engine, 2, ["--layout", "fpp", "--transfer", "4k", "--block", "8k",
                               "--reps", "2", "--path", str(scratch / "f"), "--fpp-digits",
                               "8", "--file-per-rep", "--keep", "--quiet", "--verify"],
                   scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.why()
    assert sorted(p.name for p in scratch.iterdir()) == [
        "f.00000000.0", "f.00000000.1", "f.00000001.0", "f.00000001.1"]


def test_phase_delay_sleeps_outside_the_timing(engine: Engine, scratch: Path) -> None:
    """expected each phase to start 0.5 s late while its time stays short (IOR -d) / was
    refused."""
    import time
    t0 = time.monotonic()
    r = run_engine(engine, 2, ["--layout", "segmented", "--transfer", "4k", "--block", "8k",
                               "--path", str(scratch / "f"), "--quiet", "--phase-delay",
                               "0.5"], scratch.parent)
    took = time.monotonic() - t0
    assert r.rc == 0, r.why()
    assert len(r.phases()) == 2 and all(p["time_s"] < 0.5 for p in r.phases())
    assert took >= 1.0


def test_max_time_starts_no_phase_after_it(engine: Engine, scratch: Path) -> None:
    """expected the phases that started before 1.5 s only (IOR -T) / was every repetition."""
    r = run_engine(engine, 1, ["--layout", "segmented", "--transfer", "4k", "--block", "8k",
                               "--reps", "5", "--path", str(scratch / "f"), "--quiet",
                               "--phase-delay", "1", "--max-time", "1.5"], scratch.parent)
    assert r.rc == 0, r.why()
    assert [p["op"] for p in r.phases()] == ["write", "read"]


@pytest.mark.parametrize("barriers", [False, True])
def test_step_barriers_line_the_ranks_up_after_the_transfers(
        engine: Engine, scratch: Path, barriers: bool) -> None:
    """expected every rank's transfers to end together with --step-barriers (IOR -g) while
    ranks with fewer transfers end early without / was refused."""
    if "null" not in engine.apis:
        pytest.skip("the null backend is not built")
    r = run_engine(engine, 3, ["--api", "null", "--null.delay-us", "20000", "--layout",
                               "segmented", "--transfer", "4k", "--block", "16k", "--path",
                               str(scratch / "f"), "--write", "--random", "--random-seed",
                               "1", "--quiet", *(["--step-barriers"] if barriers else [])],
                   scratch.parent)
    assert r.rc == 0, r.why()
    per = r.phases("write")[0]["per_rank"]
    assert len({p["bytes"] for p in per}) > 1  # IOR's deal: ranks move different amounts
    ends = [p["start_s"] + p["open_s"] + p["xfer_s"] for p in per]
    spread = max(ends) - min(ends)
    assert (spread < 0.015) if barriers else (spread > 0.015), ends


def read_targets(folder: Path, data: Path) -> dict[int, list[int]]:
    """rank -> the ranks whose files it read, per repetition (strace -ff -y of pwrite64 and
    pread64 on the files data.<rank>: a rank is known by the file it writes)."""
    out: dict[int, list[int]] = {}
    name = re.escape(str(data))
    for f in folder.glob("tr.*"):
        text = f.read_text()
        w = re.search(rf"pwrite64\(\d+<{name}\.(\d+)>", text)
        if not w:
            continue
        reads = [int(m) for m in re.findall(rf"pread64\(\d+<{name}\.(\d+)>", text)]
        out[int(w[1])] = [r for i, r in enumerate(reads) if i == 0 or reads[i - 1] != r]
    return out


def ior_read_rank(ranks: int, rank: int, mode: int, seed: int, rep: int) -> int:
    """IOR's -Z (mode 1: srand(rank + seed), rand() % ranks; one node, so no redraw) and
    -Z -Z (mode 2: srand(seed), IOR's shuffle of the ranks); a negative seed is -seed + rep."""
    s = -seed + rep if seed < 0 else seed
    if mode == 1:
        return (rank + glibc_random(rank + s)[0] % ranks) % ranks
    stream, perm = iter(glibc_random(s)), list(range(ranks))
    for i in range(ranks):
        tgt = i + next(stream) % (ranks - i)
        perm[i], perm[tgt] = perm[tgt], perm[i]
    return perm[rank]


@pytest.mark.parametrize("mode,seed", [(1, 0), (1, 5), (2, 0), (2, -3)])
def test_reorder_random_reads_the_ranks_ior_draws(engine: Engine, scratch: Path,
                                                  tmp_path: Path, mode: int, seed: int) -> None:
    """expected each rank to read the file IOR -Z (-Z -Z, -X seed) picks for it, per
    repetition / was refused."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    ranks = 4
    argv = engine.argv(ranks, ["--layout", "fpp", "--transfer", str(T), "--block", str(T),
                               "--reps", "2", "--path", str(scratch / "f"), "--keep",
                               "--quiet", "--verify", "--reorder-random", str(mode),
                               "--reorder-seed", str(seed), "--json",
                               str(tmp_path / "r.json")])
    i = argv.index(str(engine.binary))
    argv[i:i] = ["strace", "-ff", "-y", "-qq", "-e", "trace=pwrite64,pread64", "-o",
                 str(tmp_path / "tr")]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "r.json").read_text())["verify"]["errors"] == 0
    got = read_targets(tmp_path, scratch / "f")
    want = {r: [ior_read_rank(ranks, r, mode, seed, rep) for rep in range(2)]
            for r in range(ranks)}
    # consecutive repetitions reading the same file collapse into one entry
    assert got == {r: [x for k, x in enumerate(v) if k == 0 or v[k - 1] != x]
                   for r, v in want.items()}


def test_reorder_nodes_on_one_host_reads_own_data(engine: Engine, scratch: Path) -> None:
    """expected IOR -C -Q 1 on one node: a shift of a whole node, each rank its own data
    (reorder_shift 0) / was the engine's shift of one rank."""
    r = run_engine(engine, 2, ["--layout", "fpp", "--transfer", str(T), "--block", str(T),
                               "--path", str(scratch / "f"), "--quiet", "--verify",
                               "--reorder", "--reorder-nodes", "1"], scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.why()
    assert [p.get("reorder_shift") for p in r.phases("read")] == [0]


def test_stonewall_stop_keeps_each_ranks_count(engine: Engine, scratch: Path) -> None:
    """expected IOR -D without wear-out: every rank stops at the deadline and the phase moves
    what the ranks had moved (no tail), the read reading what each rank wrote / was refused
    (the engine always wore out)."""
    if "null" not in engine.apis:
        pytest.skip("the null backend is not built")
    r = run_engine(engine, 2, ["--api", "null", "--null.delay-us", "20000", "--layout",
                               "fpp", "--transfer", str(T), "--block", str(100 * T), "--path",
                               str(scratch / "f"), "--quiet", "--stonewall", "0.3",
                               "--stonewall-stop"], scratch.parent)
    assert r.rc == 0, r.why()
    write, read = r.phases("write")[0], r.phases("read")[0]
    assert write["stonewall"]["hit"] and write["bytes"] < 2 * 100 * T
    assert write["time_s"] < 0.3 + 0.1  # nobody wore out past the deadline
    for w, rd in zip(write["per_rank"], read["per_rank"]):
        assert 0 < rd["bytes"] <= w["bytes"]  # own count, or fewer if the read's deadline hit
    bad = run_engine(engine, 1, ["--path", str(scratch / "g"), "--stonewall-stop"],
                     scratch.parent)
    assert bad.rc == 2 and "add --stonewall S" in bad.stderr


def test_check_write_reads_back_after_each_write(engine: Engine, scratch: Path) -> None:
    """expected after each write a checked read pass (-1) apart from the reads (IOR -W) /
    was refused."""
    r = run_engine(engine, 2, ["--layout", "segmented", "--transfer", str(T), "--block",
                               str(4 * T), "--reps", "2", "--path", str(scratch / "f"),
                               "--write", "--verify", "--check-write", "--keep", "--quiet"],
                   scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.why()
    assert [(p["op"], p["pass"]) for p in r.phases()] == [("write", 0), ("read", -1)] * 2
    assert all(p["bytes"] == 2 * 4 * T for p in r.phases())
    bad = run_engine(engine, 1, ["--path", str(scratch / "g"), "--check-write"],
                     scratch.parent)
    assert bad.rc == 2 and "add --verify" in bad.stderr


def test_hdf5_segment_datasets_are_iors(engine: Engine, scratch: Path) -> None:
    """expected IOR's HDF5 file: Dataset-0000.0000 ... one per segment of 8-byte integers,
    ranks x block bytes each, written and read back checked / was one byte dataset "data"
    (IOR -a HDF5 -s 3 refused)."""
    if "hdf5" not in engine.apis:
        pytest.skip("the hdf5 backend is not built (parallel HDF5 missing)")
    h5py = pytest.importorskip("h5py")
    f = scratch / "f.h5"
    r = run_engine(engine, 2, ["--api", "hdf5", "--hdf5.segment-datasets", "--layout",
                               "segmented", "--transfer", str(T), "--block", str(4 * T),
                               "--segments", "3", "--path", str(f), "--keep", "--quiet",
                               "--verify"], scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.why()
    with h5py.File(f, "r") as h:
        assert {k: (h[k].shape, str(h[k].dtype)) for k in h} == {
            f"Dataset-0000.{s:04d}": ((2 * 4 * T // 8,), "int64") for s in range(3)}
    bad = run_engine(engine, 2, ["--api", "hdf5", "--hdf5.segment-datasets", "--layout",
                                 "strided", "--path", str(scratch / "g.h5")], scratch.parent)
    assert bad.rc == 2 and "fpp and segmented" in bad.stderr


def test_stonewall_with_collective_stops_every_rank_together(engine: Engine,
                                                             scratch: Path) -> None:
    """expected IOR -D -c: rank 0 decides after every collective call, so all ranks stop at
    the same count before the end / was refused (ranks stopping apart would hang)."""
    if "mpiio" not in engine.apis:
        pytest.skip("the mpiio backend is not built")
    r = run_engine(engine, 2, ["--api", "mpiio", "--collective", "--layout", "segmented",
                               "--transfer", "1k", "--block", "256M", "--path",
                               str(scratch / "f"), "--write", "--quiet", "--stonewall", "0.3",
                               "--stonewall-stop"], scratch.parent, timeout=120)
    assert r.rc == 0, r.why()
    w = r.phases("write")[0]
    assert w["stonewall"]["hit"] and w["stonewall"]["xfers_min"] == w["stonewall"]["xfers_max"]
    assert 0 < w["bytes"] < 2 * 256 * 1024 * 1024
    assert len({p["bytes"] for p in w["per_rank"]}) == 1
