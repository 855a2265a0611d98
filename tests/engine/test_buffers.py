"""Transfer buffers live for the whole run: every phase and repetition moves its data
through the buffer the first phase allocated, as IOR keeps its one buffer (engine/src/phase.c,
alloc_buf: freed and allocated again, a buffer gets other physical pages, and O_DIRECT speed on
a virtual disk follows how many physically separate runs of pages a transfer spans)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_helpers import Engine, strace_run

MIB = 1 << 20  # above glibc's mmap threshold: a freed buffer is unmapped, so it shows


@pytest.mark.parametrize("mode", ["buffered", "direct"])
def test_one_buffer_for_every_phase(engine: Engine, scratch: Path, tmp_path: Path, mode: str):
    lines = strace_run(engine, ["--transfer", str(MIB), "--block", str(4 * MIB), "--path",
                                str(scratch / "f"), "--quiet", "--reps", "2", "--verify",
                                "--posix.mode", mode],
                       tmp_path / "trace", "pwrite64,pread64,mmap,munmap").splitlines()
    moves = [n for n, ln in enumerate(lines)
             if re.search(rf"p(write|read)64\(\d+, .*, {MIB}, \d+\) = {MIB}$", ln)]
    assert len(moves) == 2 * 2 * 4  # two repetitions of a write and a read, 4 transfers each
    anonymous = {m[2] for ln in lines  # memory, not the page-cache check's map of the file
                 if (m := re.search(r"mmap\(NULL, (\d+), .*MAP_ANONYMOUS.* = (0x[0-9a-f]+)$", ln))
                 and int(m[1]) >= MIB}
    assert anonymous  # the buffers were seen being mapped
    freed = [ln for ln in lines[moves[0]:moves[-1]]
             if (m := re.search(r"munmap\((0x[0-9a-f]+), ", ln)) and m[1] in anonymous]
    assert freed == []  # no transfer buffer freed between the first and the last transfer

