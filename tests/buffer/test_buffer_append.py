"""O_APPEND shared by processes (a common log file): the kernel appends each write() whole;
with the library each process appends whole buffers, and a record never straddles two of
them, so every record comes out whole, each process's records in order."""

from __future__ import annotations

import subprocess

from buffer_helpers import lib_env


def test_processes_appending_to_one_file_keep_records_whole(buflib, cprog, tmp_path):
    f = tmp_path / "log.dat"
    nproc, nrec = 4, 3000
    procs = [
        subprocess.Popen([str(cprog("appender")), str(f), str(i), str(nrec)],
                         env=lib_env(buflib, "*.dat:size=8K:count=2"))
        for i in range(nproc)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    next_k = [0] * nproc
    for line in f.read_bytes().split(b"\n")[:-1]:
        i, k, n, rest = line.split(b" ", 3)
        i, k, n = int(i), int(k), int(n)
        assert k == next_k[i], f"process {i}: record {k} after {next_k[i] - 1}"
        assert len(line) + 1 == n and rest == bytes([97 + (i + k) % 26]) * len(rest)
        next_k[i] += 1
    assert next_k == [nrec] * nproc
