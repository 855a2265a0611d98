"""IOR forms iolab used to refuse, run as IOR runs them (issue 29): aiori-DUMMY's create and
close delays (IOR's testing/test_comments.ior), ``-O stoneWallingStatusFile`` across a write
run and a read run, and ``-a MPIIO -E`` (IOR's create empties the existing file). Each is
checked against a real IOR 4 (IOLAB_IOR) where IOR runs it, skipped with the reason when not.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ior_helpers import mpirun_env, run_iolab

from iolab.ior import stonewall_file
from iolab.ior.mapping import engine_args
from iolab.ior.parse import parse_command_line


def _mpirun(prog: list[str], cwd: Path, trace: list[str] | None = None) -> str:
    """prog on 2 ranks (under strace -ff into cwd/tr.* when trace names the calls)."""
    if trace and shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    strace = ["strace", "-ff", "-qq", "-e", "trace=" + ",".join(trace), "-o",
              str(cwd / "tr")] if trace else []
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", *strace, *prog], cwd=cwd,
                       env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def _engine_prog(engine: Path, words: list[str], json_out: Path) -> list[str]:
    """What ``iolab ior`` runs for a one-test line, as one engine command."""
    return [str(engine), *engine_args(parse_command_line(words).tests[0], 2, None, environ={}),
            "--quiet", "--json", str(json_out)]


def _ior_rows(report: str) -> dict[str, list[float]]:
    """IOR's results table: access -> the first row's numbers (bw ... total, iter); the
    summary's rows (more columns) are not taken."""
    rows: dict[str, list[float]] = {}
    for line in report.splitlines():
        words = line.split()
        if len(words) == 11 and words[0] in ("write", "read") and words[0] not in rows:
            try:
                rows[words[0]] = [float(x) for x in words[1:]]
            except ValueError:
                continue
    assert "write" in rows, report
    return rows


OPEN, CLOSE = 5, 7  # columns of a row: bw IOPS latency block xfer open wr/rd close total

# IOR's testing/test_comments.ior, its shape: comments and leading white space, a POSIX test,
# RUN, then the same test on DUMMY with a create delay given as a module option line.
SCRIPT = """# leading white space and comments are ignored
IOR START
api=posix
writeFile =1
   randomOffset=1
reorderTasks=1
   filePerProc=1
\t\tkeepFile=1
fsync=1
\trepetitions=1
multiFile=1
\t\t# a tab-prefixed comment
transferSize=10k
blockSize=20k
    # a space-prefixed comment
run
--dummy.delay-create=300000
useo_direct=0
api=dummy
    ior stop
"""


def test_script_with_dummy_create_delay_runs_as_real_ior(real_ior: Path, engine: Path,
                                                          tmp_path: Path) -> None:
    """expected IOR's test_comments.ior to run both tests, the DUMMY test's write open taking
    the create delay (as real IOR's) / was refused: 'the null backend delays transfers only'."""
    (tmp_path / "t.ior").write_text(SCRIPT)
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-f", "t.ior",
                    cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    ours = ran.stdout.split("Summary of all tests")[0].split("Options:")
    theirs_dir = tmp_path / "ior"
    theirs_dir.mkdir()
    (theirs_dir / "t.ior").write_text(SCRIPT)
    theirs = _mpirun([str(real_ior), "-f", "t.ior"], theirs_dir).split("Options:")
    assert len(ours) == len(theirs) == 3  # two tests, each with its Options and table
    for report in (ours[2], theirs[2]):  # the DUMMY test: each rank's create waits 0.3 s
        assert _ior_rows(report)["write"][OPEN] >= 0.3, report
    assert _ior_rows(ours[1])["write"][OPEN] < 0.3  # the POSIX test: no delay


@pytest.mark.parametrize("words", [
    ["--dummy.delay-close=200000"],
    ["--dummy.delay-create=200000", "--dummy.delay-only-rank0"],
], ids=["close", "create-rank0"])
def test_dummy_delays_where_real_ior_waits_them(real_ior: Path, tmp_path: Path,
                                                words: list[str]) -> None:
    """expected each DUMMY delay where IOR's aiori-DUMMY waits it (create: write opens only;
    close: every close) / was refused ('the null backend delays transfers only')."""
    line = ["-a", "DUMMY", "-w", "-r", "-t", "1k", "-b", "4k", *words]
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *line, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    for report in (ran.stdout, _mpirun([str(real_ior), *line], tmp_path)):
        rows = _ior_rows(report)
        if "close" in words[0]:
            assert rows["write"][CLOSE] >= 0.2 and rows.get("read", [0.0] * 9)[CLOSE] >= 0.2, \
                report
        else:
            assert rows["write"][OPEN] >= 0.2 > rows.get("read", [1.0] * 9)[OPEN], report


def _data_calls(folder: Path) -> list[int]:
    """Per traced process with any, its 1000-byte reads and writes (IOR: read/write after
    lseek; the engine: pread64/pwrite64)."""
    counts = [len(re.findall(r"^p?(?:read|write)(?:64)?\(\d+, .*, 1000(?:, \d+)?\)\s*= 1000",
                             f.read_text(), re.M)) for f in sorted(folder.glob("tr.*"))]
    return sorted(c for c in counts if c)


