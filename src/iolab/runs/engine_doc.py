"""One typed reader of the engine's JSON document (``docs/engine-json.md``).

:func:`from_json` is the one entry: it reads a document as ``iolab-bench`` prints it, or as an
older engine wrote it into a results database, into frozen values. It never raises on a
missing or mistyped key: an older document lacks keys the engine added since (``tool.argv``,
``per_rank[].start_s``, ``summary.read_passes``, ``stats.n``, ``hints.unverified``, the
metadata plan, queue and stonewall records, ...), and a damaged stored row must still be shown.
A missing key reads as None (or an empty tuple / mapping for lists and objects); a value of
the wrong type reads as missing. Values are kept as the engine wrote them (an int stays an
int), so what the readers render is what the engine measured, byte for byte.

Adding a field: add it to the dataclass that owns it and read it in that class's ``_read``
below (``docs/contributing.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Union

Number = Union[int, float]
_EMPTY: Mapping[str, Any] = {}


# --- tolerant getters: the wrong type reads as missing -------------------------------------

def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else _EMPTY


def _num(v: Any) -> Number | None:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _strs(v: Any) -> tuple[str, ...]:
    return tuple(str(x) for x in _list(v))


def _opt_map(v: Any) -> Mapping[str, Any] | None:
    return v if isinstance(v, Mapping) else None


# --- the document's parts -----------------------------------------------------------------

@dataclass(frozen=True)
class Spread:
    """A per-rank spread of one step of a phase (``open_s``, ``xfer_s``, ``close_s``)."""

    min: Number | None = None
    max: Number | None = None

    @classmethod
    def _read(cls, v: Any) -> Spread:
        m = _map(v)
        return cls(_num(m.get("min")), _num(m.get("max")))


@dataclass(frozen=True)
class Stats:
    """Statistics over the repetitions (``summary.<op>.bw_bytes_per_s`` and the like);
    ``n`` is absent from documents older than the read passes."""

    min: Number | None = None
    median: Number | None = None
    max: Number | None = None
    mean: Number | None = None
    stddev: Number | None = None
    n: int | None = None

    @classmethod
    def _read(cls, v: Any) -> Stats:
        m = _map(v)
        return cls(min=_num(m.get("min")), median=_num(m.get("median")),
                   max=_num(m.get("max")), mean=_num(m.get("mean")),
                   stddev=_num(m.get("stddev")), n=_int(m.get("n")))


@dataclass(frozen=True)
class OpSummary:
    """``summary.<op>``: bandwidth, operations per second and time over the repetitions."""

    bw_bytes_per_s: Stats = field(default_factory=Stats)
    iops: Stats = field(default_factory=Stats)
    time_s: Stats = field(default_factory=Stats)

    @classmethod
    def _read(cls, v: Any) -> OpSummary:
        m = _map(v)
        return cls(Stats._read(m.get("bw_bytes_per_s")), Stats._read(m.get("iops")),
                   Stats._read(m.get("time_s")))


@dataclass(frozen=True)
class RankShare:
    """One rank's part of a phase (``per_rank[]``); start/end are from the phase's barrier."""

    rank: int | None
    host: str | None
    bytes: int | None
    ops: int | None
    open_s: Number | None
    xfer_s: Number | None
    close_s: Number | None
    start_s: Number | None
    end_s: Number | None

    @classmethod
    def _read(cls, v: Any) -> RankShare:
        m = _map(v)
        return cls(rank=_int(m.get("rank")), host=_str(m.get("host")),
                   bytes=_int(m.get("bytes")), ops=_int(m.get("ops")),
                   open_s=_num(m.get("open_s")), xfer_s=_num(m.get("xfer_s")),
                   close_s=_num(m.get("close_s")), start_s=_num(m.get("start_s")),
                   end_s=_num(m.get("end_s")))


@dataclass(frozen=True)
class Phase:
    """One phase of one repetition: a write or read pass, or a metadata operation (its
    ``iops`` is then the rate of that operation)."""

    repetition: int | None  # the index of the repetition it belongs to
    op: str | None
    read_pass: int | None  # "pass" as stored (None in a document without it)
    cache: str | None
    bytes: int | None
    ops: int | None
    time_s: Number | None
    bw_bytes_per_s: Number | None
    iops: Number | None
    open_s: Spread
    xfer_s: Spread
    close_s: Spread
    # per_rank as the document holds it, read on first use (a run of thousands of ranks
    # has thousands of entries a phase, and most readers never look at them)
    rank_rows: Sequence[Any] = field(repr=False)
    eviction: Mapping[str, Any] | None = None
    reorder_shift: int | None = None
    stonewall: Mapping[str, Any] | None = None
    queue: Mapping[str, Any] | None = None  # {"depth": N, "engine": "libaio"}
    # --md-warn: calls that failed while the phase went on, {"count": N, "first": text}
    warnings: Mapping[str, Any] | None = None

    @cached_property
    def per_rank(self) -> tuple[RankShare, ...]:
        """Each rank's part of the phase (``per_rank[]``), in the document's order."""
        return tuple(RankShare._read(r) for r in self.rank_rows if isinstance(r, Mapping))

    @property
    def pass_index(self) -> int:
        """The read pass, 0 for writes and for documents that do not say."""
        return self.read_pass or 0

    def rate(self, key: str) -> Number | None:
        """``bw_bytes_per_s`` or ``iops`` by name (the rate a plot or a sweep draws)."""
        return {"bw_bytes_per_s": self.bw_bytes_per_s, "iops": self.iops}.get(key)

    @classmethod
    def _read(cls, v: Any, repetition: int | None) -> Phase:
        m = _map(v)
        return cls(repetition, _str(m.get("op")), _int(m.get("pass")), _str(m.get("cache")),
                   _int(m.get("bytes")), _int(m.get("ops")), _num(m.get("time_s")),
                   _num(m.get("bw_bytes_per_s")), _num(m.get("iops")),
                   Spread._read(m.get("open_s")), Spread._read(m.get("xfer_s")),
                   Spread._read(m.get("close_s")), _list(m.get("per_rank")),
                   _opt_map(m.get("eviction")), _int(m.get("reorder_shift")),
                   _opt_map(m.get("stonewall")), _opt_map(m.get("queue")),
                   _opt_map(m.get("warnings")))


@dataclass(frozen=True)
class Repetition:
    index: int | None
    phases: tuple[Phase, ...]

    @classmethod
    def _read(cls, v: Any) -> Repetition:
        m = _map(v)
        index = _int(m.get("index"))
        return cls(index, tuple(Phase._read(p, index) for p in _list(m.get("phases"))
                                if isinstance(p, Mapping)))


@dataclass(frozen=True)
class Hints:
    """MPI-IO hints asked for and read back (``{}`` in the document for other APIs)."""

    requested: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, Any] = field(default_factory=dict)
    effective: Mapping[str, Any] = field(default_factory=dict)
    verifiable: bool | None = None  # False: the library only echoes (OMPIO)
    ignored: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()  # absent from documents older than it

    @classmethod
    def _read(cls, v: Any) -> Hints:
        m = _map(v)
        return cls(_map(m.get("requested")), _map(m.get("sources")),
                   _map(m.get("effective")), _bool(m.get("verifiable")),
                   _strs(m.get("ignored")), _strs(m.get("unverified")))

    @property
    def not_applied(self) -> tuple[str, ...]:
        """The requested keys the run cannot show it used: those the library only echoed
        when it cannot be verified, else those it ignored."""
        return self.unverified if self.verifiable is False else self.ignored


@dataclass(frozen=True)
class Environment:
    """Where the run ran: hosts, ranks, MPI library, file system, placement."""

    hosts: tuple[str, ...] | None = None
    ranks: int | None = None
    ranks_per_host: Mapping[str, Any] = field(default_factory=dict)
    mpi_library: str | None = None
    mpiio_implementation: str | None = None
    fs_type: str | None = None
    fs_magic: str | None = None
    fs_path: str | None = None
    fs_block_size: int | None = None
    logical_block_size: int | None = None
    page_size: int | None = None
    start_time: str | None = None
    placement: tuple[Mapping[str, Any], ...] = ()
    striping: Mapping[str, Any] | None = None  # added by iolab bench, never by the engine

    @classmethod
    def _read(cls, v: Any) -> Environment:
        m = _map(v)
        hosts = m.get("hosts")
        return cls(
            hosts=_strs(hosts) if isinstance(hosts, list) else None, ranks=_int(m.get("ranks")),
            ranks_per_host=_map(m.get("ranks_per_host")),
            mpi_library=_str(m.get("mpi_library")),
            mpiio_implementation=_str(m.get("mpiio_implementation")),
            fs_type=_str(m.get("fs_type")), fs_magic=_str(m.get("fs_magic")),
            fs_path=_str(m.get("fs_path")), fs_block_size=_int(m.get("fs_block_size")),
            logical_block_size=_int(m.get("logical_block_size")),
            page_size=_int(m.get("page_size")), start_time=_str(m.get("start_time")),
            placement=tuple(p for p in _list(m.get("placement")) if isinstance(p, Mapping)),
            striping=_opt_map(m.get("striping")))

    def get(self, key: str) -> Any:
        """A field by its key in the document (for tables that list keys by name)."""
        return getattr(self, key, None)


@dataclass(frozen=True)
class RunError:
    """Why a run failed or stopped: the phase, the rank, errno, a message, bytes done."""

    phase: str | None
    rank: int | None
    errno: int | None
    message: str | None
    bytes_done: int | None

    @classmethod
    def _read(cls, v: Any) -> RunError | None:
        if not isinstance(v, Mapping):
            return None
        return cls(_str(v.get("phase")), _int(v.get("rank")), _int(v.get("errno")),
                   _str(v.get("message")), _int(v.get("bytes_done")))


@dataclass(frozen=True)
class Verify:
    enabled: bool | None = None
    errors: int | None = None
    first_bad: Any = None  # {"rank", "reader", "offset", "file"} (reader: newer engines)

    @classmethod
    def _read(cls, v: Any) -> Verify:
        m = _map(v)
        return cls(_bool(m.get("enabled")), _int(m.get("errors")), m.get("first_bad"))


@dataclass(frozen=True)
class Tool:
    name: str | None = None
    version: str | None = None
    argv: tuple[str, ...] | None = None  # absent from documents before the engine kept it

    @classmethod
    def _read(cls, v: Any) -> Tool:
        m = _map(v)
        argv = m.get("argv")
        return cls(_str(m.get("name")), _str(m.get("version")),
                   _strs(argv) if isinstance(argv, list) else None)


# --- the run ------------------------------------------------------------------------------

IO_OPS = ("write", "read")


@dataclass(frozen=True)
class MeasuredRun:
    """One engine document, read. ``config`` stays the engine's option table as resolved
    (every option by its key, ``iolab-bench --list-options``): its keys are the engine's to
    add, so they are read by name; the rest is typed."""

    schema_version: int | None = None
    tool: Tool = field(default_factory=Tool)
    status: str | None = None  # "ok" | "failed" | "interrupted"
    error: RunError | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    environment: Environment = field(default_factory=Environment)
    hints: Hints = field(default_factory=Hints)
    repetitions: tuple[Repetition, ...] = ()
    summary: Mapping[str, OpSummary] = field(default_factory=dict)
    read_passes: tuple[OpSummary, ...] = ()  # summary.read_passes (--read-times > 1)
    verify: Verify = field(default_factory=Verify)

    # -- phases --
    def phases(self, op: str | None = None, read_pass: int | None = None) -> Iterator[Phase]:
        """Every phase in the order the engine ran them, or those of ``op`` (and pass)."""
        for rep in self.repetitions:
            for ph in rep.phases:
                if (op is None or ph.op == op) and (read_pass is None
                                                    or ph.pass_index == read_pass):
                    yield ph

    def ops(self) -> list[tuple[str, int]]:
        """(op, read pass) of the phases the document holds, in the order they ran."""
        seen: list[tuple[str, int]] = []
        for ph in self.phases():
            key = (str(ph.op), ph.pass_index)
            if key not in seen:
                seen.append(key)
        return seen

    def rates(self, op: str, read_pass: int = 0, key: str = "bw_bytes_per_s") -> list[float]:
        """Each repetition's ``key`` (``bw_bytes_per_s`` or ``iops``) of its ``op`` phase."""
        return [float(v) for ph in self.phases(op, read_pass)
                if (v := ph.rate(key)) is not None]

    def op_summary(self, op: str) -> OpSummary:
        """``summary.<op>`` (empty statistics when the document has none)."""
        return self.summary.get(op) or OpSummary()

    # -- what kind of run --
    @property
    def api(self) -> str | None:
        return _str(self.config.get("api"))

    @property
    def metadata_plan(self) -> Mapping[str, Any]:
        return _map(self.config.get("metadata_plan"))

    @property
    def metadata_preset(self) -> str | None:
        """"easy" or "hard" for a metadata run (--metadata), else None."""
        value = self.config.get("metadata")
        return str(value) if value and value != "off" else None

    @property
    def kind(self) -> str:
        """'metadata', 'btio', 'subarray' or 'io'."""
        cfg = self.config
        if cfg.get("metadata_plan") or cfg.get("metadata") not in (None, "off"):
            return "metadata"
        if cfg.get("workload") == "btio":
            return "btio"
        if cfg.get("array") or cfg.get("layout") == "subarray":
            return "subarray"
        return "io"


def from_json(doc: Any) -> MeasuredRun:
    """The run a document describes; anything not a JSON object (None, a damaged stored row
    kept as text) reads as an empty run."""
    m = _map(doc)
    summary = _map(m.get("summary"))
    return MeasuredRun(
        schema_version=_int(m.get("schema_version")), tool=Tool._read(m.get("tool")),
        status=_str(m.get("status")), error=RunError._read(m.get("error")),
        config=_map(m.get("config")), environment=Environment._read(m.get("environment")),
        hints=Hints._read(m.get("hints")),
        repetitions=tuple(Repetition._read(r) for r in _list(m.get("repetitions"))
                          if isinstance(r, Mapping)),
        summary={op: OpSummary._read(s) for op, s in summary.items()
                 if isinstance(s, Mapping)},
        read_passes=tuple(OpSummary._read(s) for s in _list(summary.get("read_passes"))
                          if isinstance(s, Mapping)),
        verify=Verify._read(m.get("verify")))
