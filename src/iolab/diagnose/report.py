"""The findings tree: run every rule on a model and build the report every renderer walks.

:func:`diagnose` returns a :class:`Report`; :func:`to_dict` is its one serialisation (the
JSON output is exactly this, the HTML and text renderers read the same objects).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from iolab import __version__
from iolab.diagnose.attribution import attribute_time, time_pools
from iolab.diagnose.config import Thresholds
from iolab.diagnose.rules import registry
from iolab.diagnose.rules.base import (
    SEVERITY_RANK,
    FileEvidence,
    Finding,
    Fix,
    Rule,
    Value,
    fmt_bytes,
    fmt_seconds,
    pct,
)
from iolab.diagnose.rules.common import forget_rule_memo
from iolab.diagnose.rules.cores import adds_synchronisation, oversubscription_note
from iolab.model.files import APP
from iolab.model.job import Model
from iolab.model.workflow import log_io_times

SCHEMA_VERSION = 1


@dataclass
class Summary:
    io_bound: str  # "yes", "partly", "no", "unknown"
    headline: str
    time_split_s: dict[str, float]
    top_fixes: list[str]
    timeline: dict[str, Any] | None = None  # from a trace: when the I/O happened
    top_fix_items: list[dict[str, Any]] = field(default_factory=list)  # the same, as data


TOP_FIXES = 3
OMPIO_NOTE = (" This job ran Open MPI's OMPIO, which ignores ROMIO hints:{mca} the ROMIO "
              "file applies through its .env, which switches Open MPI to ROMIO "
              "(OMPI_MCA_io=^ompio, whatever the version calls ROMIO's component).")
OMPIO_MCA = " OMPIO's own parameters are in the .ompio.env file;"


def _top_fix_items(findings: list[Finding]) -> list[dict[str, Any]]:
    """The three distinct fixes that buy the most time, each with the seconds it owns (net:
    no second counted twice); one item per rule even when both directions fire. Experiments
    (settings to try, owning no time) fill the places waste leaves, marked to be proven; the
    I/O-bound advice comes last, only when fewer problems have a fix. "Information only"
    findings have no fix to show."""
    def shown(f: Finding) -> bool:
        return (not f.rule.overview and f.severity != "info"
                and not f.fix.text.startswith("Information only"))
    waste = [f for f in findings if shown(f) and not f.rule.experiment
             and (f.cost_s is None or f.cost_s > 0)]
    waste.sort(key=lambda f: (f.hit.cost_bound, -(f.cost_s or 0.0)))  # bounds after measured
    trials = [f for f in findings if shown(f) and f.rule.experiment]
    trials.sort(key=lambda f: -(f.estimate_s or 0.0))
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for f in waste + trials:
        item = out.setdefault((f.rule.id, f.fix.text), {
            "rule_id": f.rule.id, "directions": [], "fix": f.fix.text, "saves_up_to_s": None,
            "share_of_run": None, "experiment": f.rule.experiment,
            "bound": f.hit.cost_bound})
        if f.hit.direction:
            item["directions"].append(f.hit.direction)
        c = f.estimate_s if f.rule.experiment else f.cost_s
        if c is not None:
            item["saves_up_to_s"] = (item["saves_up_to_s"] or 0.0) + c
            if f.run_time_s > 0:
                item["share_of_run"] = min(item["saves_up_to_s"] / f.run_time_s, 1.0)
    items = list(out.values())[:TOP_FIXES]
    if len(items) < TOP_FIXES:
        items += [{"rule_id": f.rule.id, "directions": [], "fix": f.fix.text,
                   "saves_up_to_s": None, "share_of_run": None, "experiment": False,
                   "bound": False}
                  for f in findings if f.rule.id == "io-bound" and f.severity != "info"][:1]
    return items


def _top_fix_line(item: dict[str, Any]) -> str:
    d = item["directions"]
    head = item["rule_id"] + (f" ({', '.join(d)})" if d else "")
    gain = ""
    if item["saves_up_to_s"] is not None:
        gain = f" [saves up to {fmt_seconds(item['saves_up_to_s'])}" + (
            f" ({pct(item['share_of_run'])} of the run)]" if item["share_of_run"] is not None
            else "]")
    elif item["rule_id"] != "io-bound":
        gain = " [saving unknown]"
    if item.get("bound") and item["saves_up_to_s"] is not None:
        gain = gain.replace("[saves up to", "[at most").rstrip("]") + (
            ": a bound, not measured]")
    if item.get("experiment"):
        gain = (gain.rstrip("]") + (": " if gain else " [") + "an experiment, to be proven "
                "with iolab tune --from-log]").replace("saves up to", "may save up to")
    return f"{head}: {item['fix']}{gain}"


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
    proof: Any = None  # iolab.diagnose.proof.Proof: verdicts measured on the command (--proof)
    proxy: Any = None  # iolab.diagnose.proof.ProxyEvidence: a proxy tune's judgements (--proof)

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
    items = _top_fix_items(findings)
    return Summary(io_bound=verdict, headline=head, time_split_s=split,
                   top_fixes=[_top_fix_line(i) for i in items], timeline=_timeline(model),
                   top_fix_items=[{**i, "saves_up_to_s": None if i["saves_up_to_s"] is None
                                   else round(i["saves_up_to_s"], 6),
                                   "share_of_run": None if i["share_of_run"] is None
                                   else round(i["share_of_run"], 6)} for i in items])


def grade(f: Finding, model: Model, th: Thresholds) -> str:
    """Severity from the cost the finding owns (net, after attribution): INFO under
    ``cost_info_s``; HIGH only when it owns ``cost_high_share`` of the run in a job that is
    I/O bound; else WARN. Overview findings (the I/O share itself) and information-only
    rules keep their own severity above ``cost_info_s``; a rule whose cost the counters
    cannot tell is at most WARN, and so are an experiment (its gain is an estimate) and a
    cost that is only an upper bound (``Hit.cost_bound``)."""
    c = f.hit.cost_s if f.rule.overview or f.rule.severity == "info" else (
        f.estimate_s if f.rule.experiment else f.cost_s)
    if f.rule.overview or f.rule.severity == "info":
        if c is not None and c < th.cost_info_s:
            return "info"  # 0.6 s of I/O in a 1 s run is no problem to act on
        return f.hit.severity or f.rule.severity
    m = model.metrics
    if c is None:
        return "warn"
    # Near a threshold (within severity_margin of it) the grade is WARN: run-to-run noise of
    # a few percent never flips a finding between HIGH and INFO (a flaky --fail-on high).
    if c < th.cost_info_s and not _near(c, th.cost_info_s, th):
        return "info"
    if f.rule.experiment or f.hit.cost_bound or c < th.cost_info_s:
        return "warn"  # an estimate or an upper bound is never graded as measured
    share = f.cost_share or 0.0
    io_bound = (m.run_time_s >= th.min_run_time_s and m.io_fraction >= th.io_bound_warn
                and not _near(m.io_fraction, th.io_bound_warn, th))
    clear = share >= th.cost_high_share and not _near(share, th.cost_high_share, th)
    return "high" if io_bound and clear else "warn"


def _near(value: float, threshold: float, th: Thresholds) -> bool:
    return abs(value - threshold) <= th.severity_margin * threshold


def diagnose(model: Model, th: Thresholds, rules: list[Rule] | None = None) -> Report:
    """Every rule whose precondition holds on ``model``; each second counted once
    (attribute_time); findings graded by the cost they own and sorted by severity, waste
    before experiments, then cost, problems before the overview of the job."""
    findings, not_judged = judge(model, th, rules)
    return Report(model=model, thresholds=th, findings=findings,
                  summary=_summary(model, th, findings), not_judged=not_judged)


# The fix of an overview finding judge() was told not to make (overview_fixes=False).
OVERVIEW_FIX_NOT_MADE = "(not made: the job's overview has no fix here)"


def judge(model: Model, th: Thresholds, rules: list[Rule] | None = None, *,
          overview_fixes: bool = True) -> tuple[list[Finding], list[tuple[str, str]]]:
    """:func:`diagnose`'s findings (graded, sorted) and the rules not judged, without the
    report's summary. ``overview_fixes=False``: an overview finding (the job's I/O share,
    its read/write balance) gets no fix made (text :data:`OVERVIEW_FIX_NOT_MADE`): triage
    stores no overview finding, and the I/O-bound advice builds Slurm scripts it would throw
    away (0.12 ms CPU of a small log's ~7.5, issue 31). The costs, grades and order are
    the same: no fix enters them."""
    rules = registry() if rules is None else rules
    forget_rule_memo(model)  # shared selections of an earlier diagnosis (other thresholds)
    findings: list[Finding] = []
    not_judged = []
    order = {r.id: i for i, r in enumerate(rules)}
    run = model.metrics.run_time_s
    oversubscribed = oversubscription_note(model)
    for rule in rules:
        reason = rule.requires(model, th) if rule.requires is not None else None
        if reason:
            not_judged.append((rule.id, reason))
            continue
        part = rule.partly(model, th) if rule.partly is not None else None
        if part:
            not_judged.append((rule.id, part))
        for hit in rule.trigger(model, th):
            if hit.cost_s is not None and run > 0:
                # Sums of per-file bounds (a reduced record's slowest rank may differ from
                # file to file) can exceed the run: nothing costs more than the run itself.
                hit.cost_s = min(max(hit.cost_s, 0.0), run)
            syncs = bool(oversubscribed) and adds_synchronisation(rule.id, hit)
            if syncs:
                # on an oversubscribed node a change that adds synchronisation may slow the
                # job down (measured 0.4x-0.7x): an experiment, never a fix
                hit.experiment = True
            # a hit may be of another kind than its rule (waste or an experiment)
            kind = rule if hit.experiment in (None, rule.experiment) else replace(
                rule, experiment=bool(hit.experiment))
            fix = (rule.fix(model, hit, th) if overview_fixes or not rule.overview
                   else Fix(text=OVERVIEW_FIX_NOT_MADE))
            f = Finding(rule=kind, hit=hit, fix=fix, run_time_s=run)
            if syncs:
                f.fix.text = f.fix.text.rstrip() + oversubscribed
            if (model.job.mpiio_implementation == "OMPIO"
                    and any(a.kind == "romio-hints" for a in f.fix.artifacts)):
                mca = any(a.kind == "ompio-mca" for a in f.fix.artifacts)
                f.fix.text += OMPIO_NOTE.format(mca=OMPIO_MCA if mca else "")
            findings.append(f)
    attribute_time(findings, order, time_pools(model), model.metrics.io_time_s)
    for f in findings:
        f.graded = grade(f, model, th)
    # Problems first, by severity, waste before experiments, then cost: the first finding is
    # the costliest waste; the job's overview (its I/O share, read/write balance) comes last.
    # A bound comes after the measured costs of its grade.
    findings.sort(key=lambda f: (f.rule.overview, SEVERITY_RANK[f.severity], f.rule.experiment,
                                 f.hit.cost_bound,
                                 -((f.estimate_s if f.rule.experiment else f.cost_s) or 0.0),
                                 order[f.rule.id]))
    return findings, not_judged


def _finding_dict(f: Finding) -> dict[str, Any]:
    r = f.rule
    return {
        "rule_id": r.id,
        "family": r.family,
        "severity": f.severity,
        "title": r.title,
        "direction": f.hit.direction,
        "kind": "experiment" if r.experiment else "waste",
        "tier": r.tier,
        "cost_s": None if f.cost_s is None else round(f.cost_s, 6),
        # true: the time of the finding's operations; false: cost_s is only an upper bound
        # (iolab profile --trace measures it); null: no cost (unknown, or an experiment)
        "cost_measured": f.cost_measured,
        "gross_cost_s": None if f.gross_s is None or r.experiment else round(f.gross_s, 6),
        "estimated_gain_s": None if f.estimate_s is None else round(f.estimate_s, 6),
        # an experiment's gain as [worst, best] plausible seconds (ranks nothing)
        "estimated_gain_range_s": (None if f.estimate_range_s is None
                                   else [round(x, 6) for x in f.estimate_range_s]),
        "cost_share_of_run": None if f.cost_share is None else round(f.cost_share, 6),
        "same_time_as": f.same_time_as,
        "beside": f.beside,
        "summary": f.hit.summary,
        "evidence": dict(f.hit.values),
        "files": [{"path": e.path, "kind": e.kind, **e.values} for e in f.hit.files],
        "why": r.why,
        "sources": [{"doc": s.doc, "where": s.where, "says": s.says} for s in r.sources],
        "expected_effect": r.effect,
        "fix": {"text": f.fix.text,
                "artifacts": [{"kind": a.kind, "name": a.name, "content": a.content,
                               "note": a.note} for a in f.fix.artifacts],
                # the data the text and the files render (iolab.settings.change)
                "settings": [c.to_json() for c in f.fix.settings],
                "code_changes": [c.to_json() for c in f.fix.code]},
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


LAYER_ROWS = 3


def layer_rows(rep: Report, k: int = LAYER_ROWS) -> list[FileEvidence]:
    """The cross-layer table of the summary: for the files whose slowest rank spent the most
    time, bytes and the slowest rank's time at each layer present in the job."""
    model = rep.model
    L = model.layers
    app = model.files.category == APP
    layers = [(name, lay) for name, lay in (("mpiio", L.mpiio), ("posix", L.posix),
                                            ("stdio", L.stdio)) if (lay.present & app).any()]
    if not (L.mpiio.present & app).any():
        return []  # one layer only: the interface line already says it all
    t = np.vstack([lay.slowest_rank_time_s for _, lay in layers]
                  + [L.library_slowest_rank_time_s]).max(axis=0)
    idx = [int(i) for i in np.argsort(-np.where(app, t, -1.0))[:k] if app[i] and t[i] > 0]
    rows = []
    for i in idx:
        vals: dict[str, Value] = {}
        if L.library[i]:
            vals["library"] = str(L.library[i])
            vals["library_s"] = round(float(L.library_slowest_rank_time_s[i]), 3)
        for name, lay in layers:
            vals[f"{name}_bytes"] = fmt_bytes(lay.bytes[i])
            vals[f"{name}_s"] = round(float(lay.slowest_rank_time_s[i]), 3)
        rows.append(FileEvidence(model.files.paths[i], vals))
    return rows


def _ranks_per_host(rank_hosts: dict[int, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for host in rank_hosts.values():
        out[host] = out.get(host, 0) + 1
    return dict(sorted(out.items()))


def _per_log(model: Model) -> list[dict[str, Any]]:
    """A workflow's logs, each with its own run and I/O time (empty for one log): what the
    job's times add up from (iolab.model.workflow)."""
    logs = model.job.logs
    if len(logs) < 2:
        return []
    io = log_io_times(logs, model.metrics.rank_io_time_s)
    t0 = min(s.start_time for s in logs)
    return [{"source": s.source, "jobid": s.jobid, "exe": s.exe, "nprocs": s.nprocs,
             "start_offset_s": round(s.start_time - t0, 6), "run_time_s": round(s.run_time_s, 6),
             "io_time_s": round(t, 6)} for s, t in zip(logs, io)]


PER_LOG_ROWS = 50  # the text and HTML tables show the first logs; JSON has them all
_EXE_CHARS = 40


def per_log_rows(rep: Report, k: int = PER_LOG_ROWS) -> list[FileEvidence]:
    """The workflow table of the text and HTML reports (empty for one log): each log of the
    job, in the order given (by file name: the report's head has the full paths), with its
    program's name, its own run and I/O time (the same numbers as the JSON's ``per_log``)."""
    rows = []
    logs = _per_log(rep.model)
    one_id = len({d["jobid"] for d in logs}) == 1  # grouped by job id: say it once
    for d in logs[:k]:
        exe = os.path.basename(str(d["exe"]).split(" ", 1)[0])[:_EXE_CHARS]
        rows.append(FileEvidence(os.path.basename(str(d["source"])), {
            **({} if one_id else {"job": d["jobid"]}), "program": exe or "?",
            "ranks": d["nprocs"],
            "start_s": round(float(d["start_offset_s"]), 1),
            "run_s": round(float(d["run_time_s"]), 3), "io_s": round(float(d["io_time_s"]), 3)},
            kind="log"))
    return rows


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
            "mpiio_implementation": job.mpiio_implementation or None,
            "names_anonymised": job.names_anonymised,
            "ranks_per_host": _ranks_per_host(job.rank_hosts),
            "per_log": _per_log(rep.model),
            "unread_io_modules": job.unread_io_modules,
        },
        "summary": {"io_bound": rep.summary.io_bound, "headline": rep.summary.headline,
                    "io_time_s": round(m.io_time_s, 6), "io_fraction": round(m.io_fraction, 6),
                    "time_by_kind_s": rep.summary.time_split_s,
                    "top_fixes": rep.summary.top_fixes,
                    "top_fix_savings": rep.summary.top_fix_items,
                    "timeline": rep.summary.timeline},
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
