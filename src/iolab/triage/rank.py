"""The report: node-hours the centre's I/O takes and wastes, ranked, queried with DuckDB.

Cost model (docs/triage.md, "The cost in node-hours"): a job's node-hours are its nodes times
its run time; its I/O node-hours its nodes times the I/O time of its slowest rank (the other
ranks wait for it); its wasted node-hours its nodes times the net seconds of its waste
findings (every second counted once, by diagnose's attribution). A job whose log does not
say its node count is counted on ceil(ranks / ranks_per_node) nodes, and marked estimated.
Sums are exact decimals, so the report is the same whatever the order the logs were read in.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from iolab import __version__
from iolab.triage import trends
from iolab.triage.trends import costliest_files, prepare_trends

REPORT_SCHEMA_VERSION = 1
REPORT_KIND = "triage"
FINDINGS_PER_ITEM = 3
PROVE_WITH = "iolab tune --from-log"


@dataclass(frozen=True)
class Options:
    top: int = 10
    ranks_per_node: int = 64
    slowdown_factor: float = 1.2
    slowdown_p: float = 0.01


# The read jobs with their node count (known or estimated) and exact node-seconds.
_COSTED = """
CREATE TEMP VIEW costed AS
SELECT *, nodes IS NULL AS nodes_estimated,
       CAST(run_time_s AS DECIMAL(38, 6)) * eff_nodes AS node_s,
       CAST(LEAST(io_time_s, run_time_s) AS DECIMAL(38, 6)) * eff_nodes AS io_node_s,
       CAST(waste_s AS DECIMAL(38, 6)) * eff_nodes AS waste_node_s
FROM (SELECT *, COALESCE(nodes, CAST(ceil(nprocs / {rpn}) AS BIGINT)) AS eff_nodes
      FROM jobs WHERE status = 'read')
"""
# Each finding with its job's application and node-seconds.
_FINDING_COST = """
CREATE TEMP VIEW finding_cost AS
SELECT f.*, c.application, c.uid, c.source_path, c.eff_nodes,
       CAST(COALESCE(f.net_cost_s, 0) AS DECIMAL(38, 6)) * c.eff_nodes AS waste_node_s,
       CAST(COALESCE(f.estimated_gain_s, 0) AS DECIMAL(38, 6)) * c.eff_nodes AS gain_node_s
FROM findings f JOIN costed c USING (job_key)
"""


def _hours(node_s: Decimal | None) -> float:
    return round(float(node_s or 0) / 3600.0, 6)


def _rows(con: Any, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def prepare(con: Any, opts: Options) -> None:
    con.execute(_COSTED.format(rpn=float(opts.ranks_per_node)))
    con.execute(_FINDING_COST)
    prepare_trends(con)


def build_report(con: Any, opts: Options,
                 anonymization: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report tree every renderer walks (text, JSON, CSV). ``anonymization``: the store's
    record (anonymize.report_record), said in every output; None: readable names."""
    prepare(con, opts)
    report = {
        "schema_version": REPORT_SCHEMA_VERSION, "kind": REPORT_KIND,
        "tool": {"name": "iolab triage", "version": __version__},
        "anonymized": anonymization is not None, "anonymization": anonymization,
        "assumptions": {"ranks_per_node": opts.ranks_per_node, "top": opts.top,
                        "node_hours": "nodes x run time", "io_node_hours": "nodes x the "
                        "slowest rank's I/O time", "wasted_node_hours": "nodes x the net "
                        "seconds of the waste findings (each second counted once)",
                        "nodes_when_unknown": f"ceil(ranks / {opts.ranks_per_node}), marked "
                        "nodes_estimated"},
        "logs": _logs(con),
        "centre": _centre(con),
        "applications": _applications(con, opts),
        "users": _users(con, opts),
        "jobs": ranked_jobs(con, opts.top),
        "experiments": _experiments(con, opts),
        "unreadable": _rows(con, "SELECT source_path, reason FROM jobs WHERE status <> 'read' "
                                 "ORDER BY source_path, job_key"),
        **_views(con, opts),
    }
    files = costliest_files(con, [j["job_key"] for j in report["jobs"]])
    for j in report["jobs"]:
        j["files"] = files.get(j["job_key"], [])
    return report


