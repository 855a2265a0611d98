"""Darshan logs -> :class:`RawJob`, with pydarshan (its wheel bundles libdarshan-util).

Records are copied straight from libdarshan-util's structs into numpy columns
(:class:`RecordTable`): a 64,000-file log then costs a few arrays, not 64,000 dicts or
DataFrames (what makes Drishti slow and large). DXT traces (DXT_POSIX, DXT_MPIIO) are read
into one columnar :class:`TraceTable`, up to :data:`MAX_TRACE_SEGMENTS` operations (a longer
trace is marked truncated, and the model says it is partial).

Facts this loader handles (measured, Darshan 3.5 / pydarshan 3.5):
- Logs are closed deterministically (context manager), never by garbage collection: that
  deadlocked pydarshan with several logs open in one process.
- pandas is never imported (pydarshan's backend imports it at the top; see dutil).
- The wheel is built without bzip2: such logs are refused with a message saying so.
- libdarshan-util prints its own errors on stderr; they are silenced here and replaced by
  one :class:`UsageError` line.
- Lustre counters were renamed in 3.4.6 (``LUSTRE_COMP<n>_STRIPE_*``); pydarshan reads old
  logs into the new per-component shape, so only the new names are used here.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import gc
import io
import mmap
import os
import pickle
import select
import signal
import struct
import threading
import zlib
from collections.abc import Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from iolab.errors import UsageError
from iolab.model.raw import DXT_UNREADABLE, TRACE_MODULES, RawJob, RecordTable, TraceTable
from iolab.sources.dutil import (
    MODULE_NAMES,
    STRUCTS,
    Binding,
    LibraryFault,
    Log,
    binding,
    counter_names,
)

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where columns are built, not here: the forked reader reads, names and
# sends the records without it (0.15 s of its CPU), while diagnose's process imports numpy
# and the rules at the same time (start_darshan_read).

# Modules read into tables: dutil.STRUCTS; the others (DXT, HEATMAP, APMPI, APXC, BG/Q, DFS,
# DAOS) are noted as present but not needed by any rule.
_DARSHAN_MAGIC = 6567223
_MIN_LOG_BYTES = 64
_HEADER_341 = 32 + 65 * 16 + 64 * 4  # version, magic, flags, name map, module maps, versions
# Trace operations read at most: bounds the memory and time of a log with a huge DXT section
# (32 bytes per operation in the log, 41 as columns; a whole diagnosis of 480,000 traced
# operations peaked at 125 MB here, so ~230 MB at the limit); the rest is left out and the
# trace is said to be partial.
MAX_TRACE_SEGMENTS = 1_000_000


def _check_header(path: Path) -> None:
    """Refuse what libdarshan-util would fail on obscurely, with a message that says why."""
    try:
        with open(path, "rb") as fh:
            # the whole 3.41 header at once: the region check reads it from here, not from a
            # second open (a few per log count in triage's per-log CPU, issue 31)
            head = fh.read(_HEADER_341)
            size = os.fstat(fh.fileno()).st_size
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory; give the .darshan log files inside it") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied; check the file's read permission") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror}); check the path") from None
    if len(head) < 24 or not head.startswith(b"3."):
        raise UsageError(
            f"{path} is not a Darshan log (no Darshan 3.x header); give a .darshan file"
        )
    magic_le, comp_le = struct.unpack_from("<Qi", head, 8)
    magic_be, comp_be = struct.unpack_from(">Qi", head, 8)
    if magic_le == _DARSHAN_MAGIC:
        comp = comp_le
    elif magic_be == _DARSHAN_MAGIC:
        comp = comp_be
    else:
        raise UsageError(f"{path} is not a Darshan log (bad magic number); give a .darshan file")
    if comp == 1:
        raise UsageError(
            f"{path} is bzip2-compressed, which pydarshan's wheel cannot read (built without "
            "bzip2); convert it with darshan-convert (zlib) from a full Darshan install"
        )
    if size < _MIN_LOG_BYTES:
        raise UsageError(f"{path} is truncated ({size} bytes); the log is incomplete")
    order = "<" if magic_le == _DARSHAN_MAGIC else ">"
    _check_region_map(path, size, order, head, zlib_log=comp == 0)
    if head.startswith(b"3.41"):
        _check_regions(path, size, order, head)


# Where each format's header maps its regions: (byte of the name map, module entries).
_REGION_MAPS = {b"3.41": (32, 64), **{v: (24, 16) for v in (b"3.00", b"3.01", b"3.02", b"3.10",
                                                            b"3.20", b"3.21")}}


def _check_region_map(path: Path, size: int, order: str, head: bytes, zlib_log: bool) -> None:
    """Refuse a header whose region map no writer makes: Darshan writes the name map and the
    module regions one after the other up to the file's end, so a gap, an overlap or a last
    region that ends before the file does means an entry is damaged. A zeroed entry reads as
    "module absent", and libdarshan-util then reads the log without it: counters silently
    missing (256 zeroed bytes in the header gave a diagnosis with no POSIX I/O, exit 0).
    The job region (zlib, unmapped) comes first, right after the header."""
    layout = _REGION_MAPS.get(head[:4])  # ``head``: the header _check_header read
    if layout is None:
        return  # a format whose header iolab does not know: libdarshan-util reads it
    start, mods = layout
    header_len = start + 16 * (mods + 1) + 4 * mods
    if len(head) < header_len:
        return  # a header cut short: libdarshan-util (or _check_regions) says so
    maps = struct.unpack_from(f"{order}{2 * (mods + 1)}Q", head, start)
    regions = sorted((off, ln) for off, ln in zip(maps[0::2], maps[1::2]) if ln)
    job_end = None
    if zlib_log:
        with open(path, "rb") as fh:
            fh.seek(header_len)
            job_end = _job_region_end(fh, header_len)
    if job_end is None and not regions:
        return
    ends_at = regions[0][0] if job_end is None else job_end
    for off, ln in regions:
        if off != ends_at:
            where = (f"leaves bytes {ends_at}-{off} to no module" if off > ends_at else
                     f"has two regions over byte {off}")
            raise UsageError(f"{path} has a damaged header (its region map {where}); it is "
                             "not a readable Darshan log: use an undamaged copy")
        ends_at = off + ln
    if ends_at < size:
        raise UsageError(f"{path} has a damaged header (its region map ends at byte {ends_at} "
                         f"of {size}: the regions after it are unmapped); it is not a "
                         "readable Darshan log: use an undamaged copy")


def _job_region_end(fh: BinaryIO, header_len: int) -> int | None:
    """Where the log's job region (one zlib stream right after the header, where ``fh``
    stands) ends; ``None`` when it does not end within its first MiB or is not zlib (damaged:
    libdarshan-util says how). Read 16 KiB at a time: a job region is rarely more."""
    inflate = zlib.decompressobj()
    read = 0
    while not inflate.eof and read < 1 << 20:
        chunk = fh.read(16 << 10)
        if not chunk:
            return None
        read += len(chunk)
        try:
            inflate.decompress(chunk)
        except zlib.error:
            return None
    return header_len + read - len(inflate.unused_data) if inflate.eof else None


def _check_regions(path: Path, size: int, order: str, head: bytes) -> None:
    """Format 3.41 header: name map at byte 32, then 64 module maps of (offset, length).

    A log cut inside a region that iolab does not read (HEATMAP, DXT) would otherwise load
    without complaint; a cut anywhere is reported, with the size the header expects. A cut
    only in regions no counter comes from (DXT, HEATMAP, ...) keeps the log: the loader
    notes the trace it cannot read (cut_regions).
    """
    cut = cut_regions(path, size, order, head)
    if not cut:
        return
    # Kept only when the cut is in a trace and what follows it (no counter region, and no
    # cut of an unread module alone: a log cut by a byte is still refused).
    needed = {m: e for m, e in cut.items() if m not in TRACE_MODULES and m not in _UNREAD}
    if not any(m in TRACE_MODULES for m in cut):
        needed = cut
    end = max(e for e in cut.values())
    if end > max(size, 1) * 1024:  # a region map no writer makes: damaged, not cut short
        raise UsageError(f"{path} has a damaged header (its region map points far past the "
                         f"file's {size} bytes); it is not a readable Darshan log")
    if needed:
        raise UsageError(f"{path} is truncated ({size} of {end} bytes); the log is incomplete")


# Modules iolab reads nothing from (present, noted): a cut in them loses nothing iolab uses.
_UNREAD = ("BG/Q", "MDHIM", "APXC", "APMPI", "HEATMAP", "DFS", "DAOS")


def cut_regions(path: Path, size: int | None = None, order: str | None = None,
                head: bytes | None = None) -> dict[str, int]:
    """The regions of a format 3.41 log that end past the file's end: module name (or
    "names" for the name map) -> the byte the header says the region ends at. Empty for
    another format (libdarshan-util itself finds a cut there) or a whole file. ``head``:
    the file's first bytes, already read by the caller (its first _HEADER_341, or all of
    a shorter file)."""
    size = path.stat().st_size if size is None else size
    if head is None:
        with open(path, "rb") as fh:
            head = fh.read(_HEADER_341)
    if not head.startswith(b"3.41"):
        return {}
    if len(head) < _HEADER_341:
        raise UsageError(f"{path} is truncated ({size} bytes, the header alone is "
                         f"{_HEADER_341}); the log is incomplete")
    if order is None:
        order = "<" if struct.unpack_from("<Q", head, 8)[0] == _DARSHAN_MAGIC else ">"
    maps = struct.unpack_from(f"{order}{2 * 65}Q", head, 32)
    names = ("names",) + MODULE_NAMES + tuple(f"module{i}" for i in range(len(MODULE_NAMES),
                                                                         64))
    return {names[i]: off + ln for i, (off, ln) in enumerate(zip(maps[0::2], maps[1::2]))
            if ln and off + ln > size}


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence libdarshan-util's own stderr lines (C level, fd 2) for the duration."""
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 (daemon): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# Where a module's record struct keeps its counters and floating counters, and its size:
# libdarshan-util's layout, read by the reader and sent with the bytes (the parent of a
# forked reader then needs no cffi).
Layout = tuple[int, int, int]


