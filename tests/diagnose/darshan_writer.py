"""Write Darshan logs with libdarshan-util's own write API (the library pydarshan's wheel
bundles): ``darshan_log_create``, ``darshan_log_put_job/exe/mounts/namehash/mod``,
``darshan_log_close``, as darshan-convert uses them. The bytes on disk are the library's,
so a test log is a real log of the current format, not an imitation of it.

pydarshan declares none of the write functions, so they are declared here (a separate cffi
handle on the same library file). ``darshan_log_put_namehash`` walks a uthash table with
``HASH_ITER``, which only follows each entry's ``hh.next``: a linked list of
``darshan_name_record_ref`` entries is enough. Record structs are laid out with the sizes and
offsets of pydarshan's declarations (``iolab.sources.dutil.binding``).
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iolab.sources.dutil import MODULE_NAMES, STRUCTS, binding, counter_names

_CDEF = """
typedef struct { void *tbl; void *prev; void *next; void *hh_prev; void *hh_next; void *key;
                 unsigned keylen; unsigned hashv; } iolab_ut_hash_handle;
struct iolab_name_ref { void *name_record; iolab_ut_hash_handle hlink; };
struct iolab_job { int64_t uid; int64_t start_time_sec; int64_t start_time_nsec;
                   int64_t end_time_sec; int64_t end_time_nsec; int64_t nprocs; int64_t jobid;
                   char metadata[1024]; };
