"""Views over the store beyond the ranking: I/O time by layer, rollups by file system and by
week, the node-hours the top fixes would save a week, and slowdowns week by week.

Everything is a DuckDB query over the views :func:`iolab.triage.rank.prepare` makes
(``costed``, ``finding_cost``); only the one-sided test of a slowdown runs in Python
(scipy's Mann-Whitney U) on the per-job values DuckDB hands over. Weeks are ISO weeks
(Monday to Sunday, UTC), named by their Monday.

A slowdown (docs/triage.md, "Trends"): runs of the same application (executable base name,
user, ranks) compared by their I/O seconds per GiB moved (bandwidth is its inverse). Week by
week, a week's runs are tested against the runs of the application's earlier steady weeks
(the baseline): flagged when their median is at least ``factor`` times the baseline's and a
one-sided Mann-Whitney U test gives p < ``alpha``. A flagged week does not join the baseline,
so a lasting slowdown stays flagged week after week; consecutive flagged weeks are one
slowdown. File systems are followed the same way (all jobs' seconds per GiB on each mount).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from statistics import median
from typing import Any

from iolab.triage.layers import LAYERS

# statistics.median gives numpy's median to the bit on these values (finite, positive floats:
# the middle one, or the two middle ones' sum halved), without numpy's 0.15 s import in a
# report that needs nothing else of it.

GIB = float(1 << 30)
WEEK_S = 7 * 86400
# The Monday of a job's ISO week (UTC), without time zones: 1970-01-01 was a Thursday.
_WEEK = ("(DATE '1970-01-01' + CAST((floor({t} / 86400) - ((floor({t} / 86400) + 3) % 7)) "
         "AS INTEGER))")
MIN_RUNS = 2  # a week, and a baseline, need this many runs to be tested at all


@dataclass(frozen=True)
class TrendOptions:
    factor: float = 1.2  # a week's median at least this many times the baseline's
    alpha: float = 0.01  # and the one-sided test's p below this


def week_of(column: str) -> str:
    return _WEEK.format(t=column)


def _hours(node_s: Decimal | float | None) -> float:
    return round(float(node_s or 0) / 3600.0, 6)


def _rows(con: Any, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def prepare_trends(con: Any) -> None:
    """Views over ``costed``: each job's week, and each job's share of each file system."""
    con.execute(f"CREATE TEMP VIEW weekly AS SELECT *, {week_of('start_unix_s')} AS week "
                "FROM costed")
    # A job's waste is shared out over its file systems by its time on each (the store
    # does not know which file a finding's seconds were spent on).
    con.execute("""
        CREATE TEMP VIEW job_fs AS
        SELECT w.job_key, w.application, w.uid, w.week, w.eff_nodes, w.waste_node_s,
               fs.mount, COALESCE(fs.fs_type, '?') AS fs_type, fs.bytes, fs.io_time_s,
               fs.io_time_s / NULLIF(sum(fs.io_time_s) OVER (PARTITION BY w.job_key), 0)
                 AS time_share
        FROM weekly w, unnest(w.file_systems) AS u(fs)""")


def layers(con: Any) -> list[dict[str, Any]]:
    """Per layer: the jobs that used it and the node-hours of its slowest rank's time (the
    layers overlap: an HDF5 wait is MPI-IO and POSIX time too)."""
    out = []
    for spec in LAYERS:
        (jobs, node_s), = con.execute(
            f"SELECT count(*) FILTER (WHERE {spec.column} > 0), "
            f"sum(CAST(LEAST({spec.column}, run_time_s) AS DECIMAL(38, 6)) * eff_nodes) "
            "FROM costed").fetchall()
        out.append({"layer": spec.name, "jobs": jobs, "io_node_hours": _hours(node_s)})
    return out


def file_systems(con: Any) -> list[dict[str, Any]]:
    rows = _rows(con, """
        SELECT fs_type, mount, count(DISTINCT job_key) AS jobs,
               count(DISTINCT application) AS applications, sum(bytes) AS bytes,
               sum(CAST(io_time_s AS DECIMAL(38, 6)) * eff_nodes) AS io_node_s,
               sum(CAST(io_time_s AS DECIMAL(38, 6))) AS io_s,
               sum(waste_node_s * CAST(COALESCE(time_share, 0) AS DECIMAL(38, 6))) AS w_s
        FROM job_fs GROUP BY ALL ORDER BY io_node_s DESC, bytes DESC, mount""")
    return [{"fs_type": r["fs_type"], "mount": r["mount"], "jobs": r["jobs"],
             "applications": r["applications"], "bytes": int(r["bytes"] or 0),
             "io_node_hours": _hours(r["io_node_s"]), "wasted_node_hours": _hours(r["w_s"]),
             "bw_bytes_per_s": round(float(r["bytes"] or 0) / float(r["io_s"]), 3)
             if r["io_s"] else None} for r in rows]


def weeks(con: Any) -> list[dict[str, Any]]:
    rows = _rows(con, """
        SELECT CAST(week AS VARCHAR) AS week, count(*) AS jobs,
               count(DISTINCT application) AS applications, sum(node_s) AS node_s,
               sum(io_node_s) AS io_s, sum(waste_node_s) AS w_s,
               sum(bytes_read + bytes_written) AS bytes
        FROM weekly GROUP BY week ORDER BY week""")
    return [{"week": r["week"], "jobs": r["jobs"], "applications": r["applications"],
             "node_hours": _hours(r["node_s"]), "io_node_hours": _hours(r["io_s"]),
             "wasted_node_hours": _hours(r["w_s"]), "bytes": int(r["bytes"] or 0)}
            for r in rows]


def savings_per_week(con: Any, top: int) -> list[dict[str, Any]]:
    """The top fixes (application, rule, direction) by the node-hours they would save a week
    at the observed run rate: their wasted node-hours over the weeks from the application's
    first week to the store's last (both counted)."""
    rows = _rows(con, f"""
        WITH last AS (SELECT max(week) AS w FROM weekly),
        app AS (SELECT application, count(*) AS app_jobs, min(week) AS first FROM weekly
                GROUP BY application),
        span AS (SELECT application, app_jobs,
                        CAST((last.w - first) / 7 AS BIGINT) + 1 AS weeks_observed
                 FROM app, last)
        SELECT f.application, f.rule_id, f.direction, count(DISTINCT f.job_key) AS jobs,
               any_value(s.app_jobs) AS app_jobs, any_value(s.weeks_observed) AS weeks_obs,
               sum(f.waste_node_s) AS node_s,
               arg_max(f.fix_text, (f.waste_node_s, f.job_key)) AS fix_text
        FROM finding_cost f JOIN span s USING (application)
        WHERE f.kind = 'waste' GROUP BY ALL HAVING sum(f.waste_node_s) > 0
        ORDER BY sum(f.waste_node_s) / any_value(s.weeks_observed) DESC, f.application,
                 f.rule_id, f.direction
        LIMIT {int(top)}""")
    return [{"application": r["application"], "rule_id": r["rule_id"],
             "direction": r["direction"], "jobs": r["jobs"],
             "weeks_observed": r["weeks_obs"],
             "runs_per_week": round(r["app_jobs"] / r["weeks_obs"], 3),
             "wasted_node_hours": _hours(r["node_s"]),
             "node_hours_per_week": round(_hours(r["node_s"]) / r["weeks_obs"], 6),
             "fix": r["fix_text"]} for r in rows]


