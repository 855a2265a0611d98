"""The quick literal-word test that model/files.categorize runs before its two patterns
(added to cut diagnose's time on logs of many files) keeps every category the patterns give.

(How diagnose's time grows with a log's files is a benchmark's business, not a timed test:
bench/diagnose_vs_drishti.py's 64,000-file log.)"""

from __future__ import annotations

import pytest

from iolab.model import files

NAMES = [
    "/tmp/ompi.host.1000/x", "/tmp/openmpi-sessions-1@h/x", "/tmp/pmix-123/x",
    "/scratch/out.dat.locktest.3", "/dev/shm/seg", "/tmp/vader_segment.h.0",
    "/tmp/x_cid-12-3.sm", "/tmp/sm_segment.h", "/dev/psm2_x", "/tmp/ucx_x", "/tmp/hwloc.xml",
    "/tmp/cray_x", "/home/u/.mpich/x", "/tmp/mpich_x", "/var/spool/slurm/d/job",
    "/proc/self/maps", "/sys/x", "/etc/hosts", "/dev/null", "/run/x", "/usr/lib/libc.so",
    "/lib64/libm.so.6", "/opt/cray/lib/libmpi.so.12", "/home/u/lib.so", "/x/lib.so.1.2",
    "/env/site-packages/a.py", "/env/dist-packages/b", "/a/__pycache__/c", "/a/b.pyc",
    "/a/lib/python3.11/x", "<STDOUT>", "/scratch/run/out/file_000001.dat",
    "/lus/a/checkpoint.h5", "/gpfs/x/ompi_not.dat", "/scratch/so/pyfile", "data.sol",
    "/scratch/a.locktest.x", "/scratch/x_cid-1.sma", "relative/file", "",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_quick_test_of_a_name_keeps_every_category(name: str) -> None:
    """expected: categorize (a literal test before the patterns) agrees with the patterns
    alone on each of their alternatives / guards the words list against a new pattern."""
    if name.startswith("<") and name.endswith(">"):
        want = files.STREAM
    elif files._RUNTIME_RE.search(name):
        want = files.RUNTIME
    elif files._SYSTEM_RE.search(name):
        want = files.SYSTEM
    else:
        want = files.APP
    assert files.categorize(name) == want
