"""The triage report as text tables, JSON or CSV: each walks the same tree (rank.build_report).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from iolab.triage.render_views import ANON_COLUMN, views_lines
from iolab.triage.textfmt import anonymized_note
from iolab.triage.textfmt import cut as _cut
from iolab.triage.textfmt import hours as _h
from iolab.triage.textfmt import pct as _pct
from iolab.triage.textfmt import table as _table


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


CSV_COLUMNS = ("rank", "job_key", "job_id", "application", "uid", "nprocs", "nodes",
               "nodes_estimated", "run_time_s", "io_time_s", "waste_s", "node_hours",
               "io_node_hours", "wasted_node_hours", "top_rule", "top_fix", "source_path",
               ANON_COLUMN)


def to_csv(jobs: list[dict[str, Any]], anonymization: dict[str, Any] | None = None) -> str:
    """One row per read job, by wasted node-hours, with its costliest finding and fix; the
    last column, the key id of an anonymised store (render_views.ANON_COLUMN)."""
    key_id = None if anonymization is None else anonymization["key_id"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for i, j in enumerate(jobs, 1):
        top = j["findings"][0] if j["findings"] else None
        rule = None if top is None else top["rule_id"] + (
            f"/{top['direction']}" if top["direction"] else "")
        row = {**j, "rank": i, "top_rule": rule, "top_fix": None if top is None else top["fix"],
               ANON_COLUMN: key_id}
        w.writerow(["" if row[c] is None else row[c] for c in CSV_COLUMNS])
    return buf.getvalue()


def _findings_lines(findings: list[dict[str, Any]]) -> list[str]:
    out = []
    for f in findings:
        rule = f["rule_id"] + (f"/{f['direction']}" if f["direction"] else "")
        out.append(f"      {rule}: {_h(f['wasted_node_hours'])} node-h "
                   f"({f['severity'].upper()}) -> {_cut(f['fix'])}")
    return out


def to_text(r: dict[str, Any]) -> str:
    c, logs = r["centre"], r["logs"]
    est = r["assumptions"]["ranks_per_node"]
    note = anonymized_note(r)
    lines = [f"iolab triage: {logs['stored']} logs stored, {logs['read']} read, "
             f"{logs['unreadable']} could not be read" + (f"; {note}" if note else ""),
             f"centre: {_h(c['node_hours'])} node-hours in {c['jobs']} jobs; I/O "
             f"{_h(c['io_node_hours'])} node-h ({_pct(c['io_share'])}); wasted by I/O "
             f"problems with a fix {_h(c['wasted_node_hours'])} node-h "
             f"({_pct(c['wasted_share'])})"]
    if c["jobs_nodes_estimated"]:
        lines.append(f"  ({c['jobs_nodes_estimated']} job(s) with no node count in the log: "
                     f"counted on ranks / {est} nodes, marked *)")
    lines += ["", "Top applications by wasted node-hours"]
    rows = [[str(i), a["application"], str(a["jobs"]), str(a["users"]), _h(a["node_hours"]),
             _h(a["io_node_hours"]), _h(a["wasted_node_hours"]) +
             ("*" if a["jobs_nodes_estimated"] else "")]
            for i, a in enumerate(r["applications"], 1)]
    lines += _table(["#", "application", "jobs", "users", "node-h", "I/O node-h",
                     "wasted node-h"], rows)
    for i, a in enumerate(r["applications"], 1):
        if a["findings"]:
            lines.append(f"  {i}. {a['application']}:")
            lines += _findings_lines(a["findings"])
    lines += ["", "Top jobs by wasted node-hours"]
    rows = [[str(i), j["job_id"] or "-", j["application"] or "-", str(j["uid"]),
             str(j["nodes"]) + ("*" if j["nodes_estimated"] else ""),
             f"{j['run_time_s']:.1f}", f"{j['io_time_s']:.1f}", _h(j["wasted_node_hours"])]
            for i, j in enumerate(r["jobs"], 1)]
    lines += _table(["#", "job", "application", "uid", "nodes", "run s", "I/O s",
                     "wasted node-h"], rows)
    for i, j in enumerate(r["jobs"], 1):
        if j["findings"]:
            lines.append(f"  {i}. {j['source_path']}:")
            lines += _findings_lines(j["findings"])
    lines += _users_lines(r) + _experiment_lines(r) + views_lines(r) + _unreadable_lines(r)
    return "\n".join(lines) + "\n"


def _users_lines(r: dict[str, Any]) -> list[str]:
    rows = [[str(u["uid"]), str(u["jobs"]), str(u["applications"]), _h(u["node_hours"]),
             _h(u["wasted_node_hours"])] for u in r["users"]]
    return ["", "Top users by wasted node-hours"] + _table(
        ["uid", "jobs", "applications", "node-h", "wasted node-h"], rows)


def _experiment_lines(r: dict[str, Any]) -> list[str]:
    if not r["experiments"]:
        return []
    out = ["", "Experiments (settings to try; their gain is an estimate, to be proven with "
               "iolab tune --from-log)"]
    for e in r["experiments"]:
        rule = e["rule_id"] + (f"/{e['direction']}" if e["direction"] else "")
        out.append(f"  {e['application']} {rule}: may save up to "
                   f"{_h(e['estimated_gain_node_hours'])} node-h in {e['jobs']} job(s) -> "
                   f"{_cut(e['fix'])}")
        out.append(f"      prove it: {e['prove_with']}")
    return out


def _unreadable_lines(r: dict[str, Any], shown: int = 20) -> list[str]:
    bad = r["unreadable"]
    if not bad:
        return []
    out = ["", f"Logs that could not be read ({len(bad)})"]
    out += [f"  {b['source_path']}: {b['reason']}" for b in bad[:shown]]
    if len(bad) > shown:
        out.append(f"  (+{len(bad) - shown} more: --json lists them all)")
    return out
