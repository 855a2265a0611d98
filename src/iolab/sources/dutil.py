"""A lean binding to the libdarshan-util that pydarshan's wheel bundles.

``import darshan`` costs 0.6 s, most of it pandas, which pydarshan imports at the top of its
backend although iolab never uses it; on small logs that made ``iolab diagnose`` slower than
Drishti. This module reuses pydarshan's C declarations (``darshan/backend/api_def_c.py``) and
its bundled library file without importing the package, and falls back to pydarshan's own
backend when that layout is not found (a system pydarshan, another version).

Every log is closed in ``finally`` (pydarshan's objects closed by garbage collection
deadlocked with several logs in one process).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import importlib.util
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Binding:
    ffi: Any
    lib: Any


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("darshan")  # locates without importing
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _module_at(name: str, path: Path) -> Any:
    """The Python module in file ``path``, loaded alone (not its package: pydarshan's
    imports pandas)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} not found")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _darshan_header(pkg: Path) -> str:
    """pydarshan's C declarations, the text its own backend gives ``cdef``."""
    api = _module_at("_iolab_darshan_api_def_c", pkg / "backend" / "api_def_c.py")
    return str(api.load_darshan_header(""))


def precompiled_path(header: str, where: Path | None = None) -> Path:
    """Where ./setup writes the declarations parsed once (cffi's out-of-line ABI module).

    The name carries a digest of the header, so a pydarshan with other declarations finds no
    file and parses its own: the module is only ever a cache of the same parse."""
    import cffi  # its version too: a module written by another cffi may not load in this one

    digest = hashlib.sha256(f"{cffi.__version__}\n{header}".encode()).hexdigest()[:16]
    return (where or Path(sys.prefix) / "share" / "iolab") / f"darshan_ffi_{digest}.py"


def write_precompiled(where: Path | None = None) -> Path | None:
    """Parse pydarshan's header once and write it as a module (called by ./setup); None
    without pydarshan."""
    pkg = _package_dir()
    if pkg is None:
        return None
    import cffi  # deferred: the C parser only when the cache is built

    header = _darshan_header(pkg)
    out = precompiled_path(header, where)
    if out.is_file():  # the same header's: nothing to do
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    builder = cffi.FFI()
    builder.cdef(header)
    builder.set_source(out.stem, None)  # None: ABI mode, nothing to compile
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating <file>"
        builder.emit_python_code(str(tmp))
    os.replace(tmp, out)  # whole or absent: another process may be reading the directory
    return out


def _ffi(pkg: Path, where: Path | None = None) -> Any:
    """The FFI of pydarshan's declarations: from the module ./setup wrote when it matches
    this pydarshan (0.2 s less per process: no pycparser import, no parse), else parsed."""
    header = _darshan_header(pkg)
    cached = precompiled_path(header, where)
    if cached.is_file():
        return _module_at(cached.stem, cached).ffi
    import cffi  # deferred: the libdarshan-util binding only when a log is read or written

    ffi = cffi.FFI()
    ffi.cdef(header)
    return ffi


@functools.lru_cache(maxsize=1)  # one parsed cdef and dlopen per process: both are immutable
def binding() -> Binding:
    """cffi handle on libdarshan-util; raises ImportError when pydarshan is absent."""
    return make_binding()


def make_binding(where: Path | None = None) -> Binding:
    """:func:`binding` with the precompiled declarations looked for in ``where``."""
    pkg = _package_dir()
    if pkg is None:
        raise ImportError("No module named 'darshan'")
    try:
        ffi = _ffi(pkg, where)
        libs = sorted(glob.glob(str(pkg.parent / "darshan.libs" / "libdarshan-util*.so*")))
        lib = ffi.dlopen(libs[0] if libs else "libdarshan-util.so")
        return Binding(ffi=ffi, lib=lib)
    except (ImportError, OSError, AttributeError, IndexError):
        from darshan.backend import cffi_backend as be  # the slow but canonical path

        return Binding(ffi=be.ffi, lib=be.libdutil)


