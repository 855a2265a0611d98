"""The findings tree: run every rule on a model and build the report every renderer walks.

:func:`diagnose` returns a :class:`Report`; :func:`to_dict` is its one serialisation (the
JSON output is exactly this, the HTML and text renderers read the same objects).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iolab import __version__
from iolab.diagnose.config import Thresholds
from iolab.diagnose.rules import registry
from iolab.diagnose.rules.base import SEVERITY_RANK, Finding, Rule, fmt_bytes
from iolab.model.job import Model

SCHEMA_VERSION = 1


@dataclass
class Summary:
    io_bound: str  # "yes", "partly", "no", "unknown"
    headline: str
    time_split_s: dict[str, float]
    top_fixes: list[str]
    timeline: dict[str, Any] | None = None  # from a trace: when the I/O happened


TOP_FIXES = 3


def _top_fixes(findings: list[Finding]) -> list[str]:
    """The first three distinct fixes: problems first (HIGH, WARN; one line per rule even
    when both directions fire), then the I/O-bound advice, then INFO findings that come with
    a ready artifact. "Information only" findings have no fix to show."""
    def rank(f: Finding) -> int:
        if f.rule.id == "io-bound":
            return 1
        return 0 if f.severity != "info" else 2
    cands = [f for f in findings if rank(f) < 2 or f.fix.artifacts]
    cands.sort(key=lambda f: rank(f))  # stable: keeps severity order within a rank
    out: dict[tuple[str, str], list[str]] = {}
    for f in cands:
        dirs = out.setdefault((f.rule.id, f.fix.text), [])
        if f.hit.direction:
            dirs.append(f.hit.direction)
    return [f"{rid}{' (' + ', '.join(d) + ')' if d else ''}: {text}"
            for (rid, text), d in list(out.items())[:TOP_FIXES]]


def _timeline(model: Model) -> dict[str, Any] | None:
    """The trace's timeline as plain data (None without a trace)."""
    tm = model.metrics.trace
    if tm is None:
        return None
    tl = tm.timeline
    return {
        "complete": tm.complete, "partial_reasons": tm.partial_reasons,
        "operations": tm.operations, "operations_by_module": tm.by_module,
        "exact_directions": sorted(d for d, ok in tm.exact.items() if ok),
        "first_s": round(tl.first_s, 6), "last_s": round(tl.last_s, 6),
        "busy_fraction": round(tl.busy_fraction, 4),
        "max_concurrent_ranks": tl.max_concurrency,
        "mean_concurrent_ranks": round(tl.mean_concurrency, 3),
        "phase_gap_s": round(tl.phase_gap_s, 6), "phases_total": tl.n_phases,
        "phases": [{"start_s": round(p.start_s, 6), "end_s": round(p.end_s, 6), "ops": p.ops,
                    "bytes_read": p.bytes_read, "bytes_written": p.bytes_written,
                    "ranks": p.ranks} for p in tl.phases],
    }


@dataclass
class Report:
    model: Model
    thresholds: Thresholds
    findings: list[Finding]
    summary: Summary
    not_judged: list[tuple[str, str]] = field(default_factory=list)  # (rule id, what is missing)

    def worst(self) -> str | None:
        return min((f.severity for f in self.findings), key=lambda s: SEVERITY_RANK[s],
                   default=None)


def _summary(model: Model, th: Thresholds, findings: list[Finding]) -> Summary:
    m = model.metrics
    if m.run_time_s < th.min_run_time_s:
        verdict = "unknown"
        head = (f"run of {m.run_time_s:.3f} s: too short to judge time "
                f"(I/O {m.io_time_s:.3f} s)")
    elif m.io_fraction >= th.io_bound_high:
        verdict, head = "yes", f"I/O bound: {100 * m.io_fraction:.0f}% of the run time is I/O"
    elif m.io_fraction >= th.io_bound_warn:
        verdict, head = "partly", f"partly I/O bound: {100 * m.io_fraction:.0f}% of the run is I/O"
    else:
        verdict, head = "no", f"not I/O bound: {100 * m.io_fraction:.1f}% of the run is I/O"
    split = {k: round(v, 6) for k, v in m.io_time_by_kind_s.items()}
    return Summary(io_bound=verdict, headline=head, time_split_s=split,
                   top_fixes=_top_fixes(findings), timeline=_timeline(model))


def diagnose(model: Model, th: Thresholds, rules: list[Rule] | None = None) -> Report:
    """Every rule on ``model``; findings sorted by severity then rule order."""
    rules = registry() if rules is None else rules
    findings: list[Finding] = []
    not_judged = []
    order = {r.id: i for i, r in enumerate(rules)}
    for rule in rules:
        for hit in rule.trigger(model, th):
            findings.append(Finding(rule=rule, hit=hit, fix=rule.fix(model, hit, th)))
        if rule.needs and not any(f.rule.id == rule.id for f in findings):
            if ("Lustre" in rule.needs and not model.stripes) or (
                    "--nodes" in rule.needs and not model.job.nodes) or (
                    "--node-memory" in rule.needs and not (model.job.node_memory_bytes
                                                           or th.node_memory_bytes)):
                not_judged.append((rule.id, rule.needs))
    findings.sort(key=lambda f: (SEVERITY_RANK[f.severity], order[f.rule.id]))
    return Report(model=model, thresholds=th, findings=findings,
                  summary=_summary(model, th, findings), not_judged=not_judged)


