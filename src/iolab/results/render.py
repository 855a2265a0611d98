"""Result trees for stored runs, and their text, JSON and CSV renderings.

The builders (:func:`runs_report`, :func:`summary_report`, :func:`run_report`) compute
everything once into a :class:`Report`; the renderers only walk it. JSON keys carry units,
text shows human units (MiB/s, KiB).
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from iolab.runs.engine_doc import MeasuredRun, from_json
from iolab.units import fmt_bytes

# 2: summary rows name the case "case" (was "label", now the user's label as in results),
# carry api, layout, collective, file_view, hints and mean/stddev; run rows carry
# collective, file_view and hints; phase rows carry run_id.
# 3: metadata runs (--metadata) have their own rows: "metadata" (bench, show's summary) and
# "metadata_phases" (show) with ops/s, no bytes; run rows carry metadata and the phases'
# median ops/s, and no transfer, block or bandwidth for a metadata run.
REPORT_SCHEMA_VERSION = 3
MIB = 1024 * 1024


def fmt_bw(v: Any) -> str:
    return f"{v / MIB:.1f}" if isinstance(v, (int, float)) else "-"


def fmt_num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"
    return "-" if v is None else str(v)


def fmt_seconds(v: Any) -> str:
    """Four significant digits: phases last from microseconds (null api) to minutes."""
    return f"{v:.4g}" if isinstance(v, (int, float)) else "-"


def fmt_text(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (list, tuple)):
        return " ".join(str(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def fmt_hint(v: Any) -> str:
    """{"effective": "1", "requested": "4"} -> '1 (requested 4)'."""
    if not isinstance(v, Mapping):
        return fmt_text(v)
    req = v.get("requested")
    return fmt_text(v.get("effective")) + ("" if req is None else f" (requested {req})")


@dataclass(frozen=True)
class Column:
    key: str  # JSON and CSV key (units in the name)
    title: str  # text header
    fmt: Callable[[Any], str] = fmt_text
    align: str = "<"  # text alignment: "<" or ">"
    text: bool = True  # shown in the text table (else JSON and CSV only)
    # A table mixing data and metadata runs (the runs list): "data" or "metadata" columns
    # appear in text only when a row of that kind is there; JSON and CSV keep every key.
    only: str | None = None


def _is_metadata_row(row: Mapping[str, Any]) -> bool:
    return bool(row.get("metadata"))


def _shown(column: Column, rows: Sequence[Mapping[str, Any]]) -> bool:
    if not column.text:
        return False
    if column.only == "metadata":
        return any(_is_metadata_row(r) for r in rows)
    if column.only == "data":
        return not rows or not all(_is_metadata_row(r) for r in rows)
    return True


@dataclass
class Table:
    key: str  # JSON key
    title: str | None
    columns: Sequence[Column]
    rows: list[dict[str, Any]]


@dataclass
class Section:
    """Key/value pairs; ``items`` are (key, label, value, formatter)."""

    key: str
    title: str
    items: Sequence[tuple[str, str, Any, Callable[[Any], str]]]


@dataclass
class Notes:
    key: str
    lines: list[str]


Node = Union[Table, Section, Notes]


@dataclass
class Report:
    kind: str
    nodes: list[Node]
    csv_table: str | None = None  # the key of the table CSV renders
    raw: dict[str, Any] = field(default_factory=dict)  # JSON-only extras (the engine doc)


# --- renderers -----------------------------------------------------------------------------

def _text_table(t: Table) -> list[str]:
    columns = [c for c in t.columns if _shown(c, t.rows)]
    cells = [[c.fmt(r.get(c.key)) for c in columns] for r in t.rows]
    widths = [max([len(c.title), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]

    def line(vals: Sequence[str]) -> str:
        parts = [f"{v:{c.align}{w}}" for v, c, w in zip(vals, columns, widths)]
        return "  ".join(parts).rstrip()

    out = [t.title] if t.title else []
    out.append(line([c.title for c in columns]))
    out.append(line(["-" * w for w in widths]))
    out += [line(row) for row in cells]
    if not t.rows:
        out.append("(none)")
    return out


def render_text(report: Report) -> str:
    blocks: list[list[str]] = []
    for node in report.nodes:
        if isinstance(node, Table):
            blocks.append(_text_table(node))
        elif isinstance(node, Section):
            width = max((len(label) for _, label, _, _ in node.items), default=0)
            blocks.append([node.title] + [f"  {label:<{width}}  {fmt(val)}"
                                          for _, label, val, fmt in node.items])
        elif node.lines:
            blocks.append(list(node.lines))
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def _json_value(node: Node) -> Any:
    if isinstance(node, Table):
        return node.rows
    if isinstance(node, Section):
        return {k: v for k, _, v, _ in node.items}
    return node.lines


def render_json(report: Report) -> str:
    doc: dict[str, Any] = {"schema_version": REPORT_SCHEMA_VERSION, "kind": report.kind}
    for node in report.nodes:
        doc[node.key] = _json_value(node)
    doc.update(report.raw)
    return json.dumps(doc, indent=2, default=str) + "\n"


def render_csv(report: Report) -> str:
    tables = [n for n in report.nodes if isinstance(n, Table) and n.key == report.csv_table]
    if not tables:
        return ""
    t = tables[0]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.key for c in t.columns])
    for r in t.rows:
        w.writerow(["" if r.get(c.key) is None else _csv_cell(r.get(c.key)) for c in t.columns])
    return buf.getvalue()


def _csv_cell(v: Any) -> Any:
    return json.dumps(v) if isinstance(v, (list, dict)) else v


def render(report: Report, fmt: str) -> str:
    return {"text": render_text, "json": render_json, "csv": render_csv}[fmt](report)


# --- builders ------------------------------------------------------------------------------

# The metadata benchmark's phases (--metadata): the engine's op name (its phases' "op" and
# its summary's keys), a short name for narrow columns, and mdtest's name from its SUMMARY
# rate table, which is what an mdtest user reads. The run list's columns are the file phases;
# the directory phases (--md-phases dirs|both) come first in a run's own tables, as in mdtest's.
MD_OPERATIONS = (
    ("create", "create", "File creation"),
    ("stat", "stat", "File stat"),
    ("open_read", "read", "File read"),
    ("remove", "remove", "File removal"),
)
MD_DIR_OPERATIONS = (
    ("dir_create", "mkdir", "Directory creation"),
    ("dir_stat", "dstat", "Directory stat"),
    ("dir_rename", "rename", "Directory rename"),
    ("dir_remove", "rmdir", "Directory removal"),
)


def metadata_preset(run: Mapping[str, Any]) -> str | None:
    """"easy" or "hard" for a metadata run (a stored row with its document, or a list row
    with the ``metadata`` column the database reads out of it), else None."""
    doc = run.get("engine_json")
    if isinstance(doc, Mapping):
        return from_json(doc).metadata_preset
    value = run.get("metadata")
    return str(value) if value and value != "off" else None


RUN_COLUMNS = (
    Column("id", "run", align=">"),
    Column("created_at", "time (UTC)"),
    Column("status", "status"),
    Column("label", "label"),
    Column("api", "api"),
    Column("layout", "layout", only="data"),
    Column("metadata", "metadata", only="metadata"),
    Column("ranks", "ranks", align=">"),
    Column("transfer_bytes", "transfer", fmt_bytes, ">", only="data"),
    Column("block_bytes", "block", fmt_bytes, ">", only="data"),
    Column("segments", "seg", align=">", only="data"),
    Column("write_bw_median_bytes_per_s", "write MiB/s", fmt_bw, ">", only="data"),
    Column("read_bw_median_bytes_per_s", "read MiB/s", fmt_bw, ">", only="data"),
    *(Column(f"{op}_ops_per_s_median", f"{short}/s", fmt_num, ">", only="metadata")
      for op, short, _ in MD_OPERATIONS),
    Column("read_cache", "cache", only="data"),
    Column("fs_type", "fs"),
    Column("host", "host"),
    Column("collective", "collective", text=False),
    Column("file_view", "file view", text=False),
    Column("hints", "hints", text=False),
)

# A metadata run's row leaves these empty: the engine's config still carries its data
# defaults (transfer 1 MiB, ...), which describe nothing that ran.
_DATA_ONLY_KEYS = tuple(c.key for c in RUN_COLUMNS if c.only == "data")


def _run_row(r: Mapping[str, Any]) -> dict[str, Any]:
    row = {c.key: r.get(c.key) for c in RUN_COLUMNS}
    row.update(command=r.get("command"), hints=_hints_text(r.get("hints")))
    row["metadata"] = metadata_preset(r)
    if row["metadata"]:
        row.update(dict.fromkeys(_DATA_ONLY_KEYS))
        for op, _, _ in MD_OPERATIONS:
            key = f"{op}_ops_per_s_median"
            if r.get("status") != "ok" and not _positive(row[key]):
                row[key] = None  # an unfinished phase: no figure, not 0
    else:
        row.update({f"{op}_ops_per_s_median": None for op, _, _ in MD_OPERATIONS})
    return row


def runs_report(runs: Sequence[Mapping[str, Any]], with_command: bool = False) -> Report:
    """``iolab results``: one row per stored run (JSON rows also carry the command line;
    ``with_command`` shows it in text and CSV too)."""
    cols = (*RUN_COLUMNS, Column("command", "command", fmt_text)) if with_command \
        else RUN_COLUMNS
    rows = [_run_row(r) for r in runs]
    return Report("runs", [Table("runs", None, cols, rows)], csv_table="runs")


def ids_report(runs: Sequence[Mapping[str, Any]]) -> Report:
    """``iolab results -q``: the run ids only (one per line in text)."""
    rows = [{"id": r.get("id")} for r in runs]
    return Report("runs", [Table("runs", None, (Column("id", "run"),), rows)],
                  csv_table="runs")


SUMMARY_COLUMNS = (
    Column("run_id", "run", align=">"),
    Column("case", "case"),
    Column("label", "label", text=False),
    Column("api", "api", text=False),
    Column("layout", "layout", text=False),
    Column("collective", "collective", text=False),
    Column("file_view", "file view", text=False),
    Column("hints", "hints", text=False),
    Column("ranks", "ranks", align=">"),
    Column("op", "op"),
    Column("transfer_bytes", "transfer", fmt_bytes, ">"),
    Column("bytes_per_rep", "bytes/rep", fmt_bytes, ">"),
    Column("repetitions", "reps", align=">"),
    Column("bw_median_bytes_per_s", "MiB/s median", fmt_bw, ">"),
    Column("bw_mean_bytes_per_s", "mean", fmt_bw, ">"),
    Column("bw_stddev_bytes_per_s", "sd", fmt_bw, ">"),
    Column("bw_min_bytes_per_s", "min", fmt_bw, ">"),
    Column("bw_max_bytes_per_s", "max", fmt_bw, ">"),
    Column("iops_median", "IOPS", fmt_num, ">"),
    Column("cache", "cache"),
    Column("status", "status"),
)


def _case_name(run: Mapping[str, Any], measured: MeasuredRun) -> str:
    cfg = measured.config
    parts = [str(run.get("api") or "?"), str(run.get("layout") or "?")]
    mode = cfg.get("posix_mode")
    if run.get("api") == "posix" and mode and mode != "buffered":
        parts.append(str(mode))
    for flag in ("collective", "file_view", "fsync", "reorder", "verify"):
        if cfg.get(flag):
            parts.append(flag.replace("_", "-"))
    if isinstance(cfg.get("threads"), int) and cfg["threads"] > 1:
        parts.append(f"threads={cfg['threads']}")
    # The async queue is per phase (auto may pick another engine for the reads than for the
    # writes): each distinct depth+engine once, so io_uring and libaio runs are told apart.
    queues: list[str] = []
    for ph in measured.phases():
        if ph.queue is not None:
            name = f"qd={ph.queue.get('depth')} {ph.queue.get('engine')}"
            if name not in queues:
                queues.append(name)
    return " ".join(parts + queues)


def _op_rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    measured = from_json(run.get("engine_json"))
    ok = run.get("status") == "ok"
    cfg = measured.config
    base = {"run_id": run.get("id"), "case": _case_name(run, measured), "label": run.get("label"),
            "api": run.get("api") or cfg.get("api"),
            "layout": run.get("layout") or cfg.get("layout"),
            "collective": cfg.get("collective"), "file_view": cfg.get("file_view"),
            "hints": _hints_text(measured.hints.effective),
            "ranks": run.get("ranks"),
            "transfer_bytes": run.get("transfer_bytes"),
            "repetitions": run.get("repetitions") if ok else 0, "status": run.get("status")}
    rows = []
    for op in ("write", "read"):
        phases = list(measured.phases(op))
        stats = measured.op_summary(op)
        if not phases:  # an interrupted run's summary may list an op that never ran
            continue
        bw = stats.bw_bytes_per_s
        caches = {ph.cache for ph in phases}
        # a failed or interrupted run: the repetitions whose phase finished, and "-" (not
        # 0.0) for the figures it does not have
        done = len({ph.repetition for ph in phases if _positive(ph.bw_bytes_per_s)})
        figure = (lambda v: v) if ok else (lambda v: v if _positive(v) else None)
        rows.append({**base, "op": op, "repetitions": base["repetitions"] if ok else done,
                     "bytes_per_rep": phases[0].bytes,
                     "bw_median_bytes_per_s": figure(bw.median),
                     "bw_mean_bytes_per_s": figure(bw.mean),
                     "bw_stddev_bytes_per_s": bw.stddev if ok else None,
                     "bw_min_bytes_per_s": figure(bw.min),
                     "bw_max_bytes_per_s": figure(bw.max),
                     "iops_median": figure(stats.iops.median),
                     "cache": (caches.pop() if len(caches) == 1 else "mixed") if op == "read"
                     else None})
    if not rows:  # a run that failed before any phase finished still gets its line
        rows.append({**base, "op": None})
    return rows


METADATA_COLUMNS = (
    Column("run_id", "run", align=">"),
    Column("case", "case"),
    Column("label", "label", text=False),
    Column("api", "api", text=False),
    Column("metadata", "metadata", text=False),
    Column("files_per_rank", "files/rank", text=False),
    Column("file_bytes", "file bytes", text=False),
    Column("dir", "dir", text=False),
    Column("ranks", "ranks", align=">"),
    Column("operation", "operation"),
    Column("op", "op", text=False),
    Column("ops_per_rep", "ops/rep", align=">"),
    Column("repetitions", "reps", align=">"),
    # mdtest's order: Max, Min, Mean, Std Dev
    Column("ops_per_s_max", "ops/s max", fmt_num, ">"),
    Column("ops_per_s_min", "min", fmt_num, ">"),
    Column("ops_per_s_mean", "mean", fmt_num, ">"),
    Column("ops_per_s_stddev", "sd", fmt_num, ">"),
    Column("ops_per_s_median", "median", fmt_num, ">", text=False),
    Column("status", "status"),
)


def _metadata_case(plan: Mapping[str, Any], preset: str) -> str:
    where = {"unique": "dir per rank", "shared": "shared dir"}
    return (f"metadata {preset}: {fmt_text(plan.get('files_per_rank'))} files/rank of "
            f"{fmt_bytes(plan.get('file_bytes'))}, {where.get(str(plan.get('dir')), '?')}")


def _metadata_rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A metadata run's summary: per phase, operations per second over the repetitions."""
    measured = from_json(run.get("engine_json"))
    cfg = measured.config
    plan = measured.metadata_plan
    preset = metadata_preset(run) or "?"
    ok = run.get("status") == "ok"
    files, ranks = plan.get("files_per_rank"), run.get("ranks")
    base = {"run_id": run.get("id"), "case": _metadata_case(plan, preset),
            "label": run.get("label"), "api": run.get("api") or cfg.get("api"),
            "metadata": preset, "files_per_rank": files, "file_bytes": plan.get("file_bytes"),
            "dir": plan.get("dir"), "ranks": ranks,
            "ops_per_rep": files * ranks if isinstance(files, int) and isinstance(ranks, int)
            else None,
            "repetitions": run.get("repetitions") if ok else 0, "status": run.get("status")}
    figure = (lambda v: v) if ok else (lambda v: v if _positive(v) else None)
    rows = []
    for op, _, name in (*MD_DIR_OPERATIONS, *MD_OPERATIONS):
        phases = list(measured.phases(op))
        if not phases:
            continue
        rate = measured.op_summary(op).iops
        done = len({ph.repetition for ph in phases if _positive(ph.iops)})
        rows.append({**base, "op": op, "operation": name,
                     "repetitions": base["repetitions"] if ok else done,
                     "ops_per_s_max": figure(rate.max), "ops_per_s_min": figure(rate.min),
                     "ops_per_s_mean": figure(rate.mean),
                     "ops_per_s_median": figure(rate.median),
                     "ops_per_s_stddev": rate.stddev if ok else None})
    if not rows:  # failed before its first phase finished: the run still gets its line
        rows.append({**base, "op": None, "operation": None,
                     **dict.fromkeys(c.key for c in METADATA_COLUMNS
                                     if c.key.startswith("ops_per_s_"))})
    return rows


