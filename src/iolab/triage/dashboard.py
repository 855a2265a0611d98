"""The triage dashboard: the report tree (iolab.triage.rank.build_report) as one report page
(iolab.pages.page), self-contained: every name from a log escaped by the page, plots as
inline SVG, no script and no network load."""

from __future__ import annotations

from functools import partial
from typing import Any

from iolab.pages.fmt import human_bytes, human_rate
from iolab.pages.page import Page, Plot, Section, Table, Text
from iolab.triage.charts import TrendLine, WeekBars, trend_lines, week_bars
from iolab.triage.textfmt import anonymized_note, hours, pct

_NO_SLOWDOWN = "no slowdown flagged"


def _rule(f: dict[str, Any]) -> str:
    return f["rule_id"] + (f"/{f['direction']}" if f.get("direction") else "")


def _findings_table(findings: list[dict[str, Any]], caption: str) -> Table:
    return Table(["problem", "severity", "jobs", "wasted node-h", "fix"],
                 [[_rule(f), f["severity"].upper(), f["jobs"], hours(f["wasted_node_hours"]),
                   f["fix"]] for f in findings], caption=caption)


def _centre(r: dict[str, Any]) -> Section:
    c = r["centre"]
    sec = Section("Where the centre's node-hours go", [Table(
        ["jobs", "node-h", "I/O node-h", "I/O share", "wasted node-h", "wasted share"],
        [[c["jobs"], hours(c["node_hours"]), hours(c["io_node_hours"]), pct(c["io_share"]),
          hours(c["wasted_node_hours"]), pct(c["wasted_share"])]])])
    if c["jobs_nodes_estimated"]:
        sec.blocks.append(Text(f"{c['jobs_nodes_estimated']} job(s) had no node count in "
                               f"their log: counted on ranks / "
                               f"{r['assumptions']['ranks_per_node']} nodes."))
    sec.blocks.append(Table(["layer", "jobs", "I/O node-h"],
                            [[x["layer"], x["jobs"], hours(x["io_node_hours"])]
                             for x in r["layers"] if x["jobs"]],
                            caption="I/O node-hours by layer (the slowest rank's time in "
                                    "each; layers overlap)"))
    w = r["weeks"]
    if w:
        sec.blocks.append(Plot("weekly-node-hours", "Node-hours per week: all, in I/O, "
                               "wasted by problems with a fix", partial(week_bars, WeekBars(
                                   [x["week"] for x in w], [x["node_hours"] for x in w],
                                   [x["io_node_hours"] for x in w],
                                   [x["wasted_node_hours"] for x in w]))))
    return sec


def _applications(r: dict[str, Any]) -> Section:
    sec = Section("Top applications by wasted node-hours", [Table(
        ["#", "application", "jobs", "users", "node-h", "I/O node-h", "wasted node-h"],
        [[i, a["application"], a["jobs"], a["users"], hours(a["node_hours"]),
          hours(a["io_node_hours"]), hours(a["wasted_node_hours"]) +
          ("*" if a["jobs_nodes_estimated"] else "")]
         for i, a in enumerate(r["applications"], 1)])])
    for i, a in enumerate(r["applications"], 1):
        if a["findings"]:
            sec.blocks.append(_findings_table(a["findings"], f"{i}. {a['application']}: its "
                                                             "costliest problems and fixes"))
    return sec


def _savings(r: dict[str, Any]) -> Section:
    sav = r["savings_per_week"]
    total = sum(x["node_hours_per_week"] for x in sav)
    return Section("Savings per week", [
        Text(f"The top fixes would save {hours(total)} node-hours a week at the observed run "
             f"rate ({r['trend_assumptions']['savings_per_week']})."),
        Table(["application", "problem", "jobs", "runs/week", "node-h/week", "fix"],
              [[x["application"], _rule(x), x["jobs"], f"{x['runs_per_week']:g}",
                hours(x["node_hours_per_week"]), x["fix"]] for x in sav])])


def _trend_lines(rows: list[dict[str, Any]], key: str,
                 flags: list[dict[str, Any]]) -> list[TrendLine]:
    lines: dict[str, TrendLine] = {}
    for row in rows:
        line = lines.setdefault(row[key], TrendLine(row[key], {}))
        line.values[row["week"]] = float(row["s_per_gib"])
    for f in flags:
        hit = lines.get(f[key])
        if hit is not None:
            hit.flagged |= {w for w in hit.values if f["first_week"] <= w <= f["last_week"]}
    return list(lines.values())


def _slow_rows(flags: list[dict[str, Any]], who: str) -> list[list[object]]:
    return [[f[who] if who != "application" else f"{f['application']} (uid {f['uid']}, "
             f"{f['nprocs']} ranks)", f["first_week"], f["weeks"], f"{f['slower_by']:.2f}x",
             f"{f['median_s_per_gib_before']:.3g} -> {f['median_s_per_gib_after']:.3g}",
             f"{human_rate(f['median_bw_bytes_per_s_before'])} -> "
             f"{human_rate(f['median_bw_bytes_per_s_after'])}",
             f"{f['jobs_before']} / {f['jobs_after']}", f"{f['p_value']:.2g}",
             f.get("cause") or ", ".join(f.get("applications_slower", []))] for f in flags]


