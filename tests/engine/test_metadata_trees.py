"""--metadata with mdtest's layout and per-item options (--md-layout mdtest, --md-depth,
--md-branch, --md-items-per-dir, --md-leaf-only, --md-stride, --md-mknod, --stonewall in a
whole run): real engine runs, checked on disk (the names mdtest makes) and in the JSON
(operation counts per phase, the tree phases)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, doc, run_engine, run_refused


def tree_paths(depth: int, branch: int, per_dir: int, leaf_only: bool, ranks: int,
               tree: str = "mdtest_tree") -> set[str]:
    """mdtest's layout, from its rule (not the engine's code): directory n's children are
    n*branch+1..n*branch+branch, each named <tree>.<n> inside its parent; item i of rank R is
    file.mdtest.R.i in directory i // per_dir; leaf-only items only at the deepest level."""
    out: set[str] = set()

    def walk(node: int, level: int, path: str) -> None:
        out.add(path)
        if not leaf_only or level == depth:
            for i in range(per_dir):
                n = node * per_dir + i
                out.update(f"{path}/file.mdtest.{r}.{n}" for r in range(ranks))
        if level < depth:
            for c in range(1, branch + 1):
                child = node * branch + c
                walk(child, level + 1, f"{path}/{tree}.{child}")

    walk(0, 0, f"test-dir.0-0/{tree}.0")
    return out