def _layout(b: Binding, mod: str) -> Layout:
    struct_name = STRUCTS[mod]
    return (b.ffi.offsetof(struct_name, "counters"), b.ffi.offsetof(struct_name, "fcounters"),
            b.ffi.sizeof(struct_name))


@functools.lru_cache(maxsize=64)  # a few structs a process: built once, not twice a module a log
def _record_dtype(layout: Layout, ncnt: int, nfcnt: int) -> np.dtype:
    """A numpy dtype laid out exactly like one libdarshan-util record struct."""
    import numpy as np  # deferred: see the imports

    fields: Any = {
        "names": ["id", "rank", "counters", "fcounters"],
        "formats": ["<u8", "<i8", ("<i8", (ncnt,)), ("<f8", (nfcnt,))],
        "offsets": [0, 8, layout[0], layout[1]],
        "itemsize": layout[2],
    }
    return np.dtype(fields)


def _set_columns(t: RecordTable, layout: Layout, raw: bytearray | memoryview) -> None:
    """The table's columns: zero-copy views of its module's raw record bytes."""
    import numpy as np  # deferred: see the imports

    dtype = _record_dtype(layout, len(t.counter_names), len(t.fcounter_names))
    arr = np.frombuffer(raw, dtype=dtype)
    # Field views of the structured array: no copy of the 704-byte POSIX records, which is
    # what keeps a 64,000-file log near 45 MB.
    t.record_ids, t.ranks, t.counters, t.fcounters = (
        arr["id"], arr["rank"], arr["counters"], arr["fcounters"])