def _trends(r: dict[str, Any]) -> Section:
    s, t = r["slowdowns"], r["weekly_trends"]
    head = ["", "from week", "weeks", "slower by", "s/GiB before -> after",
            "bandwidth before -> after", "jobs before / after", "p"]
    sec = Section("Weekly trends and slowdowns", [
        Text(f"Flagged when {r['trend_assumptions']['flagged_when']}; runs compared: "
             f"{r['trend_assumptions']['runs_compared']}.")])
    sec.blocks.append(Table(["application", *head[1:], "cause"],
                            _slow_rows(s["applications"], "application"),
                            caption="Applications") if s["applications"]
                      else Text(f"Applications: {_NO_SLOWDOWN}."))
    sec.blocks.append(Table(["mount", *head[1:], "applications slower there"],
                            _slow_rows(s["file_systems"], "mount"),
                            caption="File systems") if s["file_systems"]
                      else Text(f"File systems: {_NO_SLOWDOWN}."))
    weeks = [w["week"] for w in r["weeks"]]
    apps = _trend_lines(t["applications"], "application", s["applications"])
    if apps and weeks:
        sec.blocks.append(Plot("trend-applications", "Median I/O seconds per GiB of the "
                               "applications followed, week by week (ringed: flagged)",
                               partial(trend_lines, weeks, apps, "Applications")))
    fs = _trend_lines(t["file_systems"], "mount", s["file_systems"])
    if fs and weeks:
        sec.blocks.append(Plot("trend-file-systems", "Median I/O seconds per GiB on each "
                               "file system, week by week (ringed: flagged)",
                               partial(trend_lines, weeks, fs, "File systems")))
    return sec


def _file_systems(r: dict[str, Any]) -> Section:
    return Section("File systems", [Table(
        ["mount", "type", "jobs", "applications", "bytes", "bandwidth", "I/O node-h",
         "wasted node-h"],
        [[f["mount"], f["fs_type"], f["jobs"], f["applications"], human_bytes(f["bytes"]),
          human_rate(f["bw_bytes_per_s"]), hours(f["io_node_hours"]),
          hours(f["wasted_node_hours"])] for f in r["file_systems"]],
        caption=r["trend_assumptions"]["file_system_waste"])])


def _jobs(r: dict[str, Any]) -> Section:
    sec = Section("Top jobs by wasted node-hours", [Table(
        ["#", "job", "application", "uid", "nodes", "run s", "I/O s", "wasted node-h", "log"],
        [[i, j["job_id"] or "-", j["application"] or "-", j["uid"],
          f"{j['nodes']}{'*' if j['nodes_estimated'] else ''}", f"{j['run_time_s']:.1f}",
          f"{j['io_time_s']:.1f}", hours(j["wasted_node_hours"]), j["source_path"]]
         for i, j in enumerate(r["jobs"], 1)])])
    for i, j in enumerate(r["jobs"], 1):
        if j["findings"]:
            sec.blocks.append(_findings_table(j["findings"], f"{i}. job {j['job_id'] or '-'}:"
                                                             " its costliest problems"))
        if j.get("files"):
            sec.blocks.append(Table(
                ["layer", "file", "file system", "ranks", "read", "written",
                 "slowest rank s"],
                [[f["layer"], f["path"], f"{f['mount']} ({f['fs_type'] or '?'})", f["ranks"],
                  human_bytes(f["bytes_read"]), human_bytes(f["bytes_written"]),
                  f"{f['slowest_rank_time_s']:.2f}"] for f in j["files"]],
                caption=f"{i}. job {j['job_id'] or '-'}: its costliest files"))
    return sec


def _rest(r: dict[str, Any]) -> list[Section]:
    out = [Section("Top users by wasted node-hours", [Table(
        ["uid", "jobs", "applications", "node-h", "wasted node-h"],
        [[u["uid"], u["jobs"], u["applications"], hours(u["node_hours"]),
          hours(u["wasted_node_hours"])] for u in r["users"]])])]
    if r["experiments"]:
        out.append(Section("Experiments (to be proven with iolab tune --from-log)", [Table(
            ["application", "setting", "jobs", "may save node-h", "fix", "prove it"],
            [[e["application"], _rule(e), e["jobs"], hours(e["estimated_gain_node_hours"]),
              e["fix"], e["prove_with"]] for e in r["experiments"]])]))
    if r["unreadable"]:
        out.append(Section(f"Logs that could not be read ({len(r['unreadable'])})", [Table(
            ["log", "reason"], [[u["source_path"], u["reason"]] for u in r["unreadable"]])]))
    return out


def dashboard_page(r: dict[str, Any]) -> Page:
    logs = r["logs"]
    note = anonymized_note(r)
    return Page(
        title="iolab triage: the centre's I/O, ranked by the node-hours it wastes",
        subtitle=[f"{logs['stored']} logs stored, {logs['read']} read, "
                  f"{logs['unreadable']} could not be read; {r['tool']['name']} "
                  f"{r['tool']['version']}", *([note[0].upper() + note[1:]] if note else [])],
        sections=[_centre(r), _applications(r), _savings(r), _trends(r), _file_systems(r),
                  _jobs(r), *_rest(r)])
