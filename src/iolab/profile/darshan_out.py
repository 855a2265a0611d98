"""An iolab profile written as a real Darshan log (``.darshan``), through libdarshan-util's
own write API (``darshan_log_create``, ``_put_job``, ``_put_exe``, ``_put_mounts``,
``_put_namehash``, ``_put_mod``), so darshan-parser, pydarshan, darshan-job-summary, Drishti
and DXT Explorer read it.

The library is the one pydarshan ships (``darshan.libs/libdarshan-util*.so``) or finds; the
record layouts are Darshan's: a base record (id, rank), the module's integer counters in
Darshan's order, its floating-point counters (H5D also carries its file's record id). The
modules written are those iolab records that Darshan has: POSIX, MPI-IO, H5F, H5D, PnetCDF, STDIO
(iolab's own extra counters have no place in Darshan's records and are left out); a profile
recorded with ``--trace`` also gets its operations as DXT_POSIX and DXT_MPIIO records, so DXT
readers (and ``iolab diagnose`` of the .darshan) see the trace.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.model.raw import RawJob, RawRecord, TraceSegment

# (Darshan module id, record version this libdarshan-util writes, extra field before the
# counters): darshan-log-format.h of Darshan 3.4/3.5.
_MODULES: dict[str, tuple[int, int, bool]] = {
    "POSIX": (1, 4, False),
    "MPI-IO": (2, 3, False),
    "H5F": (3, 3, False),
    "H5D": (4, 2, True),
    "PNETCDF_FILE": (5, 3, False),
    "PNETCDF_VAR": (6, 1, True),
    "STDIO": (9, 2, False),
}

# DXT modules: (Darshan module id, record version), darshan-dxt-log-format.h. A record is a
# struct dxt_file_record (base record, shared_record, hostname[64], write_count, read_count)
# followed by its write segments, then its read segments (offset, length, start, end).
_DXT_MODULES: dict[str, tuple[int, int]] = {"DXT_POSIX": (10, 1), "DXT_MPIIO": (11, 2)}
_DXT_HEAD = 16 + 8 + 64 + 8 + 8
_DXT_SEGMENT = 32
_HOSTNAME = 64

_CDEF = """
typedef uint64_t darshan_record_id;
struct darshan_job {
    int64_t uid; int64_t start_time_sec; int64_t start_time_nsec; int64_t end_time_sec;
    int64_t end_time_nsec; int64_t nprocs; int64_t jobid; char metadata[1024];
};
struct darshan_mnt_info { char mnt_type[3015]; char mnt_path[3015]; };
struct darshan_name_record { darshan_record_id id; char name[1]; };
typedef struct UT_hash_handle {
    void *tbl; void *prev; void *next; void *hh_prev; void *hh_next; const void *key;
    unsigned keylen; unsigned hashv;
} UT_hash_handle;
struct darshan_name_record_ref { struct darshan_name_record *name_record; UT_hash_handle hlink; };
void *darshan_log_create(char *name, int comp_type, int partial_flag);
int darshan_log_put_job(void *fd, struct darshan_job *job);
int darshan_log_put_exe(void *fd, char *buf);
int darshan_log_put_mounts(void *fd, struct darshan_mnt_info *mnts, int count);
int darshan_log_put_namehash(void *fd, struct darshan_name_record_ref *hash);
int darshan_log_put_mod(void *fd, int mod_id, void *mod_buf, int mod_buf_sz, int ver);
void darshan_log_close(void *fd);
"""
_ZLIB = 0  # enum darshan_comp_type: DARSHAN_ZLIB_COMP


def _library() -> tuple[Any, Any]:
    """cffi and libdarshan-util, or UsageError saying how to get them."""
    try:
        import cffi  # deferred: the libdarshan-util binding only when a log is read or written
        import darshan  # deferred: pydarshan only when a log is read or written
    except ImportError as exc:
        raise UsageError("writing a .darshan log needs pydarshan (pip install darshan)") from exc
    wheel = Path(darshan.__file__).resolve().parent.parent / "darshan.libs"
    found = sorted(glob.glob(str(wheel / "libdarshan-util*.so*")))
    env = os.environ.get("IOLAB_DARSHAN_UTIL")
    path = env or (found[0] if found else "libdarshan-util.so")
    ffi = cffi.FFI()
    ffi.cdef(_CDEF)
    try:
        return ffi, ffi.dlopen(path)
    except OSError as exc:
        raise UsageError(
            f"libdarshan-util is not found ({path}); install pydarshan or set IOLAB_DARSHAN_UTIL"
        ) from exc


def _names(module: str) -> tuple[list[str], list[str]]:
    # deferred: pydarshan only when a log is read or written
    from darshan.backend import cffi_backend as cb

    return list(cb.counter_names(module)), list(cb.fcounter_names(module))


def _file_ids(job: RawJob, module: str) -> dict[str, int]:
    """The record ids of the files of a dataset or variable module's records."""
    file_mod = {"H5D": "H5F", "PNETCDF_VAR": "PNETCDF_FILE"}.get(module, "")
    table = job.tables.get(file_mod)
    return {r.path: r.record_id for r in table.rows()} if table is not None else {}


