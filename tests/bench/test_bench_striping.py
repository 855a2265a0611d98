"""--stripe-count / --stripe-size: the lfs command lines and hints built (pure functions),
lfs getstripe's output read back, the file system found from mountinfo; and on this machine
(no Lustre) one line, exit 2, nothing stored or created."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_helpers import run_iolab

from iolab.bench import striping
from iolab.bench.striping import Striping
from iolab.errors import UsageError

MIB = 1 << 20


@pytest.mark.parametrize(("text", "size"), [("64K", 64 << 10), ("1M", MIB), ("4m", 4 * MIB),
                                            ("1G", 1 << 30), ("131072", 128 << 10)])
def test_stripe_sizes_in_64k_units(text: str, size: int) -> None:
    assert striping.parse_size(text) == size


@pytest.mark.parametrize(("text", "msg"), [("100K", "multiples of 64 KiB"),
                                           ("1000", "multiples of 64 KiB"),
                                           ("0", "multiples of 64 KiB"),
                                           ("1.5M", "give bytes"), ("big", "give bytes")])
def test_bad_stripe_sizes(text: str, msg: str) -> None:
    with pytest.raises(UsageError, match=msg):
        striping.parse_size(text)


def test_options_commands_and_hints() -> None:
    assert striping.from_options(None, None) is None
    s = striping.from_options(4, "1M")
    assert s == Striping(4, MIB)
    assert striping.from_options(8, None) == Striping(8, MIB)  # Lustre's own default size
    assert striping.from_options(None, "4M") == Striping(1, 4 * MIB)
    for bad in (0, -2):
        with pytest.raises(UsageError, match="--stripe-count"):
            striping.from_options(bad, "1M")
    assert striping.setstripe_command("/lus/x/f", s) == \
        ["lfs", "setstripe", "-c", "4", "-S", "1M", "/lus/x/f"]
    assert striping.getstripe_command("/lus/x/f") == ["lfs", "getstripe", "-y", "/lus/x/f"]
    assert striping.getstripe_command("/lus/d", directory=True) == \
        ["lfs", "getstripe", "-d", "-y", "/lus/d"]
    assert s.hints() == ["striping_factor=4", "striping_unit=1048576"]
    assert Striping(-1, MIB).hints() == ["striping_unit=1048576"]  # "all OSTs": ROMIO has no -1


GETSTRIPE_FILE = """lmm_stripe_count:  4
lmm_stripe_size:   1048576
lmm_pattern:       raid0
lmm_layout_gen:    0
lmm_stripe_offset: 2
lmm_objects:
      - l_ost_idx: 2
        l_fid:     0x100020000:0x2:0x0
      - l_ost_idx: 3
        l_fid:     0x100030000:0x2:0x0
      - l_ost_idx: 0
        l_fid:     0x100000000:0x3:0x0
      - l_ost_idx: 1
        l_fid:     0x100010000:0x2:0x0
"""
GETSTRIPE_DIR = """stripe_count:  8 stripe_size:   4194304 pattern:       raid0 stripe_offset: -1
"""


def test_getstripe_read_back() -> None:
    assert striping.parse_getstripe(GETSTRIPE_FILE) == {
        "stripe_count": 4, "stripe_size_bytes": MIB, "pattern": "raid0", "stripe_offset": 2,
        "osts": [2, 3, 0, 1]}
    # a directory's default: one line (lfs getstripe -d) or one key a line
    expected = {"stripe_count": 8, "stripe_size_bytes": 4 * MIB, "pattern": "raid0",
                "stripe_offset": -1}
    assert striping.parse_getstripe(GETSTRIPE_DIR) == expected
    assert striping.parse_getstripe(GETSTRIPE_DIR.replace("  ", "\n")) == expected


MOUNTINFO = """22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
40 22 0:40 / /lus rw - lustre 10.0.0.1@o2ib:/lus rw
41 40 0:41 / /lus/home rw - nfs srv:/home rw
42 22 0:42 / /tmp rw - tmpfs tmpfs rw
"""


@pytest.mark.parametrize(("path", "kind"), [("/lus/scratch/u/f", "lustre"), ("/lus", "lustre"),
                                            ("/lus/home/u", "nfs"), ("/lustre2/x", "ext4"),
                                            ("/tmp/x", "tmpfs"), ("/work", "ext4")])
def test_file_system_from_mountinfo(path: str, kind: str) -> None:
    assert striping.fs_type(path, MOUNTINFO) == kind


def test_targets_follow_the_engines_file_names() -> None:
    assert striping.targets("/l/f", None, 3) == ["/l/f.0", "/l/f.1", "/l/f.2"]
    assert striping.targets("/l/f", "fpp", 2) == ["/l/f.0", "/l/f.1"]
    for layout in ("segmented", "strided", "serial", "subarray"):
        assert striping.targets("/l/f", layout, 4) == ["/l/f"]
    assert striping.targets("/l/f", "subset", 4, "shared") == ["/l/f"]
    with pytest.raises(UsageError, match="one file per aggregator"):
        striping.targets("/l/f", "subset", 4, "aggregator")
    with pytest.raises(UsageError, match="--unique-dir"):
        striping.targets("/l/f", "fpp", 4, unique_dir=True)


def test_refused_without_lustre(engine: Path, db: Path, workdir: Path) -> None:
    """Expected: one line naming the file system, exit 2, no database, no test files."""
    kind = striping.fs_type(workdir)
    if kind == "lustre":
        pytest.skip("this test directory is on Lustre")
    for extra in ([], ["-o", str(workdir / "f"), "--api", "mpiio"]):
        r = run_iolab("bench", "--api", "null", "--stripe-count", "4", "--stripe-size", "1M",
                      *extra, "--db", str(db), cwd=workdir)
        assert r.returncode == 2, r.stderr
        # the directory of the test files: iolab's own in the current one, or -o's
        assert r.err_lines() == [f"iolab bench: --stripe-count/--stripe-size need Lustre: "
                                 f"{workdir} is on {kind}; point -o/--path at a Lustre "
                                 "file system, or leave them out"]
        assert not db.exists() and not list(workdir.iterdir())
    bad = run_iolab("bench", "--api", "null", "--stripe-size", "100K", "--db", str(db),
                    cwd=workdir)
    assert bad.returncode == 2 and "multiples of 64 KiB" in bad.stderr
    assert not db.exists()


def test_bench_striping_targets_and_hints() -> None:
    """What iolab bench stripes: its own test directory, or the engine's --path file(s)."""
    import argparse

    from iolab import launch
    from iolab.bench import cli, jobs

    spec = launch.LaunchSpec(np=2)
    assert cli._striping_targets(spec, ["--api", "posix"], Path("/lus/.iolab-bench-x")) == \
        (["/lus/.iolab-bench-x"], "/lus/.iolab-bench-x")
    assert cli._striping_targets(spec, ["--path", "/lus/f", "--layout", "segmented"]) == \
        (["/lus/f"], None)
    assert cli._striping_targets(spec, ["--path", "/lus/f"]) == (["/lus/f.0", "/lus/f.1"], None)
    case = jobs.user_case(None, ["--api", "mpiio"])
    mpiio = argparse.Namespace(**{"engine:api": "mpiio"})
    (hinted,) = cli._with_striping_hints(mpiio, [case], Striping(4, MIB))
    assert hinted.engine_args == ("--api", "mpiio", "--hint", "striping_factor=4", "--hint",
                                  "striping_unit=1048576")
    posix = argparse.Namespace(**{"engine:api": "posix"})
    assert cli._with_striping_hints(posix, [case], Striping(4, MIB)) == [case]
