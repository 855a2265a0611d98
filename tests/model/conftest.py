"""Model tests: make ``iolab`` importable from a checkout."""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import iolab  # noqa: F401
except ImportError:  # running from a checkout without ``pip install -e .``
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
