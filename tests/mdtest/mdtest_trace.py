"""Read strace logs of mdtest and of iolab's engine as per-rank lists of calls on the items
and tree directories under the -d folder, with the folder's name taken out, so two runs on
different folders compare call for call, name for name."""

from __future__ import annotations

import re
import stat
from pathlib import Path

TRACED = ("trace=mkdir,rmdir,rename,openat,newfstatat,stat,unlink,mknod,mknodat,fsync,read,"
          "write,close")
_CALL = re.compile(r"(?:\d+ +)?(\w+)\((.*)\) += (-?\d+)")
_PATH = re.compile(r'"([^"]*)"')
_OWN = re.compile(r"(?:file|dir)\.mdtest\.(\d+)\.")


def _calls_of(path: Path, folder: str) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    fds: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = _CALL.match(line)
        if not m or m.group(3).startswith("-"):
            continue
        call, args, ret = m.groups()
        if call == "close":
            fds.pop(args.strip(), None)  # the number is free for an unrelated file
            continue
        if call in ("fsync", "read", "write"):
            fd = args.split(",", 1)[0]
            if fd in fds:
                size = ret if call != "fsync" else ""
                out.append((call, fds[fd], size))
            continue
        names = [re.sub(r"/+", "/", n).rstrip("/") for n in _PATH.findall(args)]
        names = [n[len(folder):] for n in names if n.startswith(folder + "/")]
        if not names or not re.search(r"/(test-dir|mdtest_tree)", names[0]):
            continue
        if call == "openat":
            call = "create" if "O_CREAT" in args else "open"
            if "O_DIRECTORY" in args:
                continue
            fds[ret] = names[0]
        elif call in ("mknodat", "newfstatat"):
            call = {"mknodat": "mknod", "newfstatat": "stat"}[call]
        entry: tuple[str, ...] = (call, *names)
        size = re.search(r"st_size=(\d+)", args)
        if call == "stat" and size and "/file." in names[0]:
            entry += (size.group(1),)
        out.append(entry)
    return out


def calls_by_rank(trace_dir: Path, folder: str, *, made: tuple[str, ...] = (
        "create", "mkdir", "mknod")) -> dict[int, list[tuple[str, ...]]]:
    """rank -> its calls, in order. A trace's rank is the owner of the first item it made
    (mdtest names each item after its creator); a process that made none (the launcher, a
    helper) is left out, as a rank with no items has nothing to compare. A phase that makes
    nothing (-T, -E, -r alone) gives the calls that name items in ``made`` instead: the key
    is then the owner of the first item the trace touched (the same for both tools)."""
    out: dict[int, list[tuple[str, ...]]] = {}
    for f in sorted(trace_dir.iterdir()):
        calls = _calls_of(f, folder)
        made_items = [_OWN.search(c[1]) for c in calls if c[0] in made]
        owners = [int(m.group(1)) for m in made_items if m]
        if owners:
            out[owners[0]] = calls
    return out


def traced(tmp_path: Path, binary: Path, name: str, what: str = TRACED,
           follow: str = "-ff") -> tuple[Path, Path]:
    """A script that runs ``binary`` under strace (``what``: strace's -e), one trace file per
    process in the returned folder; the script goes where the binary went (mpirun's
    command, or IOLAB_BENCH)."""
    trace_dir = tmp_path / f"t-{name}"
    trace_dir.mkdir()
    script = tmp_path / f"traced-{name}"
    script.write_text(f'#!/bin/sh\nexec strace {follow} -qq -e {what} -o "{trace_dir}/t" '
                      f'"{binary}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, trace_dir
