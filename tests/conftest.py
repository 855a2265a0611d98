"""Every test: ``tests/`` on the import path (for :mod:`corpus`, the one setting that says
where the external Darshan log corpus is), ``iolab`` importable from a checkout, and every
program a test starts with the default signal actions."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import iolab  # noqa: F401
except ImportError:  # running from a checkout without ``pip install -e .``
    sys.path.insert(0, str(HERE.parent / "src"))

# A suite started in the background by a shell without job control (CI scripts, `cmd &`)
# inherits SIGINT and SIGQUIT ignored (and under nohup SIGHUP), and an ignored signal stays
# ignored across exec: every program a test starts would ignore it too, and the tests of what
# a signal does (an interrupted tune, sweep or bench keeps its results; the buffer library
# flushes; the tracer leaves Python its KeyboardInterrupt) would measure the shell instead.
# Handled signals go back to their default action at exec, so handling them here is enough.
for _sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.default_int_handler if _sig == signal.SIGINT
                      else signal.SIG_DFL)

# Most tests start `python -m iolab ...`. With PYTHONDONTWRITEBYTECODE set (as in CI) no
# .pyc of iolab is ever written, so every one of those ~3,000 programs compiled the ~60-170
# modules its verb imports from source again (0.05-0.2 s of CPU each). Compiling them once
# here lets every program read the .pyc; compileall skips what is up to date and writes
# beside the sources' __pycache__ exactly as an ordinary import would.
import compileall  # noqa: E402

import iolab as _iolab  # noqa: E402

compileall.compile_dir(str(Path(_iolab.__file__).parent), quiet=2, workers=1)
