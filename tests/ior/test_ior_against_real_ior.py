"""``iolab ior`` against a real IOR 4 (built from hpc/ior in a scratch folder, IOLAB_IOR) on
the same lines and 2 ranks: the JSON read by the same key paths, the same files and sizes.
Skipped, with the reason, when no real IOR is named."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ior_helpers import mpirun_env, run_iolab

from iolab.ior.mapping import engine_args
from iolab.ior.parse import parse_command_line


def real_ior_run(ior: Path, words: list[str], cwd: Path) -> str:
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(ior), *words], cwd=cwd,
                       env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """jq-style paths of every key (arrays as [])."""
    if isinstance(value, dict):
        out = set()
        for k, v in value.items():
            out |= {f"{prefix}.{k}"} | key_paths(v, f"{prefix}.{k}")
        return out
    if isinstance(value, list):
        return set().union(*(key_paths(v, f"{prefix}[]") for v in value)) if value else set()
    return set()


def test_iolab_json_has_real_iors_keys_and_shape(real_ior: Path, engine: Path,
                                                 tmp_path: Path) -> None:
    words = ["-t", "64k", "-b", "256k", "-s", "2", "-i", "2", "-O", "summaryFormat=JSON"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    theirs = json.loads(real_ior_run(real_ior, [*words, "-o", str(tmp_path / "a" / "f")],
                                     tmp_path))
    out = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-o",
                    str(tmp_path / "b" / "f"))
    assert out.returncode == 0, out.stderr
    ours = json.loads(out.stdout)
    assert key_paths(ours) == key_paths(theirs)
    for path in (".summary[].bwMaxMIB", ".summary[].OPsMean", ".tests[].Results[].bwMiB"):
        assert path in key_paths(ours)
    assert [s["operation"] for s in ours["summary"]] == \
        [s["operation"] for s in theirs["summary"]]
    same = ("segmentCount", "blockSize", "transferSize", "numTasks", "repetitions",
            "filePerProc", "xsizeMiB", "API")
    for a, b in zip(ours["summary"], theirs["summary"]):
        assert {k: a[k] for k in same} == {k: b[k] for k in same}
    assert ours["tests"][0]["Options"] == theirs["tests"][0]["Options"] | {
        "test filename": str(tmp_path / "b" / "f")}
    assert len(ours["tests"][0]["Results"]) == len(theirs["tests"][0]["Results"])


# IOR test-script lines (testing/*.sh of hpc/ior) that run here, -k added to compare files
LINES = [
    ["-a", "POSIX", "-w", "-r", "-k", "-t", "64k", "-b", "128k", "-s", "3"],
    ["-a", "POSIX", "-F", "-k", "-e", "-t", "32k", "-b", "64k", "-s", "2"],
    ["-a", "MPIIO", "-c", "-k", "-t", "16k", "-b", "64k", "-s", "2"],
    ["-a", "POSIX", "-z", "-F", "-k", "-t", "4k", "-b", "64k"],
    ["-a", "DUMMY", "-k", "-t", "4k", "-b", "8k"],
    ["-a", "POSIX", "-F", "-u", "-k", "-t", "16k", "-b", "32k"],
    ["-a", "POSIX", "-m", "-i", "2", "-k", "-t", "16k", "-b", "32k"],
    ["-a", "POSIX", "-w", "-W", "-k", "-t", "16k", "-b", "32k", "-s", "2"],
    ["-a", "POSIX", "-F", "-C", "-Q", "1", "-E", "-x", "-T", "5", "-k", "-t", "16k", "-b",
     "32k"],
    ["-a", "POSIX", "-F", "-m", "-i", "2", "-k", "-g", "-d", "1", "-t", "16k", "-b", "32k"],
    ["-a", "POSIX", "-z", "--random-offset-seed=3", "--randomPrefill=8k", "-k", "-t", "4k",
     "-b", "32k", "-s", "2"],
]


def files_written(folder: Path) -> list[tuple[str, int]]:
    """(name, size) of every file under folder, as IOR names them (PATH.00000000)."""
    return sorted((str(p.relative_to(folder)), p.stat().st_size)
                  for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("words", LINES, ids=[" ".join(w) for w in LINES])
def test_same_files_and_sizes_as_real_ior(real_ior: Path, engine: Path, tmp_path: Path,
                                          words: list[str]) -> None:
    theirs_dir, ours_dir = tmp_path / "ior", tmp_path / "iolab"
    theirs_dir.mkdir()
    ours_dir.mkdir()
    real_ior_run(real_ior, [*words, "-o", str(theirs_dir / "f")], tmp_path)
    out = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-o",
                    str(ours_dir / "f"))
    assert out.returncode == 0, out.stderr
    assert files_written(ours_dir) == files_written(theirs_dir)


def rank_offsets(folder: Path, pattern: str) -> list[list[int]]:
    """Each traced process's data offsets (strace -ff files), those with any."""
    out = []
    for f in sorted(folder.glob("tr.*")):
        offs = [int(m.group(1)) for m in re.finditer(pattern, f.read_text())]
        if offs:
            out.append(offs)
    return sorted(out)