def _views(con: Any, opts: Options) -> dict[str, Any]:
    """The report's parts beyond the ranking (iolab.triage.trends)."""
    t = trends.TrendOptions(factor=opts.slowdown_factor, alpha=opts.slowdown_p)
    slow = trends.slowdowns(con, t)
    followed = [f["application"] for f in slow["applications"]]
    followed += [a["application"] for a in _applications(con, opts)]
    return {
        "layers": trends.layers(con),
        "file_systems": trends.file_systems(con),
        "weeks": trends.weeks(con),
        "savings_per_week": trends.savings_per_week(con, opts.top),
        "slowdowns": slow,
        "weekly_trends": trends.weekly_series(con, list(dict.fromkeys(followed))[:opts.top]),
        "trend_assumptions": {
            "runs_compared": "same application (executable base name), user and ranks",
            "metric": "I/O seconds of the slowest rank per GiB moved (bandwidth: its inverse)",
            "week": "ISO week, Monday to Sunday, UTC, named by its Monday",
            "flagged_when": f"a week's median >= {opts.slowdown_factor} x the baseline's "
                            f"(the earlier steady weeks) and a one-sided Mann-Whitney U test "
                            f"p < {opts.slowdown_p}",
            "savings_per_week": "wasted node-hours / weeks from the application's first week "
                                "to the store's last (both counted)",
            "file_system_waste": "a job's wasted node-hours shared over its file systems by "
                                 "its I/O time on each"},
    }


def _logs(con: Any) -> dict[str, Any]:
    (total, read), = con.execute("SELECT count(*), count(*) FILTER (WHERE status = 'read') "
                                 "FROM jobs").fetchall()
    return {"stored": total, "read": read, "unreadable": total - read}


def _centre(con: Any) -> dict[str, Any]:
    r = _rows(con, "SELECT count(*) AS jobs, count(*) FILTER (WHERE nodes_estimated) AS est, "
                   "sum(node_s) AS node_s, sum(io_node_s) AS io_s, sum(waste_node_s) AS w_s "
                   "FROM costed")[0]
    total, io, waste = _hours(r["node_s"]), _hours(r["io_s"]), _hours(r["w_s"])
    return {"jobs": r["jobs"], "jobs_nodes_estimated": r["est"], "node_hours": total,
            "io_node_hours": io, "wasted_node_hours": waste,
            "io_share": round(io / total, 6) if total > 0 else None,
            "wasted_share": round(waste / total, 6) if total > 0 else None}


def _top_findings(con: Any, group_col: str, values: list[Any]) -> dict[Any, list[dict[str, Any]]]:
    """The costliest waste findings (by rule and direction) of each group value, each with
    the fix of its costliest occurrence."""
    if not values:
        return {}
    rows = _rows(con, f"""
        WITH g AS (
          SELECT {group_col} AS grp, rule_id, direction, count(DISTINCT job_key) AS jobs,
                 sum(waste_node_s) AS node_s, sum(COALESCE(net_cost_s, 0)) AS net_s,
                 arg_max(fix_text, (waste_node_s, job_key)) AS fix_text,
                 arg_max(severity, (waste_node_s, job_key)) AS severity
          FROM finding_cost WHERE kind = 'waste' AND {group_col} IN (SELECT unnest(?))
          GROUP BY ALL)
        SELECT * FROM g QUALIFY row_number() OVER (PARTITION BY grp
                                                   ORDER BY node_s DESC, rule_id, direction) <= ?
        ORDER BY grp, node_s DESC, rule_id, direction""", [values, FINDINGS_PER_ITEM])
    out: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        if r["node_s"] <= 0:
            continue  # a finding that owns no second wastes no node-hour
        out.setdefault(r["grp"], []).append({
            "rule_id": r["rule_id"], "direction": r["direction"], "jobs": r["jobs"],
            "wasted_node_hours": _hours(r["node_s"]), "severity": r["severity"],
            "fix": r["fix_text"]})
    return out