def _hints_text(hints: Any) -> str | None:
    """Effective hints as "key=value;key=value" (a CSV cell; None without hints)."""
    if isinstance(hints, str):
        try:
            hints = json.loads(hints)
        except ValueError:
            return hints
    if not isinstance(hints, Mapping) or not hints:
        return None
    return ";".join(f"{k}={v}" for k, v in sorted(hints.items()))


def _first_bad(bad: Any) -> str:
    """{"rank": 1, "reader": 0, "offset": 4096, "file": "f"} -> words, not a dict."""
    if not isinstance(bad, Mapping):
        return f"at {fmt_text(bad)}"
    return (f"at offset {bad.get('offset')} of {bad.get('file') or 'the file'}: rank "
            f"{bad.get('rank')}'s data, read by rank {bad.get('reader')}")


def fmt_mpi(v: Any) -> str:
    """The MPI library's first line: MPICH's version string carries its whole configure
    line (2 KB); that stays in the JSON."""
    text = fmt_text(v).strip().splitlines()[0] if v else "-"
    text = text.split(" MPICH Release date")[0]  # "MPICH Version: 4.0.2 MPICH Release ..."
    return text if len(text) <= 80 else text[:77] + "..."


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and v > 0


def _run_notes(run: Mapping[str, Any]) -> list[str]:
    measured = from_json(run.get("engine_json"))
    rid = run.get("id")
    notes = []
    if run.get("status") != "ok":
        notes.append(f"run {rid}: {run.get('status')}: {run.get('error') or 'no reason given'}")
    hints = measured.hints
    if hints.requested:
        if hints.verifiable is False:
            notes.append(f"run {rid}: hints cannot be verified: "
                         f"{measured.environment.mpiio_implementation or 'the MPI-IO'}"
                         " library only echoes the keys it was given")
        elif hints.ignored:
            notes.append(f"run {rid}: hints ignored by the library: "
                         + ", ".join(hints.ignored))
    if any(r.get("cache") == "warm" for r in _op_rows(run)):
        notes.append(f"run {rid}: reads came from the page cache (warm), not the storage; "
                     "use --evict or --reorder to measure the storage")
    verify = measured.verify
    if verify.enabled and verify.errors:
        notes.append(f"run {rid}: verify found {verify.errors} bad bytes, first "
                     f"{_first_bad(verify.first_bad)}")
    return notes