def traced(cmd: list[str], folder: Path) -> None:
    """cmd is mpirun ... PROGRAM ...; each rank runs under strace -ff into folder/tr.*"""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    i = 4  # mpirun --oversubscribe -np 2 | PROGRAM
    cmd[i:i] = ["strace", "-ff", "-qq", "-e", "trace=lseek,read,write,pwrite64,pread64", "-o",
                str(folder / "tr")]
    p = subprocess.run(cmd, env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


# IOR seeks then reads/writes; the engine preads/pwrites: the offsets of 4 KiB data calls
IOR_SEEKS = r"lseek\(\d+, (\d+), SEEK_SET\)\s*= \d+\n(?:read|write)\(\d+, .*, 4096\)"
ENGINE_CALLS = r"p(?:read|write)64\(\d+, .*, 4096, (\d+)\)\s*= 4096"


@pytest.mark.parametrize("words", [
    ["-w", "-z", "--random-offset-seed=7", "-t", "4k", "-b", "32k", "-s", "2"],
    ["-w", "-z", "-F", "--random-offset-seed=7", "-t", "4k", "-b", "32k", "-s", "2"],
], ids=["z shared", "z fpp"])
def test_same_random_offsets_as_real_ior(real_ior: Path, engine: Path, tmp_path: Path,
                                         words: list[str]) -> None:
    """expected IOR's -z order call for call with --random-offset-seed / was the engine's
    own shuffle (the same offsets in another order)."""
    theirs, ours = tmp_path / "ior", tmp_path / "iolab"
    theirs.mkdir()
    ours.mkdir()
    traced(["mpirun", "--oversubscribe", "-np", "2", str(real_ior), *words, "-o",
            str(theirs / "f")], theirs)
    args = engine_args(parse_command_line([*words, "-o", str(ours / "f")]).tests[0], 2,
                       None, environ={})
    traced(["mpirun", "--oversubscribe", "-np", "2", str(engine), *args, "--quiet",
            "--json", str(tmp_path / "r.json")], ours)
    want = rank_offsets(theirs, IOR_SEEKS)
    assert want and rank_offsets(ours, ENGINE_CALLS) == want


def _same_offsets_as_ior(real_ior: Path, engine: Path, read: list[str], tmp_path: Path
                         ) -> list[list[int]]:
    """The read line by real IOR and by the engine, 2 ranks each under strace: each rank's
    offsets, asserted equal and not empty; IOR's returned."""
    theirs, ours = tmp_path / "ior", tmp_path / "iolab"
    theirs.mkdir()
    ours.mkdir()
    traced(["mpirun", "--oversubscribe", "-np", "2", str(real_ior), *read], theirs)
    args = engine_args(parse_command_line(read).tests[0], 2, None, environ={})
    traced(["mpirun", "--oversubscribe", "-np", "2", str(engine), *args, "--quiet",
            "--json", str(tmp_path / "r.json")], ours)
    want = rank_offsets(theirs, IOR_SEEKS)
    assert want and rank_offsets(ours, ENGINE_CALLS) == want
    return want


@pytest.mark.parametrize("fpp", [[], ["-F"]], ids=["shared", "fpp"])
def test_same_random_with_repetition_reads_as_real_ior(real_ior: Path, engine: Path,
                                                       tmp_path: Path, fpp: list[str]) -> None:
    """expected IOR -r -z -z's blocks (rand64, from the file's size) / was refused."""
    folder = tmp_path / "data"
    folder.mkdir()
    f = str(folder / "f")
    real_ior_run(real_ior, ["-w", "-k", "-t", "4k", "-b", "16k", "-s", "3", *fpp, "-o", f],
                 tmp_path)
    read = ["-r", "-k", "-z", "-z", "--random-offset-seed=5", "-t", "4k", "-b", "8k", "-s",
            "4", *fpp, "-o", f]
    _same_offsets_as_ior(real_ior, engine, read, tmp_path)


def test_random_with_repetition_reads_a_file_smaller_than_its_layout(
        real_ior: Path, engine: Path, tmp_path: Path) -> None:
    """expected IOR's -r -z -z -s 10 over a file written with -s 1 (IOR's basic-tests.sh
    line: blocks drawn from the file's size, whatever the layout) read call for call as IOR
    reads it / was refused: "has 32768 bytes but the layout reads 327680"."""
    folder = tmp_path / "data"
    folder.mkdir()
    f = str(folder / "f")
    real_ior_run(real_ior, ["-w", "-k", "-t", "4k", "-b", "16k", "-o", f], tmp_path)
    read = ["-r", "-k", "-z", "-z", "--random-offset-seed=5", "-t", "4k", "-b", "16k", "-s",
            "10", "-o", f]
    want = _same_offsets_as_ior(real_ior, engine, read, tmp_path)
    assert max(max(o) for o in want) < 2 * 16 * 1024  # inside the file written


def removals(folder: Path, name: str) -> int:
    """Successful unlink calls of the test file over every traced process."""
    return sum(len(re.findall(rf'unlink(?:at)?\((?:AT_FDCWD, )?"[^"]*/{name}"(?:, 0)?\)\s*= 0',
                              f.read_text())) for f in folder.glob("tr.*"))


def test_removes_between_repetitions_as_real_ior(real_ior: Path, engine: Path,
                                                 tmp_path: Path) -> None:
    """expected IOR's removal of the file after every repetition of -i 3 without -k (3
    removals of an existing file) / was one removal at the end."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    counts = []
    for tool in ("ior", "iolab"):
        folder = tmp_path / tool
        folder.mkdir()
        words = ["-i", "3", "-t", "4k", "-b", "8k", "-o", str(folder / "f")]
        prog = [str(real_ior), *words] if tool == "ior" else \
            [str(engine), *engine_args(parse_command_line(words).tests[0], 2, None,
                                       environ={}), "--quiet", "--json",
             str(tmp_path / "r.json")]
        p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", "strace", "-ff", "-qq",
                            "-e", "trace=unlink,unlinkat", "-o", str(folder / "tr"), *prog],
                           env=mpirun_env(), capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        counts.append(removals(folder, "f"))
        assert not (folder / "f").exists()
    assert counts[0] == counts[1] == 3


@pytest.mark.parametrize("extra", [["-Z"], ["-Z", "-X", "5"], ["-Z", "-Z"],
                                   ["-Z", "-Z", "-X", "-3"], ["-C", "-Q", "2"]])
def test_reads_the_same_ranks_files_as_real_ior(real_ior: Path, engine: Path, tmp_path: Path,
                                                extra: list[str]) -> None:
    """expected each rank to read the file IOR's -Z / -Z -Z / -X / -C -Q gives it, in every
    repetition / was refused (-Z, -X, -Q)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    words = ["-F", "-w", "-r", "-k", "-i", "2", "-t", "4k", "-b", "4k", *extra]
    theirs, ours = tmp_path / "ior", tmp_path / "iolab"
    theirs.mkdir()
    ours.mkdir()
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "4", str(real_ior), *words, "-vvv",
                        "-o", str(theirs / "f")], env=mpirun_env(), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    want: dict[int, list[int]] = {}
    for task, target in re.findall(r"task (\d+) reading \S+\.(\d+)", p.stdout):
        want.setdefault(int(task), []).append(int(target))
    args = engine_args(parse_command_line([*words, "-o", str(ours / "f")]).tests[0], 4, None,
                       environ={})
    q = subprocess.run(["mpirun", "--oversubscribe", "-np", "4", "strace", "-ff", "-y", "-qq",
                        "-e", "trace=pwrite64,pread64", "-o", str(ours / "tr"), str(engine),
                        *args, "--quiet", "--json", str(tmp_path / "r.json")],
                       env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert q.returncode == 0, q.stderr
    name = re.escape(str(ours / "f"))
    got = {}
    for f in ours.glob("tr.*"):
        text = f.read_text()
        w = re.search(rf"pwrite64\(\d+<{name}\.(\d+)>", text)
        if w:
            reads = [int(m) for m in re.findall(rf"pread64\(\d+<{name}\.(\d+)>", text)]
            got[int(w[1])] = [r for i, r in enumerate(reads) if i == 0 or reads[i - 1] != r]
    assert got == {t: [r for i, r in enumerate(v) if i == 0 or v[i - 1] != r]
                   for t, v in want.items()}


@pytest.mark.parametrize("extra", [["-s", "3"], ["-F", "-s", "2"]], ids=["shared", "fpp"])
def test_hdf5_files_are_iors_and_each_reads_the_others(real_ior: Path, engine: Path,
                                                       tmp_path: Path,
                                                       extra: list[str]) -> None:
    """expected IOR's HDF5 datasets (Dataset-0000.NNNN per segment, int64) in iolab's file,
    and IOR reading iolab's file and iolab IOR's / was -a HDF5 -s 3 refused (one dataset)."""
    h5py = pytest.importorskip("h5py")
    words = ["-a", "HDF5", "-k", "-t", "4k", "-b", "16k", *extra]
    theirs, ours = tmp_path / "ior", tmp_path / "iolab"
    theirs.mkdir()
    ours.mkdir()
    probe = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(real_ior), "-w",
                            *words, "-o", str(theirs / "f")], env=mpirun_env(),
                           capture_output=True, text=True, timeout=300)
    if "HDF5" in probe.stdout + probe.stderr and probe.returncode != 0:
        pytest.skip(f"{real_ior} has no HDF5 backend (build hpc/ior with --with-hdf5)")
    assert probe.returncode == 0, probe.stdout + probe.stderr
    out = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-w", *words, "-o",
                    str(ours / "f"))
    assert out.returncode == 0, out.stderr

    def shape(folder: Path) -> list[tuple[str, dict[str, tuple[Any, str]]]]:
        out = []
        for p in sorted(folder.iterdir()):
            with h5py.File(p, "r") as h:
                out.append((p.name, {k: (h[k].shape, str(h[k].dtype)) for k in h}))
        return out

    assert shape(ours) == shape(theirs)
    cross = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(real_ior), "-r",
                            *words, "-o", str(ours / "f")], env=mpirun_env(),
                           capture_output=True, text=True, timeout=300)
    assert cross.returncode == 0 and "ERROR" not in cross.stdout, cross.stdout + cross.stderr
    back = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-r", *words, "-o",
                     str(theirs / "f"))
    assert back.returncode == 0, back.stderr