STATUS = ["-O", "stoneWallingStatusFile=stonewall.log", "-t", "1000", "-b", "1000", "-k"]
WRITE = ["-w", "-O", "stoneWallingWearOut=1", "-D", "1", "-s", "15"]


@pytest.mark.parametrize("api", ["DUMMY", "POSIX"])
def test_status_file_is_iors_and_written_by_the_write_run(real_ior: Path, tmp_path: Path,
                                                          api: str) -> None:
    """expected the write run to leave IOR's status file ('15': the pairs per rank, no
    newline), byte for byte as real IOR's / was refused ('the read phase reads what the write
    phase wrote in the same run')."""
    content = {}
    for tool in ("ior", "iolab"):
        folder = tmp_path / tool
        folder.mkdir()
        line = ["-a", api, *WRITE, *STATUS, "-o", str(folder / "f")]
        if tool == "ior":
            _mpirun([str(real_ior), *line], folder)
        else:
            ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *line,
                            cwd=folder)
            assert ran.returncode == 0, ran.stderr
        content[tool] = (folder / "stonewall.log").read_bytes()
    assert content["iolab"] == content["ior"] == b"15"


@pytest.mark.parametrize("deadline", [["-D", "1"], []], ids=["with-D", "without-D"])
@pytest.mark.parametrize("writer", ["ior", "iolab"])
def test_read_run_reads_the_status_files_count_as_real_ior(real_ior: Path, engine: Path,
                                                           tmp_path: Path, writer: str,
                                                           deadline: list[str],
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """expected a read run given the status file of either tool's write run to read 15
    transfers per rank (not -s 30), as real IOR's read of the same files / was refused."""
    write = ["-a", "POSIX", *WRITE, *STATUS, "-o", str(tmp_path / "f")]
    if writer == "ior":
        _mpirun([str(real_ior), *write], tmp_path)
    else:
        assert run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *write,
                         cwd=tmp_path).returncode == 0
    assert (tmp_path / "stonewall.log").read_text() == "15"
    monkeypatch.chdir(tmp_path)  # the status file's name is relative, as in IOR's line
    read = ["-a", "POSIX", "-r", *deadline, "-s", "30", *STATUS, "-o", str(tmp_path / "f")]
    calls = {}
    for tool in ("ior", "iolab"):
        traces = tmp_path / f"tr-{tool}"
        traces.mkdir()
        if tool == "ior":
            prog = [str(real_ior), *read]
        else:
            prog = _engine_prog(engine, read, tmp_path / "r.json")
            limit, warning = stonewall_file.read_args(parse_command_line(read).tests[0])
            assert limit == ["--read-xfers", "15"] and warning is None
            prog[1:1] = limit
        _mpirun(prog, tmp_path, ["read,pread64"])
        for f in tmp_path.glob("tr.*"):
            f.rename(traces / f.name)
        calls[tool] = _data_calls(traces)
    assert calls["iolab"] == calls["ior"] == [15, 15]


def test_read_run_through_iolab_ior_reads_the_count(tmp_path: Path) -> None:
    """expected `iolab ior -r` with a status file saying 15 to read 15 transfers per rank of
    -s 30 (30000 bytes over 2 ranks), with and without -D / was refused."""
    (tmp_path / "stonewall.log").write_text("15")
    for run_id, deadline in enumerate((["-D", "1"], []), start=1):
        ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-a", "DUMMY",
                        "-r", *deadline, "-s", "30", *STATUS, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        shown = run_iolab("results", "show", str(run_id), "--json", "--db",
                          str(tmp_path / "r.db"))
        phases = json.loads(shown.stdout)["phases"]
        assert [p["bytes"] for p in phases if p["op"] == "read"] == [30000], phases


@pytest.mark.parametrize("words, says", [
    (["-w", "-O", "stoneWallingWearOut=1", "-D", "1", "-O",
      "stoneWallingStatusFile=s.log"], "add -k"),
    (["-w", "-D", "1", "-k", "-O", "stoneWallingStatusFile=s.log"], "stoneWallingWearOut=1"),
    (["-r", "-D", "1", "-k", "-O", "stoneWallingWearOut=1", "-O",
      "stoneWallingStatusFile=s.log"], "drop -O stoneWallingWearOut=1"),
    (["-w", "-k", "-O", "stoneWallingWearOut=1"], "add -D"),
], ids=["no-k", "no-wearout", "read-wearout", "wearout-no-D"])
def test_status_file_misuse_is_one_line_and_nothing_stored(tmp_path: Path, words: list[str],
                                                           says: str) -> None:
    """expected IOR's own refusals of the status file (and a read run that would replace the
    count by 0) as one line, exit 2, no file, nothing stored / was refused for any use, or
    (wear-out without -D) run silently."""
    (tmp_path / "s.log").write_text("7")
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-a", "DUMMY", *words,
                    cwd=tmp_path)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert says in ran.stderr and len(ran.stderr.strip().splitlines()) == 1, ran.stderr
    assert (tmp_path / "s.log").read_text() == "7" and not (tmp_path / "r.db").exists()


