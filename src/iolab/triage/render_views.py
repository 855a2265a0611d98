"""The report's views beyond the ranking (iolab.triage.trends) as text lines and CSV tables:
I/O time by layer, file systems, weeks, savings per week and slowdowns."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from iolab.pages.fmt import human_bytes, human_rate
from iolab.triage.textfmt import cut, hours, table


def _rule(f: dict[str, Any]) -> str:
    return f["rule_id"] + (f"/{f['direction']}" if f.get("direction") else "")


def _slow_lines(r: dict[str, Any]) -> list[str]:
    s = r["slowdowns"]
    out = ["", "Slowdowns of I/O seconds per GiB (flagged when "
               f"{r['trend_assumptions']['flagged_when']})"]
    if not s["applications"] and not s["file_systems"]:
        return out + ["  none flagged"]
    for f in s["applications"]:
        out.append(f"  {f['application']} (uid {f['uid']}, {f['nprocs']} ranks): "
                   f"{f['slower_by']:.2f}x slower from the week of {f['first_week']} "
                   f"({f['weeks']} week(s)): median {f['median_s_per_gib_before']:.3g} -> "
                   f"{f['median_s_per_gib_after']:.3g} s/GiB "
                   f"({human_rate(f['median_bw_bytes_per_s_before'])} -> "
                   f"{human_rate(f['median_bw_bytes_per_s_after'])}), "
                   f"{f['jobs_before']} jobs before, {f['jobs_after']} after, "
                   f"p = {f['p_value']:.2g}; cause: {f['cause']}")
    for f in s["file_systems"]:
        apps = ", ".join(f["applications_slower"]) or "none on its own"
        out.append(f"  file system {f['mount']} ({f['fs_type']}): {f['slower_by']:.2f}x slower "
                   f"from the week of {f['first_week']} ({f['weeks']} week(s)), "
                   f"{f['jobs_before']} jobs before, {f['jobs_after']} after, "
                   f"p = {f['p_value']:.2g}; applications slower there: {apps}")
    return out


def views_lines(r: dict[str, Any]) -> list[str]:
    out = ["", "I/O node-hours by layer (the slowest rank's time in each; layers overlap: an "
               "HDF5 wait is MPI-IO and POSIX time too)"]
    out += table(["layer", "jobs", "I/O node-h"],
                 [[x["layer"], str(x["jobs"]), hours(x["io_node_hours"])]
                  for x in r["layers"] if x["jobs"]])
    out += ["", "File systems"]
    out += table(["mount", "type", "jobs", "applications", "bytes", "bandwidth", "I/O node-h",
                  "wasted node-h"],
                 [[f["mount"], f["fs_type"], str(f["jobs"]), str(f["applications"]),
                   human_bytes(f["bytes"]), human_rate(f["bw_bytes_per_s"]),
                   hours(f["io_node_hours"]), hours(f["wasted_node_hours"])]
                  for f in r["file_systems"]])
    out += ["", "Weeks (Monday, UTC)"]
    out += table(["week", "jobs", "applications", "node-h", "I/O node-h", "wasted node-h",
                  "bytes"],
                 [[w["week"], str(w["jobs"]), str(w["applications"]), hours(w["node_hours"]),
                   hours(w["io_node_hours"]), hours(w["wasted_node_hours"]),
                   human_bytes(w["bytes"])] for w in r["weeks"]])
    sav = r["savings_per_week"]
    out += ["", f"Savings per week: the top fixes would save "
                f"{hours(sum(x['node_hours_per_week'] for x in sav))} node-h a week at the "
                "observed run rate"]
    for x in sav:
        out.append(f"  {x['application']} {_rule(x)}: {hours(x['node_hours_per_week'])} "
                   f"node-h/week ({x['runs_per_week']:g} runs/week over "
                   f"{x['weeks_observed']} week(s)) -> {cut(x['fix'])}")
    return out + _slow_lines(r)


# Every CSV table's last column: the key id of an anonymised store, empty for readable names.
# A column, not a comment line: a CSV reader takes a '#' line for a row; a row copied out of
# the file keeps saying its names are hashes (docs/triage.md).
ANON_COLUMN = "anonymized_key_id"


def _csv(columns: tuple[str, ...], rows: list[dict[str, Any]], key_id: str | None) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow((*columns, ANON_COLUMN))
    for row in rows:
        w.writerow(["" if row.get(c) is None else row[c] for c in columns] + [key_id or ""])
    return buf.getvalue()


def _flat_apps(r: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for a in r["applications"]:
        top = a["findings"][0] if a["findings"] else None
        out.append({**a, "top_rule": _rule(top) if top else None,
                    "top_fix": top["fix"] if top else None})
    return out


def _fs_slow(r: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**f, "applications_slower": " ".join(f["applications_slower"])}
            for f in r["slowdowns"]["file_systems"]]


_FLAG = ("first_week", "last_week", "weeks", "jobs_before", "jobs_after",
         "median_s_per_gib_before", "median_s_per_gib_after", "median_bw_bytes_per_s_before",
         "median_bw_bytes_per_s_after", "slower_by", "p_value")
# --table NAME: its columns and how its rows come out of the report tree.
CSV_TABLES: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], list[dict[str, Any]]]]] = {
    "applications": (("application", "jobs", "users", "jobs_nodes_estimated", "node_hours",
                      "io_node_hours", "wasted_node_hours", "top_rule", "top_fix"),
                     _flat_apps),
    "users": (("uid", "jobs", "applications", "node_hours", "io_node_hours",
               "wasted_node_hours"), lambda r: r["users"]),
    "layers": (("layer", "jobs", "io_node_hours"), lambda r: r["layers"]),
    "file-systems": (("fs_type", "mount", "jobs", "applications", "bytes", "bw_bytes_per_s",
                      "io_node_hours", "wasted_node_hours"), lambda r: r["file_systems"]),
    "weeks": (("week", "jobs", "applications", "node_hours", "io_node_hours",
               "wasted_node_hours", "bytes"), lambda r: r["weeks"]),
    "savings": (("application", "rule_id", "direction", "jobs", "weeks_observed",
                 "runs_per_week", "wasted_node_hours", "node_hours_per_week", "fix"),
                lambda r: r["savings_per_week"]),
    "slowdowns": (("application", "uid", "nprocs", *_FLAG, "cause"),
                  lambda r: r["slowdowns"]["applications"]),
    "fs-slowdowns": (("fs_type", "mount", *_FLAG, "applications_slower"), _fs_slow),
}


def to_csv_table(report: dict[str, Any], name: str) -> str:
    columns, rows = CSV_TABLES[name]
    anon = report.get("anonymization")
    return _csv(columns, rows(report), None if not anon else anon["key_id"])
