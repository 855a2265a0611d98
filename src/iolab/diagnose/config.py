"""Thresholds: one typed object, filled from defaults, then a file, then the command line.

Every threshold is declared once (name, type, default, unit, help); the report shows the
values used, and ``docs/rules.md`` lists them from this table. Defaults start from Drishti's
where it has one (small requests 10 % and 1000, imbalance 15 %, metadata 30 s per rank).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.units import parse_size

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def _t(default: Any, unit: str, help_: str) -> Any:
    from dataclasses import field

    return field(default=default, metadata={"unit": unit, "help": help_})


@dataclass
class Thresholds:
    io_bound_warn: float = _t(0.10, "fraction", "I/O share of run time reported as a warning")
    io_bound_high: float = _t(0.30, "fraction", "I/O share of run time reported as high")
    min_run_time_s: float = _t(1.0, "s", "runs shorter than this are not judged on time")
    small_request_bytes: int = _t(128 * KiB, "bytes",
                                  "requests below this are small (capped by a share of the "
                                  "stripe, see small_stripe_share)")
    small_stripe_share: float = _t(0.125, "fraction",
                                   "a request below this share of the Lustre stripe (1 MiB "
                                   "when unknown) is small")
    small_requests_share: float = _t(0.10, "fraction", "share of small requests that triggers")
    small_requests_min: int = _t(1000, "ops", "fewer small requests are never flagged")
    buffer_max_avg_bytes: int = _t(64 * KiB, "bytes", "serial requests below this want buffering")
    buffer_min_ops: int = _t(10000, "ops", "fewer serial requests are never flagged")
    sequential_share: float = _t(0.80, "fraction", "consecutive share that counts as sequential")
    stdio_share: float = _t(0.10, "fraction", "STDIO share of bytes that triggers")
    stdio_min_bytes: int = _t(64 * MiB, "bytes", "less STDIO traffic is never flagged")
    ascii_max_avg_bytes: int = _t(256, "bytes", "STDIO writes below this look formatted")
    misaligned_share: float = _t(0.10, "fraction", "share of misaligned requests that triggers")
    misaligned_min_ops: int = _t(1000, "ops", "fewer misaligned requests are never flagged")
    redundant_share: float = _t(0.10, "fraction", "traffic beyond the file extent that triggers")
    redundant_min_bytes: int = _t(16 * MiB, "bytes", "less redundant traffic is never flagged")
    random_share: float = _t(0.20, "fraction", "estimated random share that triggers")
    random_min_ops: int = _t(1000, "ops", "fewer random requests are never flagged")
    metadata_time_rank_s: float = _t(30.0, "s", "metadata time of one rank that triggers")
    metadata_share: float = _t(0.30, "fraction", "metadata share of I/O time that triggers")
    imbalance: float = _t(0.15, "fraction", "(slowest - fastest) / slowest that triggers")
    imbalance_min_time_s: float = _t(1.0, "s", "slowest-rank time below this is never flagged")
    imbalance_min_bytes: int = _t(16 * MiB, "bytes", "largest share below this is never flagged")
    independent_share: float = _t(0.50, "fraction", "independent MPI-IO share that triggers")
    independent_min_ops: int = _t(1000, "ops", "fewer independent requests are never flagged")
    nonblocking_min_ops: int = _t(1000, "ops", "blocking MPI-IO requests before suggesting nb")
    cb_aggregation_factor: float = _t(2.0, "ratio", "POSIX/MPI-IO size ratio that shows CB works")
    fpp_min_files: int = _t(256, "files", "per-rank files at which file-per-process is judged")
    files_per_dir: int = _t(1000, "files", "files in one directory that trigger")
    opens_per_file: int = _t(10, "opens", "opens of one file per rank that trigger")
    opens_min_total: int = _t(1000, "opens", "fewer opens are never flagged")
    bcast_max_bytes: int = _t(16 * MiB, "bytes", "a shared input up to this size is small")
    bcast_min_ranks: int = _t(4, "ranks", "ranks reading the same small file that trigger")
    stripe_min_writers: int = _t(8, "ranks", "writers of one file that want striping")
    stripe_large_file: int = _t(1 * GiB, "bytes", "a shared file from this size wants stripes")
    stripe_huge_file: int = _t(100 * 10**9, "bytes", "files above this must be striped")
    stripe_small_file: int = _t(1 * GiB, "bytes", "single-writer files below this want 1 OST")
    direct_io_min_bytes: int = _t(1 * GiB, "bytes", "one-time read that suggests O_DIRECT")
    dirty_ratio: float = _t(0.40, "fraction", "write volume per node / node memory that triggers")
    node_memory_bytes: int = _t(0, "bytes", "node memory when the log does not tell (0: unknown)")
    node_memory_min_bytes: int = _t(16 * GiB, "bytes",
                                    "smallest node memory assumed when it is not known: less "
                                    "written per node is never a direct-I/O case")
    node_memory_max_bytes: int = _t(4096 * GiB, "bytes",
                                    "largest node memory assumed when it is not known: more "
                                    "written per node is a direct-I/O case on any node")
    single_stream_share: float = _t(0.90, "fraction", "share of bytes moved by one rank")
    single_stream_min_bytes: int = _t(1 * GiB, "bytes",
                                      "less traffic is never judged per node")
    lone_stream_min_bytes: int = _t(16 * MiB, "bytes", "a job moving less is never judged for "
                                    "one rank doing all its I/O")
    min_total_bytes: int = _t(1 * MiB, "bytes", "jobs moving less are only described")
    cost_info_s: float = _t(1.0, "s", "findings costing less than this are INFO")
    cost_high_share: float = _t(0.10, "fraction",
                                "share of the run a finding must cost to be HIGH (and the job "
                                "must be I/O bound, io_bound_warn)")
    severity_margin: float = _t(0.20, "fraction",
                                "a cost or share within this fraction of cost_info_s, "
                                "cost_high_share or io_bound_warn is WARN: a job near a "
                                "threshold keeps one severity from run to run")
    rmw_min_reads: int = _t(16, "ops", "POSIX reads under MPI-IO-only writes that trigger")
    amplification_ratio: float = _t(1.5, "ratio", "POSIX / MPI-IO bytes written that trigger")
    amplification_min_bytes: int = _t(16 * MiB, "bytes", "less extra traffic is never flagged")
    single_writer_min_ranks: int = _t(4, "ranks",
                                      "MPI-IO ranks of a file before one POSIX writer is judged")
    exchange_share: float = _t(0.10, "share", "MPI-IO time beyond POSIX time (the two-phase "
                               "exchange, waiting) over the files, as a share of the run, that "
                               "triggers (no MPI-IO/POSIX ratio: 300 s of exchange is 300 s "
                               "whatever the POSIX time)")
    mpiio_skew_min_s: float = _t(1.0, "s", "MPI-IO time above POSIX time below this is noise")
    late_rank_share: float = _t(0.5, "ratio", "collective calls: the fastest rank's MPI-IO "
                                "time below this share of the slowest's means a late rank")
    own_piece_bytes: int = _t(1 * MiB, "bytes", "collective calls whose pieces average this "
                              "much need no aggregation (each rank writes its own; a stripe)")
    tiny_collective_calls: int = _t(1000, "calls", "small collective calls per rank on one "
                                    "file that trigger")
    slow_close_s: float = _t(1.0, "s", "a close or flush slower than this triggers")
    hdf5_metadata_share: float = _t(0.10, "share", "HDF5 metadata requests whose traced time "
                                    "is this share of the run are waste; below it (or "
                                    "untraced) collective metadata is an experiment")
    tiny_file_min_s: float = _t(60.0, "s", "time on one small file that triggers")

    @classmethod
    def describe(cls) -> list[tuple[str, str, Any, str, str]]:
        """(name, type, default, unit, help) for every threshold, in declaration order."""
        out = []
        for f in fields(cls):
            out.append((f.name, f.type if isinstance(f.type, str) else f.type.__name__,
                        f.default, f.metadata["unit"], f.metadata["help"]))
        return out

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def set(self, name: str, value: Any, where: str) -> None:
        """Set one threshold from a string or number, checking name and type."""
        known = {f.name: f for f in fields(self)}
        if name not in known:
            raise UsageError(f"{where}: unknown threshold '{name}'; see `iolab diagnose "
                             "--list-thresholds` for the names")
        kind = type(known[name].default)
        try:
            if kind is int:
                v: Any = parse_size(value) if isinstance(value, str) else int(value)
            else:
                v = float(value)
        except (TypeError, ValueError):
            raise UsageError(f"{where}: threshold '{name}' wants a {kind.__name__}, got "
                             f"{value!r}") from None
        if v < 0:
            raise UsageError(f"{where}: threshold '{name}' must not be negative, got {value!r}")
        setattr(self, name, v)


def load_file(path: str, th: Thresholds) -> None:
    """Apply a TOML (``[thresholds]`` table or top level) or JSON file to ``th``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{p}: cannot read the config file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:  # a binary file (a log given to the wrong option)
        raise UsageError(f"{p}: not a text file (byte {exc.start} is not UTF-8); "
                         "--config takes a TOML or JSON file of thresholds") from None
    data: Any
    if p.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{p}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    else:
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            try:
                import tomli as tomllib  # type: ignore[no-redef]
            except ImportError:
                raise UsageError(f"{p}: TOML needs Python 3.11 or tomli; use .json"
                                 ) from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{p}: invalid TOML ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p}: expected a table of threshold = value")
    table = data.get("thresholds", data)
    if not isinstance(table, dict):
        raise UsageError(f"{p}: [thresholds] must be a table of threshold = value")
    for k, v in table.items():
        th.set(k, v, str(p))


def build_thresholds(config: str | None, sets: list[str] | None) -> Thresholds:
    """Defaults, then ``--config FILE``, then each ``--set name=value``."""
    th = Thresholds()
    if config:
        load_file(config, th)
    for item in sets or []:
        if "=" not in item:
            raise UsageError(f"--set {item!r}: expected name=value, e.g. --set random_share=0.3")
        k, v = item.split("=", 1)
        th.set(k.strip(), v.strip(), "--set")
    return th