@dataclass
class _Streak:
    weeks: list[str]
    values: list[float]


def _one_sided_p(after: list[float], before: list[float]) -> float:
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(after, before, alternative="greater").pvalue)


def _streaks(by_week: list[tuple[str, list[float]]], opts: TrendOptions
             ) -> list[tuple[_Streak, list[float]]]:
    """Consecutive flagged weeks, each with the baseline it was tested against."""
    baseline: list[float] = []
    out: list[tuple[_Streak, list[float]]] = []
    current: _Streak | None = None
    for week, vals in by_week:
        slow = False
        if len(vals) >= MIN_RUNS and len(baseline) >= MIN_RUNS:
            ratio = float(median(vals)) / max(float(median(baseline)), 1e-300)
            slow = ratio >= opts.factor and _one_sided_p(vals, baseline) < opts.alpha
        if slow:
            if current is None:
                current = _Streak([], [])
                out.append((current, list(baseline)))
            current.weeks.append(week)
            current.values.extend(vals)
        else:
            current = None
            baseline.extend(vals)
    return out


def _flag(streak: _Streak, baseline: list[float]) -> dict[str, Any]:
    before, after = float(median(baseline)), float(median(streak.values))
    return {"first_week": streak.weeks[0], "last_week": streak.weeks[-1],
            "weeks": len(streak.weeks), "jobs_before": len(baseline),
            "jobs_after": len(streak.values),
            "median_s_per_gib_before": round(before, 6),
            "median_s_per_gib_after": round(after, 6),
            "median_bw_bytes_per_s_before": round(GIB / before, 3) if before > 0 else None,
            "median_bw_bytes_per_s_after": round(GIB / after, 3) if after > 0 else None,
            "slower_by": round(after / before, 3) if before > 0 else None,
            "p_value": float(f"{_one_sided_p(streak.values, baseline):.3g}")}


