"""No option swallows an input, and no command overwrites one.

Expected: the command lines below leave every input byte for byte as it was, and either do
what the user meant or stop with one line and exit 2 before any work. Was: ``iolab diagnose
--json A.darshan B.darshan`` wrote JSON over A.darshan (``--json`` took an optional file
name), ``--html A.darshan B.darshan`` wrote HTML over it; ``profile -o /proc`` printed a
traceback; ``results --db /nonexistent/x.db`` created the folder and an empty database.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import corpus
import pytest
from cli_helpers import iolab

from iolab import cli_common


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def one_line_exit_2(r) -> str:  # type: ignore[no-untyped-def]
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_json_is_a_switch_and_both_logs_are_read(logs: tuple[Path, Path]) -> None:
    a, b = logs
    before = sha(a), sha(b)
    r = iolab("diagnose", "--json", str(a), str(b))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # JSON on stdout, of the two logs
    assert doc["schema_version"] == 1
    assert (sha(a), sha(b)) == before


def test_json_with_one_log(logs: tuple[Path, Path]) -> None:
    # was: "no log given" (--json took the log as its file name)
    r = iolab("diagnose", "--json", str(logs[0]))
    assert r.returncode == 0 and json.loads(r.stdout)["schema_version"] == 1


@pytest.mark.parametrize("opts", [["--html"], ["-o"], ["--output"], ["--json", "-o"]],
                         ids=" ".join)
def test_output_onto_a_log_is_refused(logs: tuple[Path, Path], opts: list[str]) -> None:
    a, b = logs
    before = sha(a), sha(b)
    line = one_line_exit_2(iolab("diagnose", *opts, str(a), str(b)))
    assert str(a) in line and ("input" in line or "Darshan log" in line)
    assert (sha(a), sha(b)) == before
    line = one_line_exit_2(iolab("diagnose", *opts, str(a), str(a)))
    assert sha(a) == before[0]


def test_output_onto_an_input_by_another_name(logs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = logs
    cfg = tmp_path / "th.toml"
    cfg.write_text("random_share = 0.3\n")
    hard = tmp_path / "hard.toml"
    os.link(cfg, hard)
    link = tmp_path / "link.darshan"
    link.symlink_to(a)
    before = sha(cfg), sha(a)
    assert "input" in one_line_exit_2(iolab("diagnose", "--config", str(cfg), "-o", str(hard),
                                            str(a)))
    assert "input" in one_line_exit_2(iolab("diagnose", "-o", str(link), str(a)))
    assert (sha(cfg), sha(a)) == before


def test_profiles_are_never_overwritten(profile_file: Path, tmp_path: Path) -> None:
    before = sha(profile_file)
    for opts in (["--html", str(profile_file)], ["-o", str(profile_file)],
                 ["--json", "-o", str(profile_file)]):
        one_line_exit_2(iolab("diagnose", *opts, str(profile_file)))
    # another profile, not an input here, is not overwritten either
    other = tmp_path / "other.iolab"
    other.write_bytes(profile_file.read_bytes())
    assert "iolab profile" in one_line_exit_2(iolab("diagnose", "-o", str(other), str(
        profile_file)))
    assert sha(profile_file) == before and sha(other) == before
    # profile --name onto an existing profile
    assert "iolab profile" in one_line_exit_2(iolab(
        "profile", "-o", str(profile_file.parent), "--name", profile_file.stem, "--", "true"))
    assert sha(profile_file) == before


def test_output_formats_by_flag_and_suffix(logs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = logs
    out = tmp_path / "new"  # a missing last folder is made, and named
    r = iolab("diagnose", "-o", str(out / "r.json"), str(a))
    assert r.returncode == 0 and "created the folder" in r.stderr
    assert json.loads((out / "r.json").read_text())["schema_version"] == 1
    assert "Summary" in r.stdout  # the text report still on stdout
    r = iolab("diagnose", "-q", "-o", str(tmp_path / "r.html"), str(a))
    assert r.returncode == 0 and r.stdout == ""
    assert (tmp_path / "r.html").read_text().lstrip().lower().startswith("<!doctype html")
    r = iolab("diagnose", "--json", "-o", str(tmp_path / "r.out"), str(a))
    assert json.loads((tmp_path / "r.out").read_text())["schema_version"] == 1
    r = iolab("diagnose", "-o", str(tmp_path / "r.txt"), str(a))
    assert "Summary" in (tmp_path / "r.txt").read_text()
    # two folders missing: refused, nothing made
    line = one_line_exit_2(iolab("diagnose", "-o", str(tmp_path / "x" / "y" / "r.txt"), str(a)))
    assert "does not exist" in line and not (tmp_path / "x").exists()


def test_emit_fixes_onto_a_file_is_refused(logs: tuple[Path, Path]) -> None:
    a, b = logs
    before = sha(a)
    one_line_exit_2(iolab("diagnose", "--emit-fixes", str(a), str(b)))
    assert sha(a) == before


def test_unwritable_places_are_one_line(logs: tuple[Path, Path]) -> None:
    a, _ = logs
    for opts in (["-o", "/proc/x.json"], ["--html", "/proc"], ["--emit-fixes", "/proc/fx"]):
        one_line_exit_2(iolab("diagnose", *opts, str(a)))


def test_profile_output_folder_checked_before_the_program_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    line = one_line_exit_2(iolab("profile", "-o", "/proc", "--", "touch", str(marker)))
    assert "/proc" in line and not marker.exists()
    line = one_line_exit_2(iolab("profile", "-o", str(tmp_path / "a" / "b"), "--", "touch",
                                 str(marker)))
    assert not marker.exists() and not (tmp_path / "a").exists()


def test_buffer_stats_checked_before_and_kept_after(logs: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    from iolab import paths
    from iolab.errors import UsageError

    try:
        paths.interposer_library("buffer")
    except UsageError as exc:
        pytest.skip(str(exc))
    a, _ = logs
    before = sha(a)
    marker = tmp_path / "ran"
    for target in (str(a), "/proc/x", str(tmp_path), str(tmp_path / "no" / "such" / "f")):
        one_line_exit_2(iolab("buffer", "--stats", target, "--", "touch", str(marker)))
        assert not marker.exists()
    assert sha(a) == before
    # the place becomes a file while the program runs: its exit code is kept, one line
    # says so, and the statistics still reach stderr
    d = tmp_path / "d"
    d.mkdir()
    r = iolab("buffer", "--stats", str(d / "s.txt"), "--", "sh", "-c",
              f"rmdir {d}; touch {d}; echo data > {tmp_path / 'f.dat'}; exit 3")
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and "statistics follow on stderr" in r.stderr
    assert "f.dat" in r.stderr, r.stderr


def test_read_only_results_create_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "x.db"
    for argv in (["results"], ["results", "show", "1"], ["results", "--json"]):
        line = one_line_exit_2(iolab(*argv, "--db", str(missing)))
        assert "no such database" in line
    assert not missing.parent.exists()


def test_bench_test_file_never_a_log_or_the_database(logs: tuple[Path, Path],
                                                     tmp_path: Path) -> None:
    from iolab.errors import UsageError
    from iolab.paths import engine_binary

    try:
        engine_binary("default")
    except UsageError as exc:
        pytest.skip(str(exc))
    a, _ = logs
    before = sha(a)
    db = tmp_path / "r.db"
    for path in (str(a), "/proc/x", str(tmp_path / "no" / "such" / "f")):
        one_line_exit_2(iolab("bench", "--api", "null", "-o", path, "--db", str(db)))
        assert not db.exists()  # nothing stored
    assert sha(a) == before and not (tmp_path / "no").exists()
    # test files are removed after the run: no folder is made for them (it would stay, and
    # --path /scratch/$USER/md with USER unset made /scratch)
    line = one_line_exit_2(iolab("bench", "--api", "null", "-t", "64k", "-b", "256k", "--np",
                                 "1", "--launcher", "none", "-o", str(tmp_path / "new" / "f"),
                                 "--db", str(db)))
    assert "create it first" in line and not (tmp_path / "new").exists()


def test_file_kind_reads_magic_not_names(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    a, _ = logs
    renamed = tmp_path / "notes.txt"
    renamed.write_bytes(a.read_bytes())
    assert cli_common.file_kind(renamed) == "a Darshan log"
    text = tmp_path / "x.darshan"
    text.write_text("not a log")
    assert cli_common.file_kind(text) is None


@pytest.mark.parametrize("log", corpus.REAL_LOGS[:40:8], ids=lambda p: p.name[:30])
@corpus.needs_real_logs
def test_every_darshan_version_is_recognised(log: Path) -> None:
    assert cli_common.file_kind(log) == "a Darshan log"


def test_emit_fixes_never_among_other_files(logs: tuple[Path, Path], tmp_path: Path) -> None:
    """Expected: the fixes go to a new or empty folder (or one an earlier run wrote); was:
    --emit-fixes . wrote README.md over the user's own."""
    a, _ = logs
    own = tmp_path / "proj"
    own.mkdir()
    (own / "README.md").write_text("my project\n")
    line = one_line_exit_2(iolab("diagnose", "--emit-fixes", str(own), str(a)))
    assert "holds other files" in line
    assert (own / "README.md").read_text() == "my project\n"
    fixes = tmp_path / "fixes"
    assert iolab("diagnose", "-q", "--emit-fixes", str(fixes), str(a)).returncode == 0
    assert (fixes / "README.md").read_text().startswith("# Fixes proposed by iolab diagnose")
    r = iolab("diagnose", "-q", "--emit-fixes", str(fixes), str(a))  # again: rewritten
    assert r.returncode == 0, r.stderr