def write_opens(folder: Path, name: str) -> list[str]:
    """The open flags of every open of a test file for writing, over the traced ranks."""
    return sorted(m.group(1) for f in folder.glob("tr.*")
                  for m in re.finditer(rf'open(?:at)?\((?:AT_FDCWD, )?"[^"]*/{name}\.\d+", '
                                       r'([A-Z_|]*O_(?:WRONLY|RDWR)[A-Z_|]*)', f.read_text()))


def test_existing_file_overwritten_in_place_as_real_ior(real_ior: Path, engine: Path,
                                                        tmp_path: Path) -> None:
    """expected IOR -E to open each existing file without O_TRUNC (IOR's POSIX create never
    truncates), leaving a longer file's tail in place / was O_TRUNC on every write, the tail
    cut and a truncated-then-rewritten file flushed by ext4 at close (write 0.19x IOR)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    words = ["-a", "POSIX", "-F", "-C", "-Q", "1", "-E", "-x", "-T", "5", "-k", "-t", "16k",
             "-b", "32k"]
    flags = {}
    for tool in ("ior", "iolab"):
        folder = tmp_path / tool
        folder.mkdir()
        for r in range(2):  # files twice the block: IOR -E keeps what it does not overwrite
            (folder / f"f.{r:08d}").write_bytes(b"\x5a" * 65536)
        prog = [str(real_ior), *words, "-o", str(folder / "f")] if tool == "ior" else \
            [str(engine), *engine_args(parse_command_line([*words, "-o", str(folder / "f")])
                                       .tests[0], 2, None, environ={}),
             "--quiet", "--json", str(tmp_path / "r.json")]
        p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", "strace", "-ff", "-qq",
                            "-e", "trace=open,openat,unlink,unlinkat", "-o",
                            str(folder / "tr"), *prog],
                           env=mpirun_env(), capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        assert removals(folder, r"f\.\d+") == 0
        flags[tool] = write_opens(folder, "f")
        assert len(flags[tool]) == 2, flags[tool]
        assert not any("O_TRUNC" in f for f in flags[tool]), flags[tool]
        assert [(f.name, f.stat().st_size) for f in sorted(folder.glob("f.*"))] == \
            [("f.00000000", 65536), ("f.00000001", 65536)]