def _finding_dict(f: Finding) -> dict[str, Any]:
    r = f.rule
    return {
        "rule_id": r.id,
        "family": r.family,
        "severity": f.severity,
        "title": r.title,
        "direction": f.hit.direction,
        "summary": f.hit.summary,
        "evidence": dict(f.hit.values),
        "files": [{"path": e.path, "kind": e.kind, **e.values} for e in f.hit.files],
        "why": r.why,
        "sources": [{"doc": s.doc, "where": s.where, "says": s.says} for s in r.sources],
        "expected_effect": r.effect,
        "fix": {"text": f.fix.text,
                "artifacts": [{"kind": a.kind, "name": a.name, "content": a.content,
                               "note": a.note} for a in f.fix.artifacts]},
    }


def timeline_lines(tl: dict[str, Any] | None, max_phases: int = 5) -> list[str]:
    """The timeline in words, for the text and HTML renderers (empty without a trace)."""
    if not tl:
        return []
    state = "complete" if tl["complete"] else "PARTIAL: " + "; ".join(tl["partial_reasons"])
    n = tl["phases_total"]
    lines = [f"timeline from the trace ({tl['operations']} operations, {state}): {n} I/O "
             f"phase{'s' if n != 1 else ''} between {tl['first_s']:.3f} s and "
             f"{tl['last_s']:.3f} s (idle gaps of {tl['phase_gap_s']:.2f} s or more separate "
             f"phases); I/O in flight {100 * tl['busy_fraction']:.0f}% of the run; up to "
             f"{tl['max_concurrent_ranks']} rank(s) at once, "
             f"{tl['mean_concurrent_ranks']:.1f} on average while any"]
    for i, p in enumerate(tl["phases"][:max_phases], 1):
        lines.append(f"phase {i}: {p['start_s']:.3f}-{p['end_s']:.3f} s, {p['ops']} ops, "
                     f"read {fmt_bytes(p['bytes_read'])}, written "
                     f"{fmt_bytes(p['bytes_written'])}, {p['ranks']} rank(s)")
    if n > max_phases:
        lines.append(f"(+{n - max_phases} more phases; the first {len(tl['phases'])} are in "
                     "--json)")
    return lines


def _ranks_per_host(rank_hosts: dict[int, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for host in rank_hosts.values():
        out[host] = out.get(host, 0) + 1
    return dict(sorted(out.items()))


def to_dict(rep: Report) -> dict[str, Any]:
    """The report as plain data: the ``--json`` schema (``schema_version`` 1)."""
    job, m = rep.model.job, rep.model.metrics
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "iolab diagnose", "version": __version__},
        "job": {
            "sources": job.sources, "source_kind": job.source_kind, "exe": job.exe,
            "nprocs": job.nprocs, "nodes": job.nodes, "cores_per_node": job.cores_per_node,
            "run_time_s": round(job.run_time_s, 6),
            "start_time_unix_s": job.start_time, "end_time_unix_s": job.end_time,
            "format_versions": job.format_versions, "logs": job.n_logs,
            "partial_modules": job.partial_modules, "notes": job.notes,
            "metadata": job.metadata,
            "ranks_per_host": _ranks_per_host(job.rank_hosts),
        },
        "summary": {"io_bound": rep.summary.io_bound, "headline": rep.summary.headline,
                    "io_time_s": round(m.io_time_s, 6), "io_fraction": round(m.io_fraction, 6),
                    "time_by_kind_s": rep.summary.time_split_s,
                    "top_fixes": rep.summary.top_fixes, "timeline": rep.summary.timeline},
        "metrics": {
            "top_layer": m.top_layer,
            "files_by_category": m.files_by_category,
            "shared_files": m.shared_files, "per_rank_files": m.per_rank_files,
            "bytes_read": m.bytes_by_dir["read"], "bytes_written": m.bytes_by_dir["write"],
            "interfaces": {k: {"bytes_read": v.bytes["read"], "bytes_written": v.bytes["write"],
                               "reads": v.ops["read"], "writes": v.ops["write"],
                               "read_time_s": round(v.time_s["read"], 6),
                               "write_time_s": round(v.time_s["write"], 6),
                               "meta_time_s": round(v.time_s["meta"], 6),
                               "opens": v.opens, "files": v.files,
                               "size_hist": v.hist} for k, v in m.ifaces.items()},
        },
        "findings": [_finding_dict(f) for f in rep.findings],
        "not_judged": [{"rule_id": r, "needs": n} for r, n in rep.not_judged],
        "thresholds": rep.thresholds.as_dict(),
    }