def _grouped(rows: list[dict[str, Any]], key: tuple[str, ...]
             ) -> dict[tuple[Any, ...], list[tuple[str, list[float]]]]:
    """Per group, its weeks in order with their values (rows come ordered by group, week)."""
    out: dict[tuple[Any, ...], list[tuple[str, list[float]]]] = {}
    for r in rows:
        weeks_ = out.setdefault(tuple(r[k] for k in key), [])
        if not weeks_ or weeks_[-1][0] != r["week"]:
            weeks_.append((r["week"], []))
        weeks_[-1][1].append(float(r["s_per_gib"]))
    return out


def slowdowns(con: Any, opts: TrendOptions) -> dict[str, list[dict[str, Any]]]:
    """Flagged slowdowns of applications and of file systems, each with its numbers."""
    app_rows = _rows(con, """
        SELECT application, uid, nprocs, CAST(week AS VARCHAR) AS week,
               io_time_s / ((bytes_read + bytes_written) / POW(2, 30)) AS s_per_gib
        FROM weekly WHERE bytes_read + bytes_written > 0 AND io_time_s > 0
        ORDER BY application, uid NULLS LAST, nprocs, week, s_per_gib, job_key""")
    fs_rows = _rows(con, """
        SELECT fs_type, mount, CAST(week AS VARCHAR) AS week, application,
               io_time_s / (bytes / POW(2, 30)) AS s_per_gib
        FROM job_fs WHERE bytes > 0 AND io_time_s > 0
        ORDER BY fs_type, mount, week, s_per_gib, job_key""")
    fs_flags = []
    for (fstype, mount), by_week in _grouped(fs_rows, ("fs_type", "mount")).items():
        for streak, base in _streaks(by_week, opts):
            fs_flags.append({"fs_type": fstype, "mount": mount, **_flag(streak, base),
                             "applications_slower": _apps_slower(fs_rows, fstype, mount,
                                                                 streak, opts)})
    app_flags = []
    for (app, uid, nprocs), by_week in _grouped(app_rows, ("application", "uid",
                                                           "nprocs")).items():
        for streak, base in _streaks(by_week, opts):
            flag = {"application": app, "uid": uid, "nprocs": nprocs, **_flag(streak, base)}
            flag["cause"] = _cause(con, flag, fs_flags)
            app_flags.append(flag)
    key = lambda f: (-(f["slower_by"] or 0), f["first_week"])  # noqa: E731
    return {"applications": sorted(app_flags, key=key),
            "file_systems": sorted(fs_flags, key=key)}