def summary_report(runs: Sequence[Mapping[str, Any]], db_path: str | None = None,
                   heading: str | None = None, db_option: str | None = None) -> Report:
    """What ``iolab bench`` prints: a heading, one row per run and operation, then notes;
    the follow-up command carries ``--db db_option`` when the runs went to one given so."""
    rows = [row for run in runs if not metadata_preset(run) for row in _op_rows(run)]
    md_rows = [row for run in runs if metadata_preset(run) for row in _metadata_rows(run)]
    notes = [n for run in runs for n in _run_notes(run)]
    if db_path is not None and runs:
        ids = ", ".join(str(r.get("id")) for r in runs)
        notes.append(f"stored as run{'s' if len(runs) > 1 else ''} {ids} in {db_path} "
                     f"(iolab results show {runs[0].get('id')}{_db_words(db_option)})")
    nodes: list[Node] = [Notes("heading", [heading])] if heading else []
    if rows or not md_rows:
        nodes.append(Table("summary", None, SUMMARY_COLUMNS, rows))
    if md_rows:  # ops/s, not bandwidth: a table of their own
        nodes.append(Table("metadata", None, METADATA_COLUMNS, md_rows))
    nodes.append(Notes("notes", notes))
    return Report("summary", nodes, csv_table="summary" if rows or not md_rows else "metadata")


