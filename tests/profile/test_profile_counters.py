"""The one counter list: the table compiled into libiolab-trace.so equals what
iolab.counters parses from counters/iolab_counters.def, and names match pydarshan's."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from iolab import counters as ctr

# the C module order
MODULES = ["POSIX", "STDIO", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR"]


def _c_names(lib: ctypes.CDLL, module: int, is_float: int) -> list[str]:
    fn = lib.iolab_trace_counter_name
    fn.restype = ctypes.c_char_p
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    out = []
    while (name := fn(module, is_float, len(out))) is not None:
        out.append(name.decode())
    return out


def test_c_and_python_agree(tracer: Path) -> None:
    lib = ctypes.CDLL(str(tracer))  # IOLAB_TRACE_DIR unset: the tracer stays passive
    mods = ctr.load()
    for i, mod in enumerate(MODULES):
        assert _c_names(lib, i, 0) == mods[mod].int_names()
        assert _c_names(lib, i, 1) == mods[mod].float_names()


def test_darshan_names_are_darshans() -> None:
    """Every counter Darshan has keeps Darshan's name and order; iolab's own come after."""
    backend = pytest.importorskip("darshan.backend.cffi_backend")
    for mod in MODULES:
        ours = ctr.load()[mod]
        theirs_i = list(backend.counter_names(mod))
        theirs_f = list(backend.fcounter_names(mod))
        assert ours.int_names()[: len(theirs_i)] == theirs_i
        assert ours.float_names()[: len(theirs_f)] == theirs_f
        extra = ours.ints[len(theirs_i) :]
        assert all(c.doc.startswith("iolab:") for c in extra)


def test_every_counter_has_kind_unit_doc() -> None:
    for mc in ctr.load().values():
        for c in (*mc.ints, *mc.floats):
            assert c.kind and c.unit and c.doc
            assert c.is_float == (c.kind in ctr.FLOAT_KINDS)