def test_db_is_never_another_file(logs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = logs
    before = sha(a)
    doc = tmp_path / "run.json"
    doc.write_text(json.dumps({"schema_version": 1, "status": "ok", "config": {},
                               "environment": {}, "repetitions": []}))
    line = one_line_exit_2(iolab("results", "import", str(doc), "--db", str(a)))
    assert "not a usable iolab results database" in line
    one_line_exit_2(iolab("results", "--db", str(a)))
    assert sha(a) == before


def test_damaged_header_is_not_called_truncated(logs: tuple[Path, Path], tmp_path: Path) -> None:
    """Expected: a damaged header says so; was: 'truncated (1763 of 13021231110853802474
    bytes)'."""
    a, _ = logs
    data = bytearray(a.read_bytes())
    data[40:48] = (0xB4B4B4B4B4B4B4B4).to_bytes(8, "little")  # a module map's length
    bad = tmp_path / "damaged.darshan"
    bad.write_bytes(bytes(data))
    line = one_line_exit_2(iolab("diagnose", str(bad)))
    assert "damaged header" in line and "truncated" not in line


def test_closed_pipe_still_writes_the_files(logs: tuple[Path, Path], tmp_path: Path) -> None:
    """`iolab diagnose --html r.html LOG | head`: the reader stops early, the HTML is still
    written and the exit code is 0."""
    import subprocess
    import sys

    a, _ = logs
    html = tmp_path / "r.html"
    for extra in ([], ["--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "iolab", "diagnose", *extra, "--html",
                                 str(html), str(a)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0 and "Traceback" not in err, err
        assert html.read_text().lstrip().lower().startswith("<!doctype html")
        html.unlink()