def _db_words(db_option: str | None) -> str:
    return f" --db {shlex.quote(db_option)}" if db_option else ""


PHASE_COLUMNS = (
    Column("run_id", "run", align=">", text=False),
    Column("repetition", "rep", align=">"),
    Column("op", "op"),
    Column("pass", "pass", align=">"),
    Column("cache", "cache"),
    Column("bytes", "bytes", fmt_bytes, ">"),
    Column("ops", "ops", align=">"),
    Column("time_s", "time s", fmt_seconds, ">"),
    Column("bw_bytes_per_s", "MiB/s", fmt_bw, ">"),
    Column("iops", "IOPS", fmt_num, ">"),
    Column("xfer_min_s", "xfer min s", fmt_seconds, ">"),
    Column("xfer_max_s", "xfer max s", fmt_seconds, ">"),
)


def _phase_rows(measured: MeasuredRun, run_id: Any = None) -> list[dict[str, Any]]:
    return [{"run_id": run_id, "repetition": ph.repetition, "op": ph.op, "pass": ph.read_pass,
             "cache": ph.cache, "bytes": ph.bytes, "ops": ph.ops, "time_s": ph.time_s,
             "bw_bytes_per_s": ph.bw_bytes_per_s, "iops": ph.iops,
             "xfer_min_s": ph.xfer_s.min, "xfer_max_s": ph.xfer_s.max}
            for ph in measured.phases()]


