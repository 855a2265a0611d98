"""``iolab ior`` against a real IOR 4 (built from hpc/ior in a scratch folder, IOLAB_IOR) on
the same lines and 2 ranks: the JSON read by the same key paths, the same files and sizes.
Skipped, with the reason, when no real IOR is named."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ior_helpers import mpirun_env, run_iolab


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
]


def files_written(folder: Path) -> list[tuple[str, int]]:
    """(name with IOR's per-rank suffix made iolab's, size): IOR names PATH.00000000,
    iolab PATH.0 (listed as left in docs/ior.md)."""
    out = []
    for p in sorted(folder.iterdir()):
        name = p.name
        stem, dot, rank = name.rpartition(".")
        if dot and rank.isdigit():
            name = f"{stem}.{int(rank)}"
        out.append((name, p.stat().st_size))
    return sorted(out)


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