# Module names in libdarshan-util's order (darshan-log-format.h, 3.5).
MODULE_NAMES = ("NULL", "POSIX", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "BG/Q",
                "LUSTRE", "STDIO", "DXT_POSIX", "DXT_MPIIO", "MDHIM", "APXC", "APMPI",
                "HEATMAP", "DFS", "DAOS")
STRUCTS = {
    "POSIX": "struct darshan_posix_file",
    "MPI-IO": "struct darshan_mpiio_file",
    "STDIO": "struct darshan_stdio_file",
    "H5F": "struct darshan_hdf5_file",
    "H5D": "struct darshan_hdf5_dataset",
    "PNETCDF_FILE": "struct darshan_pnetcdf_file",
    "PNETCDF_VAR": "struct darshan_pnetcdf_var",
}


_NAMES_READ: dict[tuple[int, str, bool], tuple[str, ...]] = {}


def counter_names(b: Binding, module: str, floats: bool = False) -> list[str]:
    """Counter names from the library's own tables (``posix_counter_names`` ...), read once
    a process per library and module (~0.2 ms a module: a worker reads thousands of logs)."""
    key = (id(b.lib), module, floats)
    got = _NAMES_READ.get(key)
    if got is None:
        got = _NAMES_READ[key] = tuple(_read_counter_names(b, module, floats))
    return list(got)


def _read_counter_names(b: Binding, module: str, floats: bool) -> list[str]:
    stem = "MPIIO" if module == "MPI-IO" else module
    f = "F_" if floats else ""
    table = getattr(b.lib, f"{stem.lower()}_{f.lower()}counter_names")
    end = f"{stem.upper()}_{f}NUM_INDICES"
    out = []
    for i in range(100000):
        name = b.ffi.string(table[i]).decode()
        if name == end:
            break
        out.append(name)
    return out


class LibraryFault(RuntimeError):
    """libdarshan-util handed back a NULL where a string must be (a name, a mount, the
    metadata). A damaged name map breaks its heap: whether it then dies (SIGSEGV, SIGABRT)
    or hands back NULL depends on the reading process's heap, not on the log (seen under
    Dask, 1 read in 5); the loader gives both one reason."""


def _text(ffi: Any, ptr: Any, errors: str = "replace") -> str:
    """A C string libdarshan-util handed back; NULL where a string must be is its broken
    heap (LibraryFault), not a Python error."""
    if ptr == ffi.NULL:
        raise LibraryFault("a NULL string where libdarshan-util must give one")
    return str(ffi.string(ptr).decode("utf-8", errors))