def _read_table(log: Log, mod: str, idx: int, path: Path, columns: bool
                ) -> tuple[RecordTable, bytearray, Layout] | None:
    """A module's records: its table (with its columns when ``columns``), raw bytes and
    layout; None when it has none."""
    layout = _layout(log.b, mod)
    raw, ok = log.records(idx, layout[2])
    if not ok:
        raise UsageError(f"{path}: the {mod} records are corrupt or truncated; the log is "
                         "incomplete")
    if not raw:
        return None
    table = RecordTable(module=mod, counter_names=counter_names(log.b, mod),
                        fcounter_names=counter_names(log.b, mod, floats=True),
                        record_ids=None, ranks=None, counters=None, fcounters=None)
    if columns:
        _set_columns(table, layout, raw)
    return table, raw, layout


def _set_paths(tables: Iterable[RecordTable], name_ids: bytes, names: str) -> None:
    """Each table's record id -> name, its distinct ids ascending, from the log's name map
    (Log.name_map: ids as bytes, names joined by NUL): "" for an id the map lacks, the last
    name of an id named twice (as a dict of the map gives), one string object per name in
    every table. Sorted and matched in numpy, by the process that has it (the forked reader
    sends the map as it is): a dict lookup per record id took 90 ms on 64,000 files."""
    import numpy as np  # deferred: see the imports

    from iolab.model.tables import unique_values

    ids = np.frombuffer(name_ids, dtype="=u8")
    # the names, then "" for the ids the map lacks: picked by index in C (itemgetter), not
    # by a comprehension (20 ms on 64,000 names)
    name_list = [*names.split("\0"), ""] if ids.size else [""]
    order = np.argsort(ids, kind="stable")  # among equal ids the last is the rightmost
    ordered = ids[order]
    for t in tables:
        want = unique_values(t.record_ids)
        rows = np.full(want.size, ids.size, dtype=np.intp)  # "": not in the map
        if ordered.size:
            at = np.maximum(np.searchsorted(ordered, want, side="right") - 1, 0)
            found = ordered[at] == want
            rows[found] = order[at[found]]
        picked = itemgetter(*rows.tolist())(name_list) if rows.size > 1 else (
            [name_list[int(r)] for r in rows])
        t.paths = dict(zip(want.tolist(), picked))


