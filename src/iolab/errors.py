"""The one error type that reaches the user as a single line and exit code 2.

Every verb raises :class:`UsageError` for bad input (what, where, how to fix); the CLI
prints ``iolab <verb>: <message>`` (:func:`verb_line`) and exits 2. No traceback ever
reaches the user for bad input.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1  # e.g. ``diagnose --fail-on`` found something at that level
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input or an unusable environment; the message is one line: what, where, how to fix."""


# Prefixes a message may carry from the layer that made it: the CLI adds the verb's own, once.
# The engine's ``iolab-bench: `` goes too: its messages name the options the user gave the verb
# (``--transfer 3x: not a size``), so the verb's prefix says who is speaking.
_CARRIED_PREFIXES = ("iolab-bench: ", "iolab: ")


def verb_line(verb: str | None, message: str) -> str:
    """The one form of a line iolab says on stderr (an error, a warning, a progress line):
    ``iolab <verb>: <message>`` (``iolab: <message>`` without a verb), with any prefix the
    message already carries removed, so no line reads ``iolab: iolab-bench: ...`` or
    ``iolab bench: iolab bench: ...``."""
    prefix = f"iolab {verb}" if verb else "iolab"
    own = (f"{prefix}: ", *_CARRIED_PREFIXES)
    text = message.strip()
    while True:
        for carried in own:
            if text.startswith(carried):
                text = text[len(carried):].lstrip()
                break
        else:
            return f"{prefix}: {text}"
