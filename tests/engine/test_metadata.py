"""--metadata (as mdtest / IO500): exact operation counts per phase, the shared directory
against one per rank (seen in the system calls), the hard preset's 3901-byte files, data
verified, nothing left behind, bad input refused, and `iolab bench --metadata` stored like
any run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, doc, run_engine, run_refused

PHASES = ["create", "stat", "open_read", "remove"]


def md_args(scratch: Path, *extra: str) -> list[str]:
    return ["--path", str(scratch / "m"), "--quiet", "--verify", *extra]


@pytest.mark.parametrize("preset,size,shared", [("easy", 0, False), ("hard", 3901, True)])
@pytest.mark.parametrize("np_", [1, 3])
def test_counts_per_phase(engine: Engine, scratch: Path, np_: int, preset: str, size: int,
                          shared: bool):
    r = run_engine(engine, np_, md_args(scratch, "--metadata", preset, "--md-files", "50",
                                        "--reps", "2"), scratch.parent)
    assert r.rc == 0, r.stderr
    d = doc(r)
    assert d["status"] == "ok" and d["verify"]["errors"] == 0
    plan = d["config"]["metadata_plan"]
    assert plan == {"files_per_rank": 50, "file_bytes": size,
                    "dir": "shared" if shared else "unique", "phases": "files"}
    for rep in d["repetitions"]:
        assert [p["op"] for p in rep["phases"]] == PHASES
        for p in rep["phases"]:
            assert p["ops"] == 50 * np_
            assert [x["ops"] for x in p["per_rank"]] == [50] * np_
            moves = p["op"] in ("create", "open_read")
            assert p["bytes"] == (50 * np_ * size if moves else 0)
            assert p["iops"] == pytest.approx(p["ops"] / p["time_s"])
    assert set(d["summary"]) == set(PHASES)
    assert d["summary"]["stat"]["iops"]["n"] == 2
    assert list(scratch.iterdir()) == []  # files and directories removed


def traced_paths(engine: Engine, scratch: Path, tmp_path: Path, *extra: str) -> list[str]:
    """Paths the ranks created (openat with O_CREAT) and the bytes they wrote, per strace."""
    argv = engine.argv(2, md_args(scratch, "--md-files", "4", *extra))
    i = argv.index(str(engine.binary))
    out = tmp_path / "trace"  # -ff: one file per process (two ranks, two strace)
    argv[i:i] = ["strace", "-ff", "-qq", "-e", "trace=openat,write,mkdir", "-o", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    assert p.returncode == 0, p.stderr
    return [ln for f in sorted(tmp_path.glob("trace.*")) for ln in f.read_text().splitlines()]


@pytest.mark.parametrize("preset,dir_opt,unique", [("easy", [], True), ("hard", [], False),
                                                   ("easy", ["--md-dir", "shared"], False),
                                                   ("hard", ["--md-dir", "unique"], True)])
def test_shared_or_unique_directory(engine: Engine, scratch: Path, tmp_path: Path,
                                    preset: str, dir_opt: list[str], unique: bool):
    """easy: <path>.md/<rank>/file.iolab.<rank>.<i>; hard: every rank's files in <path>.md/
    (file.iolab.<rank>.<i>, as long as mdtest's file.mdtest.<rank>.<i>);
    --md-dir overrides the preset; hard writes 3901 bytes per file."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    lines = traced_paths(engine, scratch, tmp_path, "--metadata", preset, *dir_opt)
    root = re.escape(str(scratch / "m.md"))
    created = [m.group(1) for ln in lines
               if (m := re.search(r'openat\(AT_FDCWD, "([^"]+)", [^)]*O_CREAT', ln))]
    mine = [c for c in created if re.match(root + "/", c)]
    assert len(mine) == 2 * 4
    want = (rf"{root}/([01])/file\.iolab\.\1\.[0-3]$" if unique
            else rf"{root}/file\.iolab\.[01]\.[0-3]$")
    assert all(re.match(want, c) for c in mine), mine
    assert len(set(mine)) == 8
    made = [ln for ln in lines if "mkdir(" in ln and str(scratch) in ln]
    assert len(made) == (3 if unique else 1)  # the root, and a directory per rank
    if preset == "hard":
        assert len([ln for ln in lines if re.search(r"write\(\d+, .*, 3901\) = 3901", ln)]) == 8


@pytest.mark.parametrize("preset", ["easy", "hard"])
def test_one_system_call_per_file_and_phase(engine: Engine, scratch: Path, tmp_path: Path,
                                            preset: str):
    """What each file costs, as mdtest 4 does it: create (openat O_CREAT, then write and close
    on the descriptor), stat (one stat by path), open+read, remove (one unlink by path), and
    nothing else names the file: no second stat, no access() probe, no cleanup unlink after
    a complete remove phase. Two repetitions: each file's four calls twice, in that order."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    argv = engine.argv(2, md_args(scratch, "--metadata", preset, "--md-files", "5", "--reps",
                                  "2"))
    i = argv.index(str(engine.binary))
    out = tmp_path / "trace"
    argv[i:i] = ["strace", "-ff", "-qq", "-e", "trace=%file", "-o", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    assert p.returncode == 0, p.stderr
    root = re.escape(str(scratch / "m.md"))
    calls: dict[str, list[str]] = {}
    for f in sorted(tmp_path.glob("trace.*")):
        for ln in f.read_text().splitlines():
            m = re.match(rf'(\w+)\((?:AT_FDCWD, )?"({root}/[^"]*file\.iolab\.[^"]+)"'
                         r'(, ([A-Z_|]+))?', ln)
            if m:
                name = m.group(1) + ("+creat" if "O_CREAT" in (m.group(4) or "") else "")
                calls.setdefault(m.group(2), []).append(name)
    assert len(calls) == 2 * 5, sorted(calls)
    once = ["openat+creat", "newfstatat", "openat", "unlink"]
    for path, seen in calls.items():
        assert seen == once * 2, (path, seen)


DIR_PHASES = ["dir_create", "dir_stat", "dir_rename", "dir_remove"]


@pytest.mark.parametrize("phases,files,expected", [
    ("both", 3, DIR_PHASES + PHASES), ("dirs", 3, DIR_PHASES),
    ("dirs", 1, ["dir_create", "dir_stat", "dir_remove"]),  # mdtest: no rename of one
])
def test_directory_phases_make_mdtests_calls(engine: Engine, scratch: Path, tmp_path: Path,
                                             phases: str, files: int, expected: list[str]):
    """expected mdtest's directory phases (mkdir, stat, its rename chain, rmdir of each
    rank's --md-files directories, before the file phases) / was no directory phase at all:
    the directories were made outside the timing only."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    argv = engine.argv(2, md_args(scratch, "--metadata", "easy", "--md-dir", "shared",
                                  "--md-files", str(files), "--md-phases", phases))
    i = argv.index(str(engine.binary))
    argv[i:i] = ["strace", "-ff", "-qq", "-e", "trace=mkdir,stat,newfstatat,rename,rmdir",
                 "-o", str(tmp_path / "trace")]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    assert p.returncode == 0, p.stderr
    calls = []  # rank 1's calls on its directories: (call, name, new name of a rename)
    for f in sorted(tmp_path.glob("trace.*")):
        for m in re.finditer(r'(\w+)\((?:AT_FDCWD, )?"[^"]*/(dir\.iolab\.1\.[^"/]+)"'
                             r'(?:, "[^"]*/(dir\.iolab\.1\.[^"/]+)")?', f.read_text()):
            calls.append((m.group(1).replace("newfstatat", "stat"), m.group(2), m.group(3)))
    names = [f"dir.iolab.1.{k}" for k in range(files)]
    want = [("mkdir", n, None) for n in names] + [("stat", n, None) for n in names]
    if files == 3:  # mdtest's chain: d0 -> d0-XX, d1 -> d0, d0-XX -> d1
        want += [("rename", names[0], names[0] + "-XX"), ("rename", names[1], names[0]),
                 ("rename", names[0] + "-XX", names[1])]
    want += [("rmdir", n, None) for n in names]
    assert calls == want
    assert list(scratch.iterdir()) == []
    r = run_engine(engine, 2, md_args(scratch, "--metadata", "easy", "--md-files", str(files),
                                      "--md-phases", phases), scratch.parent)
    assert r.rc == 0, r.stderr
    d = doc(r)
    assert [ph["op"] for ph in d["repetitions"][0]["phases"]] == expected
    assert all(ph["ops"] == 2 * files for ph in d["repetitions"][0]["phases"])
    assert list(d["summary"]) == expected
    assert d["config"]["metadata_plan"]["phases"] == phases
    assert list(scratch.iterdir()) == []