MD_PHASE_COLUMNS = (
    Column("run_id", "run", align=">", text=False),
    Column("repetition", "rep", align=">"),
    Column("operation", "operation"),
    Column("op", "op", text=False),
    Column("ops", "ops", align=">"),
    Column("time_s", "time s", fmt_seconds, ">"),
    Column("ops_per_s", "ops/s", fmt_num, ">"),
    Column("rank_time_min_s", "rank min s", fmt_seconds, ">"),
    Column("rank_time_max_s", "rank max s", fmt_seconds, ">"),
)


def _metadata_phase_rows(measured: MeasuredRun, run_id: Any = None) -> list[dict[str, Any]]:
    """One row per metadata phase: the slowest rank's time sets the rate; each rank's own
    loop time (fastest, slowest) shows how even the ranks were."""
    names = {op: name for op, _, name in (*MD_DIR_OPERATIONS, *MD_OPERATIONS)}
    return [{"run_id": run_id, "repetition": ph.repetition, "op": ph.op,
             "operation": names.get(str(ph.op), ph.op), "ops": ph.ops, "time_s": ph.time_s,
             "ops_per_s": ph.iops, "rank_time_min_s": ph.xfer_s.min,
             "rank_time_max_s": ph.xfer_s.max}
            for ph in measured.phases()]


