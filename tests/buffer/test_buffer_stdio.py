"""STDIO corners: freopen (glibc cannot reopen cookie streams, the library does it), fdopen
on a buffered descriptor, fsync(fileno(fp)), ftell after "a" opens: same bytes and the same
positions as without the library."""

from __future__ import annotations

from buffer_helpers import run


def test_freopen_fdopen_fileno_identical(buflib, cprog, tmp_path):
    results = []
    for spec in (None, "*.dat:size=4K:count=2"):
        d = tmp_path / ("with" if spec else "without")
        d.mkdir()
        r = run([cprog("stdio_misc"), d], buflib, spec)
        assert r.returncode == 0, r.stderr
        results.append((r.stdout, [(d / f"m{i}.dat").read_bytes() for i in (1, 2, 3)]))
    assert results[0] == results[1]
    assert results[1][1][1].endswith(b"second 2999\nappended\n")
