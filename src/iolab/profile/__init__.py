"""``iolab profile``: run a program under libiolab-trace.so and load its profile.

:func:`iolab.profile.load.load` turns a profile into the same RawJob a Darshan log becomes.
"""

from __future__ import annotations

from iolab.profile.load import load

__all__ = ["load"]