def _job_fields(job: dict[str, Any], exe: str) -> dict[str, Any]:
    start = job["start_time_sec"] + job.get("start_time_nsec", 0) / 1e9
    end = job["end_time_sec"] + job.get("end_time_nsec", 0) / 1e9
    return {
        "nprocs": int(job["nprocs"]),
        "start_time": float(start),
        "end_time": float(end),
        "run_time_s": max(float(job.get("run_time") or (end - start)), 0.0),
        "exe": exe,
        "jobid": str(job.get("jobid", "")),
        "uid": int(job["uid"]),
        "format_version": str(job.get("log_ver", "")),
        "metadata": {str(k): str(v) for k, v in job.get("metadata", {}).items()},
    }


def load_darshan_log(path: str | os.PathLike[str], *, isolate: bool = True,
                     limit_s: float | None = None) -> RawJob:
    """Read one Darshan log. Raises :class:`UsageError` (one line) on anything unusable.

    libdarshan-util dereferences region offsets of a truncated log without checking them and
    dies with SIGSEGV (measured: a log cut at 500 bytes; a damaged name map). So by default
    the reading happens in a forked child that sends the RawJob back; a crash becomes a
    one-line error, not a dead process. ``isolate=False`` reads in this process (no fork,
    some 60 ms less a log): only for a process whose death costs nothing but its work, such
    as triage's pool workers and Dask tasks, which read a batch again with the fork when
    one dies (iolab.triage.scale). ``limit_s``: the forked reader is killed when it has not
    answered in that many seconds (a log libdarshan-util loops on, a file system that stopped
    answering), one line said; none: waited for (diagnose's user can press Ctrl-C).
    """
    return start_darshan_read(path, isolate=isolate, limit_s=limit_s).result()