def _module_buffer(ffi: Any, module: str, recs: list[RawRecord], files: dict[str, int]) -> Any:
    """The module's records as Darshan's structs, one after another."""
    ints, floats = _names(module)
    extra = _MODULES[module][2]
    size = 16 + (8 if extra else 0) + 8 * len(ints) + 8 * len(floats)
    buf = ffi.new("char[]", size * len(recs))
    for k, r in enumerate(recs):
        at = k * size
        head = ffi.cast("uint64_t *", buf + at)
        head[0] = r.record_id & ((1 << 64) - 1)
        ffi.cast("int64_t *", buf + at)[1] = r.rank
        at += 16
        if extra:  # H5D, PNETCDF_VAR: the id of its file's record
            ffi.cast("uint64_t *", buf + at)[0] = files.get(r.path.rsplit(":", 1)[0], 0)
            at += 8
        c = ffi.cast("int64_t *", buf + at)
        for i, name in enumerate(ints):
            c[i] = int(r.counters.get(name, 0))
        f = ffi.cast("double *", buf + at + 8 * len(ints))
        for i, name in enumerate(floats):
            f[i] = float(r.fcounters.get(name, 0.0))
    return buf, size * len(recs)


def write_darshan(job: RawJob, target: str | Path) -> Path:
    """Write job as the Darshan log target (replaced if it exists); return its path."""
    ffi, lib = _library()
    target = Path(target)
    tmp = target.with_name(target.name + ".tmp")
    tmp.unlink(missing_ok=True)
    keep: list[Any] = []  # cffi objects must live until the log is closed
    fd = lib.darshan_log_create(str(tmp).encode(), _ZLIB, int(bool(job.partial_modules)))
    if fd == ffi.NULL:
        raise UsageError(f"cannot create the Darshan log {tmp}")
    try:
        _put_header(ffi, lib, fd, job, keep)
        recs = [r for r in job.rows() if r.module in _MODULES]
        _put_names(ffi, lib, fd, recs, keep)
        for module, (mod_id, ver, _) in sorted(_MODULES.items(), key=lambda kv: kv[1][0]):
            mine = [r for r in recs if r.module == module]
            if not mine:
                continue
            buf, size = _module_buffer(ffi, module, mine, _file_ids(job, module))
            keep.append(buf)
            if lib.darshan_log_put_mod(fd, mod_id, buf, size, ver) != 0:
                raise UsageError(f"libdarshan-util refused the {module} records of {target}")
        _put_trace(ffi, lib, fd, job, keep, target)
    finally:
        lib.darshan_log_close(fd)
    tmp.replace(target)
    return target


def _put_trace(ffi: Any, lib: Any, fd: Any, job: RawJob, keep: list[Any], target: Path) -> None:
    """The traced operations as DXT records: one record per (module, rank, file), its writes
    then its reads, each in the order traced."""
    by_record: dict[tuple[str, int, int], list[TraceSegment]] = {}
    for seg in job.segments():
        by_record.setdefault((seg.module, seg.rank, seg.record_id), []).append(seg)
    for module, (mod_id, ver) in _DXT_MODULES.items():
        keys = sorted(k for k in by_record if k[0] == module)
        if not keys:
            continue
        size = sum(_DXT_HEAD + _DXT_SEGMENT * len(by_record[k]) for k in keys)
        buf = ffi.new("char[]", size)
        at = 0
        for key in keys:
            at = _dxt_record(ffi, buf, at, key[1], key[2], by_record[key],
                             job.rank_hosts.get(key[1], ""))
        keep.append(buf)
        if lib.darshan_log_put_mod(fd, mod_id, buf, size, ver) != 0:
            raise UsageError(f"libdarshan-util refused the {module} records of {target}")


