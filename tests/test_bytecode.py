"""The suite compiles iolab once (tests/conftest.py) so that the ~3,000 `python -m iolab`
programs the tests start read bytecode instead of compiling their verb's modules again.

Expected: every module of iolab has an up-to-date .pyc when the tests run, also under
PYTHONDONTWRITEBYTECODE (as in CI) / was: none was ever written there, and every program
compiled 60-170 modules from source (0.05-0.2 s of CPU each)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

import iolab

PACKAGE = Path(iolab.__file__).parent


def test_every_iolab_module_has_current_bytecode() -> None:
    if not os.access(PACKAGE, os.W_OK):
        pytest.skip(f"{PACKAGE} is not writable (an installed copy: pip compiled it)")
    stale = []
    for source in sorted(PACKAGE.rglob("*.py")):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.is_file():
            stale.append(f"{source.relative_to(PACKAGE)}: no {cached.name}")
            continue
        # a .pyc's header holds its source's mtime (bytes 8-12) and size (12-16)
        head = cached.read_bytes()[:16]
        st = source.stat()
        if (int.from_bytes(head[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
                or int.from_bytes(head[12:16], "little") != st.st_size & 0xFFFFFFFF):
            stale.append(f"{source.relative_to(PACKAGE)}: {cached.name} is older")
    assert stale == []
