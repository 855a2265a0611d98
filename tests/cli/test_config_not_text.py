"""``iolab diagnose LOG --config FILE`` with a binary FILE (a Darshan log given to the wrong
option): one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import OWN_LOG, iolab


@pytest.mark.parametrize("name", ["th.toml", "th.json"])
def test_binary_config_file_is_one_line(tmp_path: Path, logs: tuple[Path, Path],
                                        name: str) -> None:
    """expected: one line naming the file and what --config takes, exit 2 / was: a
    UnicodeDecodeError traceback."""
    cfg = tmp_path / name
    cfg.write_bytes(OWN_LOG.read_bytes())  # the repository's real Darshan log: not UTF-8
    r = iolab("diagnose", str(logs[0]), "--config", str(cfg), cwd=tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert str(cfg) in lines[0] and "not a text file" in lines[0]
    assert "TOML or JSON" in lines[0] and r.stdout == ""
