"""A log whose header region map is damaged is refused in one line, never read without the
modules the damage hid.

Expected: 256 zeroed bytes over the module map of a header (a module's entry then reads
"absent") give exit 2 and one line saying the header is damaged / was: libdarshan-util read
the log without those modules and `iolab diagnose` reported the job with no POSIX or STDIO
I/O at all, exit 0 (a wrong result with no word of the damage).

Real logs: darshan-generated's stdio_fwrite (format 3.41, 64 module entries from byte 32)
and the corpus's stdio_no_posix (format 3.21, 16 entries from byte 24), copied and damaged
here; every undamaged log of both corpora is still read (the map of each tiles its file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import GENERATED_DIR, GENERATED_LOGS, REAL_LOGS, REAL_LOGS_DIR, REAL_MISSING

from iolab.cli import main
from iolab.sources.darshan import _check_header

STDIO_341 = GENERATED_DIR / "stdio_fwrite_2M_x_512B.darshan"
STDIO_321 = next((REAL_LOGS_DIR / "stdio_no_posix").glob("*.darshan"), None)
pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")


def _zeroed(src: Path, at: int, out: Path, nbytes: int = 256) -> Path:
    data = bytearray(src.read_bytes())
    data[at:at + nbytes] = bytes(nbytes)
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize(("which", "at"), [("3.41", 36), ("3.41", 48), ("3.21", 17)])
def test_zeroed_region_map_is_refused_in_one_line(tmp_path: Path, capsys, which: str,
                                                   at: int) -> None:
    """Expected: exit 2, one line, "damaged header" / was: exit 0, a diagnosis without I/O."""
    src = STDIO_341 if which == "3.41" else STDIO_321
    if src is None or not src.is_file():
        pytest.skip(REAL_MISSING)
    log = _zeroed(src, at, tmp_path / "damaged.darshan")
    assert main(["diagnose", "--json", str(log)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "has a damaged header" in lines[0] and str(log) in lines[0]
    assert main(["diagnose", "--json", str(src)]) == 0  # the undamaged log still reads


@pytest.mark.skipif(not (REAL_LOGS or GENERATED_LOGS), reason=REAL_MISSING)
def test_every_undamaged_corpus_header_passes_the_region_map_check() -> None:
    """Expected: no log of the corpora refused by the new check (little- and big-endian,
    formats 3.00 to 3.41, the empty log) / was: no check."""
    for log in [*REAL_LOGS, *GENERATED_LOGS]:
        _check_header(log)
