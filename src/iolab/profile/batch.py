"""``iolab profile -- sbatch ... job.sh``: the checks that only a batch job needs.

The processes of a batch job run on compute nodes and write their profiles into the folder
iolab made under ``-o DIR``; iolab merges them on the node where it runs once ``sbatch
--wait`` returns. So the folder must be on a file system both see. This can be told in
advance only in one case: a file system type that is always local to a node, in a cluster
that has nodes other than this one; anything else is checked afterwards (no profile found).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

# File system types that are never shared between nodes (a network or parallel file system
# — nfs, lustre, gpfs, beegfs, ceph, fuse.* — may be).
NODE_LOCAL_TYPES = frozenset({
    "tmpfs", "ramfs", "overlay", "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "vfat",
    "zfs",
})


def fs_type(path: Path) -> str | None:
    """The type of the file system holding path (its longest mount point in
    /proc/self/mounts), None when unknown."""
    real = os.path.realpath(path)
    best, kind = "", None
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) < 3:
                    continue
                mnt = fields[1].replace("\\040", " ")
                inside = real == mnt or real.startswith(mnt.rstrip("/") + "/")
                if inside and len(mnt) >= len(best):
                    best, kind = mnt, fields[2]
    except OSError:
        return None
    return kind


def other_nodes() -> list[str]:
    """The cluster's nodes other than this host (sinfo); empty when sinfo cannot say."""
    try:
        p = subprocess.run(["sinfo", "-h", "-N", "-o", "%n"], capture_output=True, text=True,
                           timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if p.returncode != 0:
        return []
    me = {socket.gethostname(), socket.gethostname().split(".")[0], "localhost"}
    return sorted({n for n in p.stdout.split() if n not in me and n.split(".")[0] not in me})


def warn_if_not_shared(outdir: Path, quiet: bool) -> None:
    """One line on stderr when -o DIR is on a node-local file system of a cluster with other
    nodes: the job's processes would then write their profiles where iolab cannot read."""
    kind = fs_type(outdir)
    if quiet or kind not in NODE_LOCAL_TYPES:
        return
    nodes = other_nodes()
    if nodes:
        print(f"iolab profile: warning: {outdir} is on a node-local file system ({kind}) and "
              f"the job may run on other nodes ({', '.join(nodes[:3])}"
              f"{'...' if len(nodes) > 3 else ''}): give -o DIR on a file system the compute "
              "nodes share (home, scratch)",
              file=sys.stderr)