class Log:
    """One open log; use as a context manager."""

    def __init__(self, path: str, b: Binding | None = None) -> None:
        self.b = b or binding()
        self.handle = self.b.lib.darshan_log_open(os.fsencode(path))
        if self.handle == self.b.ffi.NULL:
            raise RuntimeError("libdarshan-util could not open the log")

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.handle is not None and self.handle != self.b.ffi.NULL:
            self.b.lib.darshan_log_close(self.handle)
        self.handle = None

    def job(self) -> dict[str, Any]:
        ffi, lib = self.b.ffi, self.b.lib
        j = ffi.new("struct darshan_job *")
        if lib.darshan_log_get_job(self.handle, j) < 0:
            raise ValueError("job record unreadable")
        rt = ffi.new("double *")
        lib.darshan_log_get_job_runtime(self.handle, j[0], rt)
        meta = {}
        for kv in _text(ffi, j[0].metadata).split("\n"):
            if "=" in kv:
                k, v = kv.split("=", 1)
                meta[k] = v
        return {"uid": j[0].uid, "start_time_sec": j[0].start_time_sec,
                "start_time_nsec": j[0].start_time_nsec, "end_time_sec": j[0].end_time_sec,
                "end_time_nsec": j[0].end_time_nsec, "nprocs": j[0].nprocs,
                "jobid": j[0].jobid, "run_time": rt[0], "metadata": meta,
                # the format version is the first field of the log handle (as pydarshan reads it)
                "log_ver": ffi.string(ffi.cast("char *", self.handle)).decode()}

    def exe(self) -> str:
        buf = self.b.ffi.new("char[]", 4096)
        if self.b.lib.darshan_log_get_exe(self.handle, buf) < 0:
            raise ValueError("executable record unreadable")
        return self.b.ffi.string(buf).decode("utf-8", "replace")

    def mounts(self) -> list[tuple[str, str]]:
        ffi, lib = self.b.ffi, self.b.lib
        mnts = ffi.new("struct darshan_mnt_info **")
        cnt = ffi.new("int *")
        if lib.darshan_log_get_mounts(self.handle, mnts, cnt) < 0:
            raise ValueError("mount table unreadable")
        out = [(_text(ffi, mnts[0][i].mnt_path), _text(ffi, mnts[0][i].mnt_type))
               for i in range(cnt[0])]
        lib.darshan_free(mnts[0])
        return out

    def modules(self) -> dict[str, dict[str, Any]]:
        ffi, lib = self.b.ffi, self.b.lib
        mods = ffi.new("struct darshan_mod_info **")
        cnt = ffi.new("int *")
        lib.darshan_log_get_modules(self.handle, mods, cnt)
        out = {_text(ffi, mods[0][i].name, "strict"): {
            "len": mods[0][i].len, "ver": mods[0][i].ver, "idx": mods[0][i].idx,
            "partial_flag": bool(mods[0][i].partial_flag)} for i in range(cnt[0])}
        lib.darshan_free(mods[0])
        return out

    def name_map(self, free: bool = True) -> tuple[bytes, str]:
        """The name records: their ids (native 64-bit integers, as bytes) and their names
        joined by NUL (a C string holds none), in the log's order. The records' array is read
        whole (the ids as one strided view, the name pointers as one list) and the names
        decoded as one string: no cdata struct, decode and dict store per name (a 64,000-file
        log: 0.2 s of CPU less). ``free`` False: the names libdarshan-util allocated are left
        to a process that exits right after (a call each: 25 ms on 64,000 names)."""
        ffi, lib = self.b.ffi, self.b.lib
        recs = ffi.new("struct darshan_name_record **")
        cnt = ffi.new("int *")
        lib.darshan_log_get_name_records(self.handle, recs, cnt)  # void: no status to read
        n = int(cnt[0])
        if n <= 0:
            if recs[0] != ffi.NULL:
                lib.darshan_free(recs[0])
            return b"", ""
        # struct darshan_name_record is {uint64 id; char *name}: read as pointers, every
        # record's second is its name (the ids, read as pointers, are never followed)
        size = ffi.sizeof("struct darshan_name_record")
        step = size // ffi.sizeof("char *")
        at = ffi.offsetof("struct darshan_name_record", "name") // ffi.sizeof("char *")
        # a memoryview, not numpy: the forked reader runs without numpy (darshan.py)
        ids = memoryview(ffi.buffer(recs[0], n * size)).cast("Q")[0::step].tobytes()
        ptrs = ffi.unpack(ffi.cast("char **", recs[0]), step * n)[at::step]
        if ffi.NULL in ptrs:
            raise LibraryFault(f"name record {ptrs.index(ffi.NULL)} has no name")
        # A C string holds no NUL: joined by NUL, decoded once and split again, each name
        # is what its own decode gives (an invalid sequence is never merged with a NUL).
        names = b"\0".join(map(ffi.string, ptrs)).decode("utf-8", "replace")
        if free:
            for ptr in ptrs:
                lib.darshan_free(ptr)
        lib.darshan_free(recs[0])
        return ids, names

    def records(self, idx: int, size: int) -> tuple[bytearray, bool]:
        """All records of module ``idx`` as raw struct bytes; ``ok`` False on a read error."""
        ffi, lib = self.b.ffi, self.b.lib
        out = bytearray()
        buf = ffi.new("void **")
        get, handle = lib.darshan_log_get_record, self.handle
        rc = get(handle, idx, buf)
        if rc > 0:
            # libdarshan-util fills the record it allocated on the first call again on each
            # later one (a module's get_record allocates only when *buf is NULL): one view
            # of it, copied per record (a new view per record cost 60 ms on 64,000 files)
            first = buf[0]
            view = ffi.buffer(first, size)
            out += view
            while (rc := get(handle, idx, buf)) > 0:
                out += view
            if buf[0] != first:
                raise LibraryFault(f"module {idx}: libdarshan-util moved its record buffer")
        if buf[0] != ffi.NULL:
            lib.darshan_free(buf[0])
        return out, rc == 0

    def lustre(self, idx: int, osts: dict[int, tuple[int, ...]] | None = None
               ) -> dict[int, tuple[int, int]]:
        """Record id -> (stripe size, stripe count) of the first layout component; with
        ``osts``, also fills record id -> the OST indices the file is striped over."""
        ffi, lib = self.b.ffi, self.b.lib
        names = counter_names(self.b, "LUSTRE_COMP")
        i_size = names.index("LUSTRE_COMP_STRIPE_SIZE")
        i_count = names.index("LUSTRE_COMP_STRIPE_COUNT")
        out: dict[int, tuple[int, int]] = {}
        while True:
            # A fresh buffer per record: Lustre records vary in size (components, OST lists).
            buf = ffi.new("void **")
            if lib.darshan_log_get_record(self.handle, idx, buf) <= 0:
                break
            rec = ffi.cast("struct darshan_lustre_record **", buf)[0]
            if rec.num_comps > 0:
                c = rec.comps[0].counters
                out[int(rec.base_rec.id)] = (int(c[i_size]), int(c[i_count]))
            if osts is not None and rec.num_stripes > 0:
                osts[int(rec.base_rec.id)] = tuple(int(rec.ost_ids[k])
                                                   for k in range(int(rec.num_stripes)))
            lib.darshan_free(buf[0])
        return out

    def dxt(self, idx: int, limit: int) -> tuple[list[Any], dict[int, str], bool, bool]:
        """DXT records of module ``idx``: per record (rank, record id, write count, segment
        rows as a structured numpy array), the host of each rank, whether ``limit``
        segments were reached (the rest is not read), and whether libdarshan-util failed on
        a record (a section cut short or damaged, or a DXT format newer than it reads: what
        was read before is returned).

        A record's buffer holds its header, then its write segments, then its read segments
        (``struct segment_info``: offset, length, start, end), as pydarshan reads it.
        """
        import numpy as np  # deferred: numpy only when the numbers are computed

        ffi, lib = self.b.ffi, self.b.lib
        head = ffi.sizeof("struct dxt_file_record")
        seg = np.dtype([("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])
        out: list[Any] = []
        hosts: dict[int, str] = {}
        total = 0
        while True:
            # A fresh buffer per record: DXT records vary in size.
            buf = ffi.new("void **")
            got = lib.darshan_log_get_record(self.handle, idx, buf)
            if got <= 0:
                return out, hosts, False, got < 0
            try:
                rec = ffi.cast("struct dxt_file_record *", buf[0])
                w, r = int(rec.write_count), int(rec.read_count)
                rank = int(rec.base_rec.rank)
                hosts.setdefault(rank, ffi.string(rec.hostname).decode("utf-8", "replace"))
                n = min(w + r, max(limit - total, 0))
                rows = np.frombuffer(ffi.buffer(ffi.cast("char *", buf[0]) + head, n * 32),
                                     dtype=seg).copy()
                out.append((rank, int(rec.base_rec.id), min(w, n), rows))
                total += n
            finally:
                lib.darshan_free(buf[0])
            if total >= limit:
                return out, hosts, True, False