struct iolab_mnt { char mnt_type[3015]; char mnt_path[3015]; };
void *darshan_log_create(const char *name, int comp_type, int partial_flag);
int darshan_log_put_job(void *fd, struct iolab_job *job);
int darshan_log_put_exe(void *fd, char *buf);
int darshan_log_put_mounts(void *fd, struct iolab_mnt *mnts, int count);
int darshan_log_put_namehash(void *fd, struct iolab_name_ref *hash);
int darshan_log_put_mod(void *fd, int mod_id, void *buf, int size, int ver);
void darshan_log_close(void *fd);
"""
# Module format versions written by Darshan 3.5 (as its logs carry them).
VERSIONS = {"POSIX": 4, "MPI-IO": 3, "STDIO": 2, "DXT_POSIX": 1, "DXT_MPIIO": 2, "LUSTRE": 2}
ZLIB = 0


@dataclass
class Rec:
    """One record: counters by Darshan name (missing ones are 0)."""

    module: str
    path: str
    rank: int
    counters: dict[str, float] = field(default_factory=dict)


@dataclass
class Dxt:
    """One DXT record: (offset, length, start s, end s) per write and per read."""

    module: str  # DXT_POSIX or DXT_MPIIO
    path: str
    rank: int
    host: str
    writes: list[tuple[int, int, float, float]] = field(default_factory=list)
    reads: list[tuple[int, int, float, float]] = field(default_factory=list)


@dataclass
class Lustre:
    """One LUSTRE record (format 2, Darshan 3.4+): one layout component and its OST list."""

    path: str
    stripe_size: int
    stripe_count: int
    rank: int = -1
    module: str = "LUSTRE"


def _lustre_bytes(r: Lustre) -> bytes:
    """The record as darshan_log_put_lustre_record writes it: the fixed part (id, rank,
    num_comps, num_stripes; no pointers), then the components, then the OST ids."""
    ffi = binding().ffi
    head = np.zeros(4, dtype="<i8")
    head[0] = np.array([record_id(r.path)], dtype="<u8").view("<i8")[0]
    head[1:4] = (r.rank, 1, r.stripe_count)
    comp = bytearray(ffi.sizeof("struct darshan_lustre_component"))
    np.frombuffer(comp, dtype="<i8", count=7)[:] = (
        r.stripe_size, r.stripe_count, 0, 0, 0, -1, 0)  # size, count, pattern, flags, extent
    osts = np.arange(r.stripe_count, dtype="<i8")
    return head.tobytes() + bytes(comp) + osts.tobytes()


def _writer() -> tuple[Any, Any]:
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(_CDEF)
    import darshan  # noqa: F401 - only to locate the bundled library next to the package

    pkg = Path(darshan.__file__).resolve().parent
    libs = sorted(glob.glob(str(pkg.parent / "darshan.libs" / "libdarshan-util*.so*")))
    return ffi, ffi.dlopen(libs[0] if libs else "libdarshan-util.so")


def record_id(path: str) -> int:
    """A stable 64-bit id per name (Darshan hashes the name; any unique id reads back)."""
    import hashlib

    return int.from_bytes(hashlib.sha1(path.encode()).digest()[:8], "little")


def _record_bytes(rec: Rec) -> bytes:
    b = binding()
    cnames = counter_names(b, rec.module)
    fnames = counter_names(b, rec.module, floats=True)
    size = b.ffi.sizeof(STRUCTS[rec.module])
    buf = bytearray(size)
    np.frombuffer(buf, dtype="<u8", count=1, offset=0)[0] = record_id(rec.path)
    np.frombuffer(buf, dtype="<i8", count=1, offset=8)[0] = rec.rank
    c = np.frombuffer(buf, dtype="<i8", count=len(cnames),
                      offset=b.ffi.offsetof(STRUCTS[rec.module], "counters"))
    f = np.frombuffer(buf, dtype="<f8", count=len(fnames),
                      offset=b.ffi.offsetof(STRUCTS[rec.module], "fcounters"))
    unknown = set(rec.counters) - set(cnames) - set(fnames)
    assert not unknown, f"not {rec.module} counters: {sorted(unknown)}"
    for name, v in rec.counters.items():
        if name in fnames:
            f[fnames.index(name)] = float(v)
        else:
            c[cnames.index(name)] = int(v)
    return bytes(buf)


def _dxt_bytes(d: Dxt) -> bytes:
    ffi = binding().ffi
    head = bytearray(ffi.sizeof("struct dxt_file_record"))
    np.frombuffer(head, dtype="<u8", count=1, offset=0)[0] = record_id(d.path)
    np.frombuffer(head, dtype="<i8", count=1, offset=8)[0] = d.rank
    host = d.host.encode()[:63]
    off = ffi.offsetof("struct dxt_file_record", "hostname")
    head[off:off + len(host)] = host
    np.frombuffer(head, dtype="<i8", count=2,
                  offset=ffi.offsetof("struct dxt_file_record", "write_count"))[:] = (
        len(d.writes), len(d.reads))
    seg = np.dtype([("o", "<i8"), ("n", "<i8"), ("s", "<f8"), ("e", "<f8")])
    return bytes(head) + np.array(d.writes + d.reads, dtype=seg).tobytes()


def write_log(out: Path, *, nprocs: int, run_time_s: float, exe: str,
              records: list[Rec], dxt: list[Dxt] | None = None,
              lustre: list[Lustre] | None = None,
              metadata: str = "lib_ver=3.5.0\n", partial: tuple[str, ...] = (),
              jobid: int = 4242, start: int = 1_700_000_000, uid: int = 1000,
              mounts: tuple[tuple[str, str], ...] = (("/scratch", "lustre"),)) -> Path:
    """Write a log at ``out`` (which must not exist) through libdarshan-util. ``partial``
    names modules marked partial (ran out of record memory), a bit per module id in the
    header as the runtime sets it."""
    ffi, lib = _writer()
    flag = sum(1 << MODULE_NAMES.index(m) for m in partial)
    fd = lib.darshan_log_create(str(out).encode(), ZLIB, flag)
    assert fd != ffi.NULL, f"darshan_log_create({out}) failed"
    keep: list[Any] = []  # cffi buffers alive until close
    try:
        job = ffi.new("struct iolab_job *")
        job.uid, job.nprocs, job.jobid = uid, nprocs, jobid
        job.start_time_sec, job.end_time_sec = start, start + int(run_time_s)
        job.end_time_nsec = int((run_time_s % 1) * 1e9)
        job.metadata = metadata.encode()[:1023]
        assert lib.darshan_log_put_job(fd, job) == 0
        assert lib.darshan_log_put_exe(fd, ffi.new("char[]", exe.encode())) == 0
        mnt = ffi.new("struct iolab_mnt[]", len(mounts))
        for i, (point, fstype) in enumerate(mounts):
            mnt[i].mnt_type, mnt[i].mnt_path = fstype.encode(), point.encode()
        assert lib.darshan_log_put_mounts(fd, mnt, len(mounts)) == 0
        names = sorted({r.path for r in records} | {d.path for d in dxt or []}
                       | {x.path for x in lustre or []})
        refs = ffi.new("struct iolab_name_ref[]", max(len(names), 1))
        for i, name in enumerate(names):
            rec = ffi.new("char[]", record_id(name).to_bytes(8, "little") + name.encode() + b"\0")
            keep.append(rec)
            refs[i].name_record = rec
            refs[i].hlink.next = ffi.addressof(refs, i + 1) if i + 1 < len(names) else ffi.NULL
        assert lib.darshan_log_put_namehash(fd, refs if names else ffi.NULL) == 0
        chunks = [(MODULE_NAMES.index(r.module), r.module, _record_bytes(r)) for r in records]
        chunks += [(MODULE_NAMES.index(d.module), d.module, _dxt_bytes(d)) for d in dxt or []]
        chunks += [(MODULE_NAMES.index("LUSTRE"), "LUSTRE", _lustre_bytes(x))
                   for x in lustre or []]
        for mod_id, mod, data in sorted(chunks, key=lambda c: c[0]):  # modules in id order
            buf = ffi.new("char[]", data)
            keep.append(buf)
            assert lib.darshan_log_put_mod(fd, mod_id, buf, len(data), VERSIONS[mod]) == 0
    finally:
        lib.darshan_log_close(fd)
    return out