def _case_facts(run: Mapping[str, Any], measured: MeasuredRun) -> list[
        tuple[str, str, Any, Callable[[Any], str]]]:
    """What ran: the data layout and sizes, or the metadata benchmark's shape."""
    preset = metadata_preset(run)
    if preset:
        plan = measured.metadata_plan
        return [("metadata", "metadata", preset, fmt_text),
                ("files_per_rank", "files per rank", plan.get("files_per_rank"), fmt_text),
                ("file_bytes", "file size", plan.get("file_bytes"), fmt_bytes),
                ("dir", "directory", plan.get("dir"), fmt_text),
                ("repetitions", "repetitions", run.get("repetitions"), fmt_text)]
    return [("layout", "layout", run.get("layout"), fmt_text),
            ("transfer_bytes", "transfer", run.get("transfer_bytes"), fmt_bytes),
            ("block_bytes", "block", run.get("block_bytes"), fmt_bytes),
            ("segments", "segments", run.get("segments"), fmt_text),
            ("repetitions", "repetitions", run.get("repetitions"), fmt_text),
            ("posix_mode", "posix mode", measured.config.get("posix_mode"), fmt_text)]


def run_report(run: Mapping[str, Any]) -> Report:
    """``iolab results show ID``: the run's facts, its phases, hints and notes."""
    doc = run.get("engine_json")
    doc = doc if isinstance(doc, Mapping) else {}
    measured = from_json(doc)
    metadata = metadata_preset(run) is not None
    moved = [] if metadata else [
        ("write_bytes_total", "written", run.get("write_bytes_total"), fmt_bytes),
        ("read_bytes_total", "read", run.get("read_bytes_total"), fmt_bytes)]
    facts = [
        ("id", "run", run.get("id"), fmt_text),
        ("created_at", "stored (UTC)", run.get("created_at"), fmt_text),
        ("status", "status", run.get("status"), fmt_text),
        ("error", "error", run.get("error"), fmt_text),
        ("label", "label", run.get("label"), fmt_text),
        ("command", "command", run.get("command"), fmt_text),
        ("launch_command", "launched", run.get("launch_command"), fmt_text),
        ("host", "host", run.get("host"), fmt_text),
        ("hosts", "ranks on", measured.environment.hosts, fmt_text),
        ("ranks", "ranks", run.get("ranks"), fmt_text),
        ("api", "api", run.get("api"), fmt_text),
        *_case_facts(run, measured),
        ("path", "path", run.get("path"), fmt_text),
        ("fs_type", "file system", run.get("fs_type"), fmt_text),
        ("mpi_library", "MPI", run.get("mpi_library"), fmt_mpi),
        ("mpiio_implementation", "MPI-IO", run.get("mpiio_implementation"), fmt_text),
        *moved,
        ("wall_time_s", "wall time s", run.get("wall_time_s"), fmt_seconds),
    ]
    nodes: list[Node] = [Section("run", f"Run {run.get('id')}", facts)]
    if metadata:
        nodes += [Table("metadata_phases", "Phases", MD_PHASE_COLUMNS,
                        _metadata_phase_rows(measured, run.get("id"))),
                  Table("metadata", "Summary", METADATA_COLUMNS, _metadata_rows(run))]
    else:
        nodes += [Table("phases", "Phases", PHASE_COLUMNS, _phase_rows(measured, run.get("id"))),
                  Table("summary", "Summary", SUMMARY_COLUMNS, _op_rows(run))]
    hints = measured.hints
    if hints.requested or hints.effective:
        items = [(k, k, {"effective": v, "requested": hints.requested.get(k)}, fmt_hint)
                 for k, v in sorted(hints.effective.items())]
        nodes.append(Section("hints_effective", "Effective hints", items))
    nodes.append(Notes("notes", _run_notes(run)))
    return Report("run", nodes, csv_table="metadata_phases" if metadata else "phases",
                  raw={"engine": doc or None})