def start_darshan_read(path: str | os.PathLike[str], *, isolate: bool = True,
                       limit_s: float | None = None) -> PendingRead:
    """:func:`load_darshan_log` begun: the checks made (UsageError), the forked reader
    started; its ``result()`` is the RawJob. The reader needs neither numpy nor the model, so
    ``iolab diagnose`` imports them meanwhile (on two cores, a 64,000-file log's ~0.3 s)."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file; check the path to the Darshan log")
    _check_header(p)
    if not isolate or not hasattr(os, "fork") or os.environ.get("IOLAB_DIAGNOSE_NO_FORK"):
        return PendingRead(p, limit_s)  # read by result(), in this process
    # pydarshan's presence is checked by the reader (its cffi binding is the reader's alone)
    rfd, wfd = os.pipe()
    records = _memory_file()
    try:
        pid = _fork_reader(p, rfd, wfd, records)
    except BaseException:
        os.close(rfd)
        if records is not None:
            os.close(records)
        raise
    return PendingRead(p, limit_s, (pid, rfd, records))


def _binding() -> Binding:
    try:
        return binding()
    except ImportError as exc:
        raise UsageError(f"pydarshan is not installed ({exc}); run: pip install darshan") from None


# pydarshan deadlocked with several logs open in one process: in-process reads take turns.
_IN_PROCESS = threading.Lock()


class PendingRead:
    """A log being read (:func:`start_darshan_read`); ``reader``: the forked reader's pid, the
    pipe's read end and the memory file (None: read in this process by ``result``)."""

    def __init__(self, p: Path, limit_s: float | None,
                 reader: tuple[int, int, int | None] | None = None) -> None:
        self.path, self.limit_s, self.reader = p, limit_s, reader

    def result(self) -> RawJob:
        """The job read (UsageError: one line on anything unusable); called once."""
        if self.reader is None:
            with _IN_PROCESS:  # one log open at a time in a process (a threaded Dask worker)
                return _load_direct(self.path)[0]
        pid, rfd, records = self.reader
        self.reader = None
        try:
            return _collect(self.path, self.limit_s, pid, rfd, records)
        finally:
            if records is not None:
                os.close(records)

    def cancel(self) -> None:
        """Stop a reader whose result is no longer wanted (the caller failed meanwhile)."""
        if self.reader is None:
            return
        pid, rfd, records = self.reader
        self.reader = None
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for fd in (rfd, records):
            if fd is not None:
                os.close(fd)


def _memory_file() -> int | None:
    """A file in memory for the record bytes the reader sends (Linux): the parent maps it
    instead of reading 45 MB from the pipe into a new buffer (a 64,000-file log: ~50 ms of
    CPU less). None where there is none: the bytes then follow the job on the pipe."""
    try:
        return os.memfd_create("iolab-records", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        return None


def _fork_reader(p: Path, rfd: int, wfd: int, records: int | None) -> int:
    """The reader's pid: a forked child that reads the log and sends it (_send)."""
    try:
        pid = os.fork()
    except OSError:
        os.close(wfd)
        raise
    if pid == 0:  # child: load, send, exit without running the parent's cleanup
        # A crash here is expected on some corrupt logs and reported by the parent as one
        # line; a fault handler (pytest, PYTHONFAULTHANDLER) would print a traceback too.
        faulthandler.disable()
        # No collection in a reader that lives one log: a full one walks every object the
        # parent had, copying each page it touches (copy-on-write).
        gc.disable()
        os.close(rfd)
        code = 0
        # pydarshan's cleanup of a log it failed to open prints on fd 2 after the fact.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        with os.fdopen(wfd, "wb") as fh:
            try:
                code = _send(fh, p, records)
            except BaseException:  # noqa: BLE001 - the parent sees the short read
                code = 1
        os._exit(code)
    os.close(wfd)
    return pid


def _collect(p: Path, limit_s: float | None, pid: int, rfd: int, records: int | None
             ) -> RawJob:
    """The forked reader's answer: its job, or one line for its error, crash or hang."""
    # The child writes only once the log is read: nothing to read by the limit is a reader
    # that hangs. Killed (SIGKILL reaches a stopped or blocked process too) and said so.
    if limit_s is not None and not _readable_within(rfd, limit_s):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(rfd)
        raise UsageError(f"{p}: {hang_reason(limit_s)}")
    try:
        with os.fdopen(rfd, "rb") as fh:
            kind, value = _receive(fh, records)
    except (EOFError, pickle.UnpicklingError, ValueError):
        kind, value = "crash", None
    _, status = os.waitpid(pid, 0)
    if kind == "crash" or not os.WIFEXITED(status):
        raise UsageError(f"{p}: {_crash_reason(status)}")
    if kind == "ok":
        assert isinstance(value, RawJob)
        return value
    if kind == "usage":
        raise UsageError(value)
    raise UsageError(f"{p}: cannot read this log ({value}); it is corrupt or truncated")


# A damaged log breaks libdarshan-util's heap; whether the reader then touches unmapped memory
# (SIGSEGV) or glibc finds its heap broken first (SIGABRT) depends on the heap of the process
# that forked the reader, not on the log (measured on one damaged name map: 11 in a fresh
# process, 6 after one good log was read in it). So these signals are one reason, without
# the number: a log's row is the same whichever process of triage read it (issue #31).
_FAULT_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL,
                            signal.SIGFPE})