def phase_of_call(line: str, root: str, fds: dict[str, str]) -> str | None:
    """The metadata phase a traced call belongs to, when it is one of a file's own calls
    (its path under root, or the descriptor an open of such a path returned); else None.
    fds maps the descriptors open on the files to their phase (updated here)."""
    m = re.match(rf'(\w+)\((?:AT_FDCWD, )?"{root}/[^"]*file\.iolab\.[^"]+"(.*)\) = (-?\d+)', line)
    if m:
        call, rest, ret = m.groups()
        if call == "openat":
            phase = "create" if "O_CREAT" in rest else "open_read"
            fds[ret] = phase
            return phase
        return {"newfstatat": "stat", "statx": "stat", "stat": "stat",
                "unlink": "remove", "unlinkat": "remove"}.get(call)
    m = re.match(r"(write|read|close)\((\d+)[,)]", line)
    if m and m.group(2) in fds:
        return fds.pop(m.group(2)) if m.group(1) == "close" else fds[m.group(2)]
    return None


@pytest.mark.parametrize("preset", ["easy", "hard"])
def test_nothing_else_inside_a_phase(engine: Engine, scratch: Path, tmp_path: Path,
                                     preset: str):
    """A phase's timed loop makes its files' own calls and no other system call: from a
    rank's first call of a phase to its last, every traced call (all of them, not only those
    naming a path) is one of that phase's per-file calls. An fsync, lseek, fstat, a progress
    line or any call between two files would show here; mdtest 4's loop has none either
    (one lseek per created file besides)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    files = 6
    argv = engine.argv(2, md_args(scratch, "--metadata", preset, "--md-files", str(files)))
    i = argv.index(str(engine.binary))
    out = tmp_path / "trace"  # -ff: one file per thread, so MPI's own threads stay apart
    argv[i:i] = ["strace", "-ff", "-qq", "-o", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    assert p.returncode == 0, p.stderr
    root = re.escape(str(scratch / "m.md"))
    ranks_seen = 0
    for f in sorted(tmp_path.glob("trace.*")):
        fds: dict[str, str] = {}
        lines = f.read_text().splitlines()
        phases = [phase_of_call(ln, root, fds) for ln in lines]
        if not any(phases):
            continue  # a thread or process that touched none of the files
        ranks_seen += 1
        for ph in PHASES:
            at = [k for k, x in enumerate(phases) if x == ph]
            inside = lines[at[0]:at[-1] + 1]
            assert all(x == ph for x in phases[at[0]:at[-1] + 1]), (ph, inside)
            # open, write or read (hard's 3901 bytes; easy's files are empty), close
            per_file = 1 if ph in ("stat", "remove") else 3 if preset == "hard" else 2
            assert len(at) == files * per_file, (ph, inside)
    assert ranks_seen == 2


def test_size_override_and_read_verified(engine: Engine, scratch: Path):
    r = run_engine(engine, 2, md_args(scratch, "--metadata", "easy", "--md-files", "20",
                                      "--md-size", "10000"), scratch.parent)
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr
    (_, _, rd, _) = doc(r)["repetitions"][0]["phases"]
    assert rd["op"] == "open_read" and rd["bytes"] == 2 * 20 * 10000


def test_failure_is_reported_and_cleaned(engine: Engine, scratch: Path, small_fs: Path):
    """ENOSPC while creating (a 1 MiB tmpfs, 1 MiB files): status failed, errno 28, the
    phase named, nothing left."""
    r = run_engine(engine, 2, ["--path", str(small_fs / "m"), "--quiet", "--metadata", "easy",
                               "--md-files", "8", "--md-size", "512K"], scratch)
    assert r.rc == 1, r.stderr
    err = doc(r)["error"]
    assert err["errno"] == 28 and err["phase"] == "create"
    assert list(small_fs.iterdir()) == []


@pytest.mark.parametrize("extra,message", [
    (["--api", "mpiio"], "use --api posix"),
    (["--md-files", "0"], "--md-files must be at least 1"),
    (["--layout", "segmented"], "do not apply"),
])
def test_bad_input(engine: Engine, scratch: Path, extra: list[str], message: str):
    r = run_refused(engine, 2, md_args(scratch, "--metadata", "easy", *extra), scratch.parent)
    assert r.rc == 2 and r.doc is None and message in r.stderr, r.stderr
    assert list(scratch.iterdir()) == []


def test_stored_like_any_run(engine: Engine, scratch: Path, tmp_path: Path):
    """`iolab bench --metadata hard` launches, stores the run with its phases."""
    db = tmp_path / "r.db"
    p = subprocess.run([sys.executable, "-m", "iolab", "bench", "--db", str(db), "--json",
                        "--np", "2", "--metadata", "hard", "--md-files", "10", "--path",
                        str(scratch / "m")], capture_output=True, text=True, env=_env(),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    assert run["status"] == "ok"
    engine_doc = run["engine"] if isinstance(run["engine"], dict) else json.loads(run["engine"])
    ops = [ph["ops"] for ph in engine_doc["repetitions"][0]["phases"]]
    assert ops == [20, 20, 20, 20]