def _dxt_record(ffi: Any, buf: Any, at: int, rank: int, record_id: int,
                segs: list[TraceSegment], host: str) -> int:
    """One DXT record at offset at of buf; returns the offset after it."""
    writes = [s for s in segs if s.op == "write"]
    reads = [s for s in segs if s.op != "write"]
    ffi.cast("uint64_t *", buf + at)[0] = record_id & ((1 << 64) - 1)
    ints = ffi.cast("int64_t *", buf + at)
    ints[1] = rank
    ints[2] = 0  # shared_record: -1 marks a record Darshan reduced across ranks
    name = host.encode("utf-8", "replace")[:_HOSTNAME - 1]
    ffi.memmove(buf + at + 24, name, len(name))
    counts = ffi.cast("int64_t *", buf + at + 24 + _HOSTNAME)
    counts[0], counts[1] = len(writes), len(reads)
    at += _DXT_HEAD
    for seg in writes + reads:
        ffi.cast("int64_t *", buf + at)[0] = seg.offset
        ffi.cast("int64_t *", buf + at)[1] = seg.length
        ffi.cast("double *", buf + at)[2] = seg.start_s
        ffi.cast("double *", buf + at)[3] = seg.end_s
        at += _DXT_SEGMENT
    return at


def _mounts(job: RawJob) -> list[tuple[str, str]]:
    """(mount point, type): the job's own; for a profile made on this host, this host's table
    (iolab profiles do not carry it); else one ("/", "unknown") entry, since libdarshan-util
    loses the command line of a log without any mount."""
    if job.mounts:
        return list(job.mounts)
    import socket

    if job.hosts == [socket.gethostname()]:
        try:
            lines = Path("/proc/self/mounts").read_text().splitlines()
        except OSError:
            lines = []
        out = [(f[1], f[2]) for f in (ln.split() for ln in lines) if len(f) > 2]
        if out:
            return out
    return [("/", "unknown")]


def _put_header(ffi: Any, lib: Any, fd: Any, job: RawJob, keep: list[Any]) -> None:
    dj = ffi.new("struct darshan_job *")
    dj.uid = job.uid or 0
    dj.start_time_sec = int(job.start_time)
    dj.start_time_nsec = int((job.start_time % 1) * 1e9)
    dj.end_time_sec = int(job.end_time)
    dj.end_time_nsec = int((job.end_time % 1) * 1e9)
    dj.nprocs = job.nprocs
    dj.jobid = int(job.jobid) if job.jobid.isdigit() else 0
    meta = f"lib_ver=iolab ({job.format_version})\n".encode()[:1023]
    ffi.memmove(dj.metadata, meta, len(meta))
    if lib.darshan_log_put_job(fd, dj) != 0:
        raise UsageError("libdarshan-util refused the job header")
    exe = ffi.new("char[]", job.exe.encode("utf-8", "surrogateescape")[:4095] or b"?")
    if lib.darshan_log_put_exe(fd, exe) != 0:
        raise UsageError("libdarshan-util refused the command line")
    mounts = _mounts(job)
    mnts = ffi.new("struct darshan_mnt_info[]", len(mounts))
    for i, (point, fstype) in enumerate(mounts):
        p, t = point.encode()[:3014], fstype.encode()[:3014]
        ffi.memmove(mnts[i].mnt_path, p, len(p))
        ffi.memmove(mnts[i].mnt_type, t, len(t))
    keep.extend([dj, exe, mnts])
    if lib.darshan_log_put_mounts(fd, mnts, len(mounts)) != 0:
        raise UsageError("libdarshan-util refused the mount table")


def _put_names(ffi: Any, lib: Any, fd: Any, recs: list[RawRecord], keep: list[Any]) -> None:
    """The name records, as the hash table darshan_log_put_namehash walks (its app-order
    list: hlink.next from one entry to the next); each record is the id followed by the
    name's bytes and a NUL, as the log stores it."""
    names = {r.record_id & ((1 << 64) - 1): r.path for r in recs}
    refs = ffi.new("struct darshan_name_record_ref[]", max(len(names), 1))
    for i, (rid, path) in enumerate(sorted(names.items())):
        text = path.encode("utf-8", "surrogateescape")
        blob = ffi.new("char[]", 8 + len(text) + 1)
        ffi.cast("uint64_t *", blob)[0] = rid
        ffi.memmove(blob + 8, text, len(text))
        refs[i].name_record = ffi.cast("struct darshan_name_record *", blob)
        refs[i].hlink.next = ffi.addressof(refs, i + 1) if i + 1 < len(names) else ffi.NULL
        keep.append(blob)
    keep.append(refs)
    if lib.darshan_log_put_namehash(fd, refs if names else ffi.NULL) != 0:
        raise UsageError("libdarshan-util refused the file names")
