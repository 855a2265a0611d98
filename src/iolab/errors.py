"""The one error type that reaches the user as a single line and exit code 2.

Every verb raises :class:`UsageError` for bad input (what, where, how to fix); the CLI
prints ``iolab: <message>`` and exits 2. No traceback ever reaches the user for bad input.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1  # e.g. ``diagnose --fail-on`` found something at that level
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input or an unusable environment; the message is one line: what, where, how to fix."""