def test_mpiio_existing_file_emptied_in_place_as_real_ior(real_ior: Path, engine: Path,
                                                          tmp_path: Path) -> None:
    """expected -a MPIIO -E to open the existing file (its hard link kept, no unlink) and
    empty it with MPI_File_set_size(0) (one ftruncate to 0) as real IOR / was deleted and
    created anew, never truncated."""
    sizes, truncates = {}, {}
    for tool in ("ior", "iolab"):
        folder = tmp_path / tool
        folder.mkdir()
        (folder / "f").write_bytes(b"\x5a" * 65536)
        (folder / "g").hardlink_to(folder / "f")  # a new file (even a reused inode) loses it
        line = ["-a", "MPIIO", "-E", "-w", "-k", "-t", "16k", "-b", "16k", "-o",
                str(folder / "f")]
        prog = [str(real_ior), *line] if tool == "ior" else \
            _engine_prog(engine, line, tmp_path / "r.json")
        _mpirun(prog, folder, ["ftruncate,unlink,unlinkat"])
        text = "".join(f.read_text() for f in folder.glob("tr.*"))
        assert not re.search(rf'unlink(?:at)?\([^)]*"{re.escape(str(folder))}/f"', text)
        assert (folder / "f").stat().st_nlink == 2
        assert (folder / "g").stat().st_size == (folder / "f").stat().st_size
        sizes[tool] = (folder / "f").stat().st_size
        truncates[tool] = len(re.findall(r"ftruncate\(\d+, 0\)\s*= 0", text))
    assert sizes["iolab"] == sizes["ior"] == 32768
    assert truncates["iolab"] == truncates["ior"] >= 1


def test_mpiio_existing_file_kept_and_emptied_without_real_ior(engine: Path,
                                                               tmp_path: Path) -> None:
    """expected iolab ior -a MPIIO -E to write into the same file (its hard link sees the
    write), emptied first: 64 KiB of old bytes become the 32 KiB written / was deleted and
    made anew (the link kept the old 64 KiB)."""
    (tmp_path / "f").write_bytes(b"\x5a" * 65536)
    (tmp_path / "g").hardlink_to(tmp_path / "f")  # a new file (even a reused inode) loses it
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-a", "MPIIO", "-E",
                    "-w", "-k", "-t", "16k", "-b", "16k", "-o", str(tmp_path / "f"))
    assert ran.returncode == 0, ran.stderr
    st = (tmp_path / "f").stat()
    assert (st.st_nlink, st.st_size, (tmp_path / "g").stat().st_size) == (2, 32768, 32768)


def test_null_create_delay_only_on_write_opens_without_real_ior(engine: Path,
                                                                tmp_path: Path) -> None:
    """expected --dummy.delay-create to lengthen the write's open(s), not the read's
    (IOR's DUMMY_Create waits, DUMMY_Open does not) / was refused."""
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-a", "DUMMY",
                    "--dummy.delay-create=250000", "-t", "1k", "-b", "4k")
    assert ran.returncode == 0, ran.stderr
    rows = _ior_rows(ran.stdout)
    assert rows["write"][OPEN] >= 0.25 > rows["read"][OPEN], ran.stdout


def _truncates_per_rank(folder: Path) -> list[int]:
    """ftruncate(fd, 0) calls of each traced process that made any file call (the ranks;
    MPI's helper threads trace nothing), in a stable order."""
    counts = []
    for f in sorted(folder.glob("tr.*")):
        text = f.read_text()
        if text.strip():
            counts.append(len(re.findall(r"ftruncate\(\d+, 0\)\s*= 0", text)))
    return sorted(counts)


def test_mpiio_create_sets_size_zero_per_rank_as_real_ior(real_ior: Path, engine: Path,
                                                          tmp_path: Path) -> None:
    """expected `iolab ior -a MPIIO` (no -E) to call MPI_File_set_size(0) on each file it
    creates, as IOR's MPIIO create: the same ftruncate(fd, 0) count per rank as real IOR
    (one per repetition's write), and `iolab bench --api mpiio` none / was no ftruncate."""
    line = ["-a", "MPIIO", "-w", "-r", "-i", "2", "-t", "16k", "-b", "16k"]
    counts = {}
    for tool in ("ior", "iolab", "bench"):
        folder = tmp_path / tool
        folder.mkdir()
        words = [*line, "-o", str(folder / "f")]
        prog = [str(real_ior), *words] if tool == "ior" else \
            _engine_prog(engine, words, folder / "r.json")
        if tool == "bench":  # iolab bench's own spelling of the same run keeps no extra call
            prog.remove("--mpiio.set-size-zero")
        _mpirun(prog, folder, ["ftruncate,openat"])
        counts[tool] = _truncates_per_rank(folder)
    assert counts["ior"] == [2, 2], counts
    assert counts["iolab"] == counts["ior"]
    assert counts["bench"] == [0, 0], counts
