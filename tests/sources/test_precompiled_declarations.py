"""pydarshan's C declarations parsed once by ./setup (cffi's out-of-line ABI module) instead of
on every process that reads a log: the same bytes from every log, and no C parser at start-up.

Expected: a process with the precompiled module never imports pycparser, and reads every log of
the corpus to the same RawJob, byte for byte, as with the header parsed / was: every
``iolab diagnose`` imported pycparser and parsed the header (~0.2 s of CPU a process)."""

from __future__ import annotations

import faulthandler
import os
import pickle
import subprocess
import sys
from pathlib import Path

import corpus
import pytest

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
cffi = pytest.importorskip("cffi")

from iolab.sources import dutil  # noqa: E402
from iolab.sources.darshan import _load_open  # noqa: E402


def _read_in_child(b: dutil.Binding, log: Path) -> bytes:
    """The pickled RawJob and record bytes of one log read with ``b``, in a forked child
    (libdarshan-util dies on some damaged logs of the corpus); ``crash`` or the error's type
    otherwise."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        faulthandler.disable()
        os.close(rfd)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        try:
            with dutil.Log(str(log), b) as opened:
                out = pickle.dumps(_load_open(opened, log), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - compared between the two bindings
            out = f"error {type(exc).__name__}: {exc}".encode()
        with os.fdopen(wfd, "wb") as fh:
            fh.write(out)
        os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as fh:
        got = fh.read()
    _, status = os.waitpid(pid, 0)
    return got if os.WIFEXITED(status) else f"crash {os.WTERMSIG(status)}".encode()


def test_precompiled_declarations_read_every_log_byte_for_byte(tmp_path: Path):
    corpus.require(real=True, generated=True)
    written = dutil.write_precompiled(tmp_path)
    assert written is not None and written.parent == tmp_path and written.is_file()
    parsed = dutil.make_binding(tmp_path / "absent")
    precompiled = dutil.make_binding(tmp_path)
    assert isinstance(parsed.ffi, cffi.FFI)  # the header parsed here
    assert not isinstance(precompiled.ffi, cffi.FFI)  # the module's backend FFI
    differ, whole = [], 0
    for log in [*corpus.REAL_LOGS, *corpus.GENERATED_LOGS]:
        got = _read_in_child(parsed, log)
        whole += got.startswith(pickle.PROTO)  # a RawJob, not an error
        if got != _read_in_child(precompiled, log):
            differ.append(log.name)
    assert differ == [] and whole > len(corpus.REAL_LOGS) // 2


def test_precompiled_declarations_spare_the_c_parser(tmp_path: Path):
    """expected: no pycparser in a process that has the module; a header with other
    declarations (another pydarshan) finds no module and is parsed / was: always parsed."""
    written = dutil.write_precompiled(tmp_path)
    assert written is not None
    probe = ("import sys; from pathlib import Path; from iolab.sources import dutil; "
             "b = dutil.make_binding(Path(sys.argv[1])); "
             "print('pycparser' in sys.modules, type(b.ffi).__module__)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with_module = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
    assert with_module[0] == "False"
    written.rename(tmp_path / "darshan_ffi_0123456789abcdef.py")  # another header's digest
    without = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
    assert without == ["True", "cffi.api"]
