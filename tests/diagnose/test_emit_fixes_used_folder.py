"""``diagnose --emit-fixes DIR`` into a folder an earlier run used: iolab's record
(``DIR/.iolab-fixes.json``, each file's SHA-256) tells its own untouched files from the
user's changes. Untouched files are replaced, fix folders the new log does not produce are
removed; a changed file refuses the run before anything is written (one line, exit 2); the
user's own files are kept. Real Darshan logs of the generated corpus (skipped with the
reason when it is absent): ``posix_write_1M_x_64B`` gives io-bound/, small-requests-write/
and small-serial-io-write/; ``stdio_fwrite_2M_x_512B`` gives io-bound/,
small-serial-io-write/ and stdio-share/."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import GENERATED_DIR, GENERATED_MISSING

A = GENERATED_DIR / "posix_write_1M_x_64B.darshan"
B = GENERATED_DIR / "stdio_fwrite_2M_x_512B.darshan"

pytestmark = pytest.mark.skipif(not (A.is_file() and B.is_file()), reason=GENERATED_MISSING)


def emit(folder: Path, *logs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", "diagnose", "-q", "--emit-fixes",
                           str(folder), *map(str, logs)], capture_output=True, text=True,
                          timeout=300)


def tree(folder: Path) -> dict[str, str]:
    """Every file under folder (relative path -> SHA-256), the record included."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def folders(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir()}


def refused(r: subprocess.CompletedProcess[str], says: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and says in lines[0], r.stderr


def test_an_edited_file_is_never_overwritten(tmp_path: Path) -> None:
    """Expected: exit 2, the edited slurm.sbatch and every other file as they were /
    was: the user's slurm.sbatch silently replaced by the new one."""
    fx = tmp_path / "fx"
    assert emit(fx, A).returncode == 0
    sbatch = fx / "io-bound" / "slurm.sbatch"
    sbatch.write_text(sbatch.read_text() + "#SBATCH --partition=big  # mine\n")
    before = tree(fx)
    for log in (A, B):  # the same log again, or another one that writes the file too
        refused(emit(fx, log), "io-bound/slurm.sbatch was changed since iolab wrote it")
        assert tree(fx) == before


def test_an_edited_file_of_a_folder_the_new_log_drops_is_never_removed(tmp_path: Path) -> None:
    """Expected: exit 2 when the new fixes would drop a folder holding a changed file /
    was: the previous log's folders left beside the new README (or, removed, the edit lost)."""
    fx = tmp_path / "fx"
    assert emit(fx, A).returncode == 0
    env = fx / "small-requests-write" / "buffering.env"
    env.write_text(env.read_text() + "export MINE=1\n")
    before = tree(fx)
    refused(emit(fx, B), "small-requests-write/buffering.env was changed since iolab wrote it")
    assert tree(fx) == before


def test_untouched_files_are_replaced_and_stale_folders_removed(tmp_path: Path) -> None:
    """Expected: the second log's fixes exactly, nothing of the first log's left / was: the
    first log's small-requests-write/ kept beside the second log's README."""
    fx, fresh = tmp_path / "fx", tmp_path / "fresh"
    assert emit(fx, A).returncode == 0
    assert folders(fx) == {"io-bound", "small-requests-write", "small-serial-io-write"}
    r = emit(fx, B)
    assert r.returncode == 0, r.stderr
    assert "removed the earlier files the new fixes do not have" in r.stderr
    assert "small-requests-write" in r.stderr
    assert emit(fresh, B).returncode == 0
    assert tree(fx) == tree(fresh)  # the same folder as a first run into a new one
    record = json.loads((fx / ".iolab-fixes.json").read_text())
    assert record["kind"] == "iolab-diagnose-fixes" and record["schema_version"] == 1
    assert {k: v[0] for k, v in record["files"].items()} == \
        {k: v for k, v in tree(fx).items() if k != ".iolab-fixes.json"}


def test_the_users_own_files_are_kept(tmp_path: Path) -> None:
    """A file the user added to an earlier fix folder keeps that folder (said on stderr);
    one added where iolab would write is refused before anything is written."""
    fx = tmp_path / "fx"
    assert emit(fx, A).returncode == 0
    (fx / "small-requests-write" / "notes.txt").write_text("tried it, 2x faster\n")
    r = emit(fx, B)
    assert r.returncode == 0, r.stderr
    assert "kept small-requests-write" in r.stderr
    assert sorted(p.name for p in (fx / "small-requests-write").iterdir()) == ["notes.txt"]
    assert (fx / "small-requests-write" / "notes.txt").read_text() == "tried it, 2x faster\n"
    (fx / "small-requests-write").rename(tmp_path / "aside")
    (fx / "small-requests-write").mkdir()
    (fx / "small-requests-write" / "buffering.env").write_text("export MINE=1\n")
    before = tree(fx)
    refused(emit(fx, A), "small-requests-write/buffering.env is there and iolab did not "
                         "write it")
    assert tree(fx) == before


def test_a_folder_without_iolabs_record_is_refused(tmp_path: Path) -> None:
    """Expected: a folder of an iolab older than the record (README.md only) is refused,
    since nobody can tell which of its files were edited / was: rewritten."""
    fx = tmp_path / "fx"
    assert emit(fx, A).returncode == 0
    (fx / ".iolab-fixes.json").unlink()
    before = tree(fx)
    refused(emit(fx, A), "written by an older iolab that kept no record of its files")
    assert tree(fx) == before
    (fx / ".iolab-fixes.json").write_text("{not json")
    refused(emit(fx, A), "its record .iolab-fixes.json cannot be read")


def test_several_logs_share_one_record(tmp_path: Path) -> None:
    """Two jobs (log0/, log1/) and then one: the log<i>/ folders go, the one job's fixes
    stay, as from a new folder."""
    fx, fresh = tmp_path / "fx", tmp_path / "fresh"
    r = emit(fx, A, B)
    assert r.returncode == 0, r.stderr
    assert folders(fx) == {"log0", "log1"}
    assert emit(fx, A).returncode == 0
    assert emit(fresh, A).returncode == 0
    assert tree(fx) == tree(fresh)