def _apps_slower(fs_rows: list[dict[str, Any]], fstype: str, mount: str, streak: _Streak,
                 opts: TrendOptions) -> list[str]:
    """The applications whose own runs on this file system were slower by the factor in the
    flagged weeks than before them: one, an application changed; several, the file system."""
    first = streak.weeks[0]
    before: dict[str, list[float]] = {}
    during: dict[str, list[float]] = {}
    for r in fs_rows:
        if (r["fs_type"], r["mount"]) != (fstype, mount):
            continue
        if r["week"] < first:
            before.setdefault(r["application"], []).append(float(r["s_per_gib"]))
        elif r["week"] in streak.weeks:
            during.setdefault(r["application"], []).append(float(r["s_per_gib"]))
    return sorted(a for a, v in during.items() if a in before and
                  median(v) >= opts.factor * median(before[a]))


def _cause(con: Any, flag: dict[str, Any], fs_flags: list[dict[str, Any]]) -> str:
    """'file system MOUNT' when a file system the application used in its slow weeks was
    itself flagged then for more than one application; else 'application'."""
    used = {r[0] for r in con.execute(
        "SELECT DISTINCT mount FROM job_fs WHERE application = ? AND uid IS NOT DISTINCT FROM ?"
        " AND CAST(week AS VARCHAR) BETWEEN ? AND ?",
        [flag["application"], flag["uid"], flag["first_week"], flag["last_week"]]).fetchall()}
    for f in fs_flags:
        overlap = f["first_week"] <= flag["last_week"] and flag["first_week"] <= f["last_week"]
        if f["mount"] in used and overlap and len(f["applications_slower"]) > 1:
            return f"file system {f['mount']}"
    return "application"


def weekly_series(con: Any, applications: list[str]) -> dict[str, Any]:
    """What the dashboard plots: per week the centre's node-hours, and the median seconds
    per GiB of the given applications and of each file system."""
    apps = _rows(con, """
        SELECT application, CAST(week AS VARCHAR) AS week, count(*) AS jobs,
               median(io_time_s / ((bytes_read + bytes_written) / POW(2, 30))) AS s_per_gib
        FROM weekly WHERE bytes_read + bytes_written > 0 AND io_time_s > 0
              AND application IN (SELECT unnest(?))
        GROUP BY ALL ORDER BY application, week""", [applications])
    fs = _rows(con, """
        SELECT mount, CAST(week AS VARCHAR) AS week, count(*) AS jobs,
               median(io_time_s / (bytes / POW(2, 30))) AS s_per_gib
        FROM job_fs WHERE bytes > 0 AND io_time_s > 0 GROUP BY ALL ORDER BY mount, week""")
    return {"applications": apps, "file_systems": fs}


FILES_SHOWN = 5  # per top job in the report (the store keeps more: columns.FILES_PER_LAYER)


def costliest_files(con: Any, job_keys: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each job's costliest named files (any layer) by the slowest rank's time on them."""
    if not job_keys:
        return {}
    rows = _rows(con, """
        SELECT job_key, layer, path, mount, fs_type, ranks, bytes_read, bytes_written,
               slowest_rank_time_s
        FROM files WHERE path IS NOT NULL AND job_key IN (SELECT unnest(?))
        QUALIFY row_number() OVER (PARTITION BY job_key ORDER BY slowest_rank_time_s DESC,
                                   bytes_read + bytes_written DESC, layer, path) <= ?
        ORDER BY job_key, slowest_rank_time_s DESC, bytes_read + bytes_written DESC, layer,
                 path""", [job_keys, FILES_SHOWN])
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r.pop("job_key"), []).append(r)
    return out