def _readable_within(fd: int, limit_s: float) -> bool:
    """Data or the writer's end (a crash closes it) on ``fd`` within the limit (poll, not
    select: any fd number)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(max(int(limit_s * 1000), 1)))


def hang_reason(limit_s: float) -> str:
    """Why a log's reader was stopped: the same words from the fork and from triage's pool."""
    return (f"reading this log did not finish in {limit_s:g} s (libdarshan-util looping on "
            "a damaged log, or its file system not answering); the reader was stopped")


def _crash_reason(status: int) -> str:
    """Why a reading child gave no answer, from its wait status (the same for the same log)."""
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    if sig == 0 or sig in _FAULT_SIGNALS:
        return ("libdarshan-util crashed reading this log (a memory fault); it is corrupt or "
                "truncated")
    # Killed from outside (the OOM killer, a user): the number tells what happened.
    return f"libdarshan-util crashed reading this log (signal {sig}); it is corrupt or truncated"


def _send(fh: BinaryIO, p: Path, records: int | None = None) -> int:
    """Child side: the job without its record bytes (pickled), then the raw bytes as they are
    (into ``records``, a memory file, before the job: the job on the pipe says all is there).

    Pickling the arrays would copy them; the raw struct bytes go unchanged and the parent
    rebuilds the same zero-copy views.
    """
    buffers: dict[str, tuple[bytearray, Layout]] = {}
    try:
        raw, buffers, name_map = _load_direct(p, exiting=True)  # tables without columns, names
        head: tuple[str, Any] = ("ok", (raw, [(m, len(b), layout)
                                              for m, (b, layout) in buffers.items()], name_map))
    except UsageError as exc:
        head = ("usage", str(exc))
    except BaseException as exc:  # noqa: BLE001 - any failure is reported to the parent
        head = ("error", f"{type(exc).__name__}: {exc}")
    if records is not None:
        with open(records, "wb", closefd=False) as out:
            for b, _ in buffers.values():
                out.write(b)
    pickle.dump(head, fh, protocol=pickle.HIGHEST_PROTOCOL)
    if records is None:
        for b, _ in buffers.values():
            fh.write(b)
    return 0


def _receive(fh: io.BufferedReader, records: int | None = None) -> tuple[str, Any]:
    kind, value = pickle.load(fh)
    if kind != "ok":
        return kind, value
    raw, sizes, name_map = value
    mapped = _mapped(records, sum(n for _, n, _ in sizes)) if records is not None else None
    at = 0
    for mod, n, layout in sizes:
        if mapped is not None:
            buf: Any = mapped[at:at + n]
            at += n
        else:
            buf = _read_exactly(fh, n)
        _set_columns(raw.tables[mod], layout, buf)
    _set_paths(raw.tables.values(), *name_map)
    return "ok", raw


def _mapped(records: int, size: int) -> memoryview | None:
    """The memory file's bytes, mapped copy-on-write (the arrays stay writable, as over a
    bytearray); None when nothing was sent."""
    if size == 0:
        return None
    if os.fstat(records).st_size < size:
        raise EOFError("short record data")
    return memoryview(mmap.mmap(records, size, flags=mmap.MAP_PRIVATE,
                                prot=mmap.PROT_READ | mmap.PROT_WRITE))


def _read_exactly(fh: io.BufferedReader, n: int) -> bytearray:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = fh.readinto(view[got:])
        if not k:
            raise EOFError("short record data")
        got += k
    return buf


def _load_direct(p: Path, exiting: bool = False
                 ) -> tuple[RawJob, dict[str, tuple[bytearray, Layout]], tuple[bytes, str]]:
    """The log read in this process, with each module's record bytes and layout and the
    name map; ``exiting``: by a reader that exits once it sent them (what libdarshan-util
    allocated for the names is then not freed name by name, and the tables' columns and
    names are left to the parent, which builds them from what is sent: _receive)."""
    _binding()
    with _quiet_stderr():
        try:
            log = Log(str(p))
        except RuntimeError:
            raise UsageError(f"{p}: libdarshan-util cannot open this log; it is corrupt or "
                             "truncated") from None
        with log:
            try:
                return _load_open(log, p, exiting)
            except LibraryFault:  # the same damage as a crash, without one (dutil.LibraryFault)
                raise UsageError(f"{p}: {_crash_reason(0)}") from None


def _load_open(log: Log, p: Path, exiting: bool = False
               ) -> tuple[RawJob, dict[str, tuple[bytearray, Layout]], tuple[bytes, str]]:
    try:
        fields = _job_fields(log.job(), log.exe())
        name_map = log.name_map(free=not exiting)
        mounts = log.mounts()
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{p}: the job or name records are corrupt ({exc}); the log is "
                         "incomplete") from None
    raw = RawJob(source="darshan", source_paths=[str(p)], mounts=mounts, **fields)
    buffers: dict[str, tuple[bytearray, Layout]] = {}
    dxt: dict[str, int] = {}
    for mod, info in log.modules().items():
        if info.get("partial_flag"):
            raw.partial_modules.append(mod)
            raw.partial_why[mod] = "Darshan ran out of record memory"
        if mod in STRUCTS:
            got = _read_table(log, mod, info["idx"], p, columns=not exiting)
            if got is not None:
                table, data, layout = got
                buffers[mod] = (data, layout)
                raw.tables[mod] = table
        elif mod == "LUSTRE":
            raw.stripes = log.lustre(info["idx"], raw.lustre_osts)
        elif mod in TRACE_MODULES:
            dxt[mod] = info["idx"]
        else:
            raw.unread_modules.append(mod)
            raw.notes.append(f"module {mod} present, not used by any rule")
    if dxt:
        _read_trace(log, dxt, raw, cut_regions(p))
    for mod in raw.partial_modules:
        raw.notes.append(f"{mod} data is partial: the module ran out of memory at run time, "
                         "so its counts are lower bounds")
    if not exiting:
        _set_paths(raw.tables.values(), *name_map)
    return raw, buffers, name_map


def _read_trace(log: Log, dxt: dict[str, int], raw: RawJob, cut: dict[str, int]) -> None:
    """DXT_POSIX then DXT_MPIIO into one TraceTable; the ranks' host names into rank_hosts.
    A section libdarshan-util cannot read (cut short, damaged, a newer DXT format) is one
    note; what was read of it before is kept and the trace marked partial."""
    import numpy as np  # deferred: see the imports (a reader of a traced log imports it)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in (
        "module", "rank", "record_id", "write", "offset", "length", "start_s", "end_s")}
    left = MAX_TRACE_SEGMENTS
    at_limit = False
    unreadable: list[str] = []  # per section that could not be read: which, and why
    kept = 0  # operations read before a failure
    damaged = False  # a section held impossible segments (left out)
    for code, mod in enumerate(TRACE_MODULES):
        if mod not in dxt or left <= 0:
            at_limit |= mod in dxt
            continue
        if mod in cut:  # a cut zlib stream: libdarshan-util would read past the file's end
            unreadable.append(f"{mod}: the log was cut short (its header maps the section to "
                              f"byte {cut[mod]}, the file ends at byte {log_size(raw)})")
            continue
        recs, hosts, limit_hit, failed = log.dxt(dxt[mod], left)
        at_limit |= limit_hit
        if failed:
            ver = log.modules().get(mod, {}).get("ver")
            unreadable.append(
                f"{mod}: libdarshan-util failed on its record {len(recs) + 1} (the section is "
                f"cut short or damaged, or its format, version {ver}, is newer than this "
                "libdarshan-util reads)")
            kept += sum(len(r[3]) for r in recs)
        for rank, host in hosts.items():
            raw.rank_hosts.setdefault(rank, host)
        if recs:
            _add_trace_rows(cols, code, recs)
            left -= sum(len(r[3]) for r in recs)
            why = _drop_damaged_rows(cols, raw)
            if why and failed:  # the same damage: one note
                unreadable[-1] += f"; {why[1]}"
                kept -= why[0]
            elif why:
                raw.notes.append(f"DXT trace damaged: {mod}: {why[1]}; the trace is partial, "
                                 "its figures come from the segments before the damage")
            damaged |= bool(why)
    if at_limit:
        raw.notes.append(f"DXT trace cut at {MAX_TRACE_SEGMENTS} operations (iolab's limit): "
                         "the trace is partial")
    if unreadable:
        raw.notes.append(_unreadable_note(unreadable, kept, any(len(c) for c in cols["rank"])))
    truncated = at_limit or damaged or bool(unreadable and cols["rank"])
    if not any(len(c) for c in cols["rank"]):
        return
    raw.trace_table = TraceTable(**{k: np.concatenate(v) for k, v in cols.items()},
                                 truncated=truncated)


def _add_trace_rows(cols: dict[str, list[np.ndarray]], code: int, recs: list[Any]) -> None:
    """One section's records as one chunk of each column: each record's rank, id and
    write flags repeated over its segments (was a few np.full per record: ~110 calls a
    DXT log in triage's per-log path, issue 31)."""
    import numpy as np  # deferred: see the imports
    ns = np.array([len(r[3]) for r in recs], dtype=np.int64)
    total = int(ns.sum())
    rows = np.concatenate([r[3] for r in recs])
    first = np.repeat(np.cumsum(ns) - ns, ns)  # each segment's record's first row
    cols["module"].append(np.full(total, code, dtype=np.int8))
    cols["rank"].append(np.repeat(np.array([r[0] for r in recs], dtype=np.int64), ns))
    cols["record_id"].append(np.repeat(np.array([r[1] for r in recs], dtype=np.uint64), ns))
    nws = np.repeat(np.array([r[2] for r in recs], dtype=np.int64), ns)
    cols["write"].append(np.arange(total) - first < nws)
    for col, field in (("offset", "offset"), ("length", "length"), ("start_s", "start"),
                       ("end_s", "end")):
        cols[col].append(rows[field])


def _drop_damaged_rows(cols: dict[str, list[np.ndarray]], raw: RawJob
                       ) -> tuple[int, str] | None:
    """Cut the section just added to ``cols`` at its first impossible segment (a time that is
    not a number, negative, past the run's end or ending before it starts; a length below
    zero; an offset below -1, MPI-IO's "unknown"; a rank outside the job): the number of
    segments left out and the words that say so (``None`` when every segment is possible).

    Damaged bytes in a compressed DXT section inflate to garbage from the damage on, and
    libdarshan-util reads that garbage as segments (it may fail only records later). Much of
    the garbage looks possible (tiny or zero times, small lengths), so everything from the
    first impossible segment on is distrusted, not only the impossible ones: the figures come
    from the operations before the damage, the trace marked partial."""
    import numpy as np  # deferred: see the imports
    st, en = cols["start_s"][-1], cols["end_s"][-1]
    rank = cols["rank"][-1]
    latest = raw.run_time_s + 1.0  # Darshan's job times can be whole seconds
    with np.errstate(invalid="ignore"):  # NaN compares false: caught by the isfinite term
        bad = ~(np.isfinite(st) & np.isfinite(en) & (st >= 0) & (en >= st) & (en <= latest))
    bad |= (cols["length"][-1] < 0) | (cols["offset"][-1] < -1)
    bad |= (rank < 0) | (rank >= max(raw.nprocs, 1))
    if not bad.any():
        return None
    first = int(bad.argmax())
    for col in cols.values():
        col[-1] = col[-1][:first]
    dropped = int(bad.size - first)
    return dropped, (f"{dropped} of the {bad.size} segments read are damaged (from segment "
                     f"{first + 1} on: times, lengths, offsets or ranks no run can have) and "
                     "left out")


def _unreadable_note(sections: list[str], kept_ops: int, any_read: bool) -> str:
    """One note for every DXT section that could not be read."""
    kept = ("the trace of the other sections is kept, partial" if any_read and not kept_ops
            else f"the {kept_ops} operations read before the failure are kept, the trace "
            "partial" if kept_ops else "the trace is left out")
    return (f"{DXT_UNREADABLE}: {'; '.join(sections)}; {kept}; the findings come from the "
            "counters (to trace the run again: `iolab profile --trace`, or Darshan with DXT "
            "in a format this libdarshan-util reads)")


def log_size(raw: RawJob) -> int:
    return Path(raw.source_paths[0]).stat().st_size