def _applications(con: Any, opts: Options) -> list[dict[str, Any]]:
    apps = _rows(con, """
        SELECT application, count(*) AS jobs, count(DISTINCT uid) AS users,
               count(*) FILTER (WHERE nodes_estimated) AS est, sum(node_s) AS node_s,
               sum(io_node_s) AS io_s, sum(waste_node_s) AS w_s
        FROM costed GROUP BY application
        ORDER BY w_s DESC, application LIMIT ?""", [opts.top])
    tops = _top_findings(con, "application", [a["application"] for a in apps])
    return [{"application": a["application"], "jobs": a["jobs"], "users": a["users"],
             "jobs_nodes_estimated": a["est"], "node_hours": _hours(a["node_s"]),
             "io_node_hours": _hours(a["io_s"]), "wasted_node_hours": _hours(a["w_s"]),
             "findings": tops.get(a["application"], [])} for a in apps]


def _users(con: Any, opts: Options) -> list[dict[str, Any]]:
    users = _rows(con, """
        SELECT uid, count(*) AS jobs, count(DISTINCT application) AS applications,
               sum(node_s) AS node_s, sum(io_node_s) AS io_s, sum(waste_node_s) AS w_s
        FROM costed GROUP BY uid ORDER BY w_s DESC, uid NULLS LAST LIMIT ?""", [opts.top])
    return [{"uid": u["uid"], "jobs": u["jobs"], "applications": u["applications"],
             "node_hours": _hours(u["node_s"]), "io_node_hours": _hours(u["io_s"]),
             "wasted_node_hours": _hours(u["w_s"])} for u in users]


def ranked_jobs(con: Any, limit: int | None) -> list[dict[str, Any]]:
    """Jobs by wasted node-hours (all of them with ``limit`` None: the CSV)."""
    jobs = _rows(con, f"""
        SELECT job_key, job_id, application, uid, nprocs, eff_nodes, nodes_estimated,
               nodes_source, start_unix_s, run_time_s, io_time_s, waste_s, node_s, io_node_s,
               waste_node_s, source_path
        FROM costed ORDER BY waste_node_s DESC, job_key
        {'' if limit is None else 'LIMIT ' + str(int(limit))}""")
    tops = _top_findings(con, "job_key", [j["job_key"] for j in jobs])
    return [{"job_key": j["job_key"], "job_id": j["job_id"], "application": j["application"],
             "uid": j["uid"], "nprocs": j["nprocs"], "nodes": j["eff_nodes"],
             "nodes_estimated": j["nodes_estimated"], "nodes_source": j["nodes_source"],
             "start_unix_s": j["start_unix_s"], "run_time_s": j["run_time_s"],
             "io_time_s": j["io_time_s"], "waste_s": j["waste_s"],
             "node_hours": _hours(j["node_s"]), "io_node_hours": _hours(j["io_node_s"]),
             "wasted_node_hours": _hours(j["waste_node_s"]), "source_path": j["source_path"],
             "findings": tops.get(j["job_key"], [])} for j in jobs]


def _experiments(con: Any, opts: Options) -> list[dict[str, Any]]:
    rows = _rows(con, """
        SELECT application, rule_id, direction, count(DISTINCT job_key) AS jobs,
               sum(gain_node_s) AS gain_s,
               arg_max(fix_text, (gain_node_s, job_key)) AS fix_text,
               arg_max(source_path, (gain_node_s, job_key)) AS example
        FROM finding_cost WHERE kind = 'experiment'
        GROUP BY ALL ORDER BY gain_s DESC, application, rule_id, direction LIMIT ?""",
                 [opts.top])
    return [{"application": r["application"], "rule_id": r["rule_id"],
             "direction": r["direction"], "jobs": r["jobs"],
             "estimated_gain_node_hours": _hours(r["gain_s"]), "fix": r["fix_text"],
             "prove_with": f"{PROVE_WITH} {r['example']}"} for r in rows]
