"""Every test: ``tests/`` on the import path (for :mod:`corpus`, the one setting that says
where the external Darshan log corpus is), and ``iolab`` importable from a checkout."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import iolab  # noqa: F401
except ImportError:  # running from a checkout without ``pip install -e .``
    sys.path.insert(0, str(HERE.parent / "src"))