def on_disk(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")} - {"test-dir.0-0"}


def step(engine: Engine, root: Path, tmp: Path, name: str, *extra: str, np_: int = 2):
    return run_engine(engine, np_, ["--metadata", "easy", "--md-layout", "mdtest",
                                    "--path", str(root), "--quiet", "--md-step", name,
                                    *extra], tmp)


@pytest.mark.parametrize("leaf_only", [False, True])
def test_tree_has_mdtests_names_on_disk_and_counts(engine: Engine, scratch: Path,
                                                   leaf_only: bool) -> None:
    """expected mdtest's tree (mdtest_tree.0/mdtest_tree.1/mdtest_tree.3/file.mdtest.R.N)
    left by the create step, tree_create timed as rank 0's 7 mkdirs / was one flat
    <path>.md/ folder with file.iolab names and no tree phases."""
    root = scratch / "md"
    holders = 4 if leaf_only else 7
    tree = ["--md-depth", "2", "--md-branch", "2", "--md-items-per-dir", "3",
            "--md-files", str(3 * holders), "--md-dir", "shared"]
    tree += ["--md-leaf-only"] if leaf_only else []
    r = step(engine, root, scratch.parent, "create", *tree)
    assert r.rc == 0, r.stderr
    assert on_disk(root) == tree_paths(2, 2, 3, leaf_only, 2)
    phases = {p["op"]: p for p in doc(r)["repetitions"][0]["phases"]}
    assert list(phases) == ["tree_create", "create"]
    assert [x["ops"] for x in phases["tree_create"]["per_rank"]] == [7, 0]  # rank 0's tree
    assert phases["create"]["ops"] == 2 * 3 * holders
    for name in ("stat", "read"):
        r = step(engine, root, scratch.parent, name, *tree)
        assert r.rc == 0 and doc(r)["status"] == "ok", r.stderr
    r = step(engine, root, scratch.parent, "remove", *tree)
    assert r.rc == 0, r.stderr
    assert [p["op"] for p in doc(r)["repetitions"][0]["phases"]] == ["remove", "tree_remove"]
    assert not root.exists()  # the remove step leaves nothing (the root it did not make, too)


def test_unique_trees_per_rank_and_whole_run_cleans_up(engine: Engine, scratch: Path) -> None:
    """expected each rank's own tree mdtest_tree.<rank>.0/mdtest_tree.<rank>.1/... made and
    removed by itself, two iterations in test-dir.0-0 and test-dir.1-0, nothing left / was
    no trees."""
    root = scratch / "md"
    r = run_engine(engine, 2, ["--metadata", "easy", "--md-layout", "mdtest", "--path",
                               str(root), "--quiet", "--md-dir", "unique", "--md-depth", "1",
                               "--md-branch", "3", "--md-items-per-dir", "2", "--md-files",
                               "8", "--md-phases", "both", "--reps", "2", "--verify"],
                   scratch.parent)
    assert r.rc == 0, r.stderr
    d = doc(r)
    for rep in d["repetitions"]:
        ops = {p["op"]: p["ops"] for p in rep["phases"]}
        assert ops == {"tree_create": 8, "dir_create": 16, "dir_stat": 16, "dir_rename": 16,
                       "dir_remove": 16, "create": 16, "stat": 16, "open_read": 16,
                       "remove": 16, "tree_remove": 8}
    assert not root.exists()


@pytest.mark.parametrize("stride,tree,finder", [(1, "mdtest_tree.0.0", 0),
                                                (0, "mdtest_tree.1.0", 1)])
def test_stride_makes_each_rank_stat_its_neighbours_files(engine: Engine, scratch: Path,
                                                          stride: int, tree: str,
                                                          finder: int) -> None:
    """expected with --md-stride 1 the rank that finds rank 1's missing file is rank 0
    (mdtest -N: rank r stats rank r+1's files, which live in the tree of rank r+2, mdtest's
    unique_chdir_dir) / was rank 1, each rank its own files."""
    root = scratch / "md"
    shape = ["--md-files", "3", "--md-dir", "unique", "--md-stride", str(stride)]
    assert step(engine, root, scratch.parent, "create", *shape).rc == 0
    victim = root / "test-dir.0-0" / tree / "file.mdtest.1.2"
    assert victim.exists(), on_disk(root)
    victim.unlink()
    r = step(engine, root, scratch.parent, "stat", *shape)
    assert r.rc != 0
    error = doc(r)["error"]
    assert error["rank"] == finder and "file.mdtest.1.2" in error["message"]


def test_mknod_makes_files_without_open(engine: Engine, scratch: Path) -> None:
    """expected --md-mknod files with mknod's mode (regular, owner read only: POSIX_Mknod's
    S_IFREG|S_IRUSR) / was open(O_CREAT, 0644)."""
    root = scratch / "md"
    r = step(engine, root, scratch.parent, "create", "--md-files", "4", "--md-dir", "shared",
             "--md-mknod")
    assert r.rc == 0, r.stderr
    files = sorted((root / "test-dir.0-0" / "mdtest_tree.0").iterdir())
    assert len(files) == 8
    assert all(stat.S_ISREG(f.stat().st_mode) and stat.S_IMODE(f.stat().st_mode) == 0o400
               for f in files)
    assert step(engine, root, scratch.parent, "remove", "--md-files", "4", "--md-dir",
                "shared").rc == 0


def test_stonewall_in_a_whole_run_sets_the_later_phases_count(engine: Engine,
                                                              scratch: Path) -> None:
    """expected --stonewall in a whole metadata run (mdtest -W without -C/-T/-E/-r): the
    create stops, wears out to the furthest rank, and stat/read/remove run on that count /
    was refused (only the create step took it)."""
    r = run_engine(engine, 2, ["--metadata", "easy", "--path", str(scratch / "m"), "--quiet",
                               "--md-files", "2000000", "--stonewall", "0.3"], scratch.parent,
                   timeout=300)
    assert r.rc == 0, r.stderr
    phases = {p["op"]: p for p in doc(r)["repetitions"][0]["phases"]}
    sw = phases["create"]["stonewall"]
    assert sw["hit"] and sw["xfers_max"] < 2000000
    for op in ("create", "stat", "open_read", "remove"):
        assert phases[op]["ops"] == 2 * sw["xfers_max"], op
    assert list(scratch.iterdir()) == []


def test_new_options_are_in_the_option_table(engine: Engine) -> None:
    out = subprocess.run(engine.argv(1, ["--list-options"]), capture_output=True, text=True,
                         env=_env(), timeout=60)
    names = {o["name"] for o in json.loads(out.stdout)}
    assert {"md-layout", "md-stride", "md-depth", "md-branch", "md-items-per-dir",
            "md-leaf-only", "md-random-seed", "md-seed-per-rank", "md-mknod"} <= names


@pytest.mark.parametrize("extra,says", [
    (["--md-depth", "2"], "add --md-layout mdtest"),
    (["--md-layout", "mdtest", "--md-depth", "1", "--md-branch", "2", "--md-files", "5"],
     "--md-items-per-dir"),
    (["--md-layout", "mdtest", "--md-mknod", "--md-size", "8"], "--md-size 0"),
    (["--md-step", "stat", "--stonewall", "2"], "create phase"),
    (["--md-layout", "mdtest", "--md-depth", "1", "--md-files", "2", "--md-dir", "unique",
      "--md-stride", "1"], "neighbour's tree"),
])
def test_bad_combinations_are_refused_before_anything_is_made(engine: Engine, scratch: Path,
                                                              extra: list[str],
                                                              says: str) -> None:
    r = run_refused(engine, 1, ["--metadata", "easy", "--path", str(scratch / "m"), *extra],
                    scratch.parent)
    assert r.rc == 2 and says in r.stderr, r.stderr
    assert list(scratch.iterdir()) == [] and not os.path.exists(scratch / "m")
