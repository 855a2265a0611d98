"""One self-contained HTML file (no scripts, no external resources).

Every string that can come from a log (paths, executable, metadata, evidence) goes through
:func:`html.escape` with ``quote=True``; the page carries a Content-Security-Policy that
forbids scripts, so even a missed escape could not run code.
"""

from __future__ import annotations

from html import escape

from iolab.diagnose.proof import status_lines
from iolab.diagnose.report import Report, layer_rows, per_log_rows, timeline_lines
from iolab.diagnose.rules.base import FileEvidence, Finding, fmt_bytes
from iolab.settings.change import describe

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
.sev{font-weight:bold;padding:0 .4em;border-radius:3px}
.high{background:#c62828;color:#fff}.warn{background:#f9a825}.info{background:#90caf9}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:2px 6px}
pre{background:#f5f5f5;padding:.5em;overflow-x:auto}
.finding{border-left:4px solid #999;padding-left:1em;margin:1em 0}
"""


def _e(x: object) -> str:
    return escape(str(x), quote=True)


def _finding(f: Finding, proof: list[tuple[str, str]]) -> str:
    sev = f.severity
    d = f" ({_e(f.hit.direction)})" if f.hit.direction else ""
    out = [f'<div class="finding"><h3><span class="sev {sev}">{sev.upper()}</span> '
           f"{_e(f.rule.id)}{d}: {_e(f.rule.title)}</h3>",
           f"<p>{_e(f.hit.summary)}</p>"]
    if not f.rule.overview:
        out.append(f"<p><b>Cost:</b> {_e(f.cost_text())}</p>")
    out.append("<table><tr><th>evidence</th><th>value</th></tr>" + "".join(
        f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in f.hit.values.items())
        + "</table>")
    if f.hit.files:
        keys = list(f.hit.files[0].values)
        out.append(f"<table><tr><th>{_e(f.hit.files[0].kind)}</th>"
                   + "".join(f"<th>{_e(k)}</th>" for k in keys)
                   + "</tr>" + "".join(
                       "<tr><td>" + _e(e.path) + "</td>"
                       + "".join(f"<td>{_e(e.values.get(k, ''))}</td>" for k in keys) + "</tr>"
                       for e in f.hit.files) + "</table>")
    out.append(f"<p><b>Why:</b> {_e(f.rule.why)}</p><ul>" + "".join(
        f"<li>{_e(s.doc)}, {_e(s.where)}: “{_e(s.says)}”</li>" for s in f.rule.sources)
        + "</ul>")
    out.append(f"<p><b>Expected effect:</b> {_e(f.rule.effect)}</p>")
    out.append(f"<p><b>Fix:</b> {_e(f.fix.text)}</p>")
    changes = describe(f.fix.settings, f.fix.code)
    if changes:
        out.append("<p><b>Changes:</b></p><ul>" + "".join(f"<li>{_e(c)}</li>" for c in changes)
                   + "</ul>")
    out.extend(f"<p><b>{head.capitalize()}:</b> {_e(line)}</p>"  # or: predicted
               for head, line in proof)
    for a in f.fix.artifacts:
        out.append(f"<details><summary>{_e(a.name)} — {_e(a.note or a.kind)}</summary>"
                   f"<pre>{_e(a.content)}</pre></details>")
    out.append("</div>")
    return "\n".join(out)


def _table(first: str, keys: list[str], rows: list[FileEvidence]) -> str:
    return (f"<table><tr><th>{_e(first)}</th>" + "".join(f"<th>{_e(k)}</th>" for k in keys)
            + "</tr>" + "".join("<tr><td>" + _e(r.path) + "</td>"
                                + "".join(f"<td>{_e(r.values.get(k, ''))}</td>" for k in keys)
                                + "</tr>" for r in rows) + "</table>")


def _report(rep: Report) -> str:
    job, m, s = rep.model.job, rep.model.metrics, rep.summary
    parts = [f"<h1>iolab diagnose: {_e(', '.join(job.sources))}</h1>",
             f"<p>{_e(job.exe) or '(no executable name)'}<br>{job.nprocs} process(es), "
             f"{job.run_time_s:.3f} s, top layer {_e(m.top_layer)}</p>",
             "<h2>Summary</h2>", f"<p><b>{_e(s.headline)}</b></p>",
             "<p>I/O time summed over ranks: " + ", ".join(
                 f"{_e(k)} {v:.3f} s" for k, v in s.time_split_s.items()) + "</p>",
             f"<p>Data read {_e(fmt_bytes(m.bytes_by_dir['read']))}, written "
             f"{_e(fmt_bytes(m.bytes_by_dir['write']))}.</p>"]
    if s.top_fixes:
        parts.append("<ol>" + "".join(f"<li>{_e(t)}</li>" for t in s.top_fixes) + "</ol>")
    logs = per_log_rows(rep)
    if logs:
        keys = list(logs[0].values)
        ids = sorted({str(x.jobid) for x in job.logs})
        parts.append(f"<p>{job.n_logs} logs of job id(s) {_e(', '.join(ids))} (each its own "
                     "run time and slowest rank's I/O time; logs that overlap in time count "
                     "once in the totals)"
                     + (f", the first {len(logs)}" if len(logs) < job.n_logs else "")
                     + ":</p>" + _table("log", keys, logs))
    rows = layer_rows(rep)
    if rows:
        keys = list(rows[0].values)
        parts.append("<p>Across layers (files that cost most; bytes and the slowest rank's "
                     "time per layer):</p><table><tr><th>file</th>"
                     + "".join(f"<th>{_e(k)}</th>" for k in keys) + "</tr>"
                     + "".join("<tr><td>" + _e(r.path) + "</td>"
                               + "".join(f"<td>{_e(r.values.get(k, ''))}</td>" for k in keys)
                               + "</tr>" for r in rows) + "</table>")
    parts.extend(f"<p>{_e(line)}</p>" for line in timeline_lines(s.timeline))
    parts.append("<h2>Findings</h2>")
    parts.extend(_finding(f, status_lines(rep, f)) for f in rep.findings)
    if not rep.findings and "run_incomplete" in job.metadata:
        parts.append("<p>No rule fired on what was recorded, but the run did not finish "
                     "(see the note below): what is missing was not judged.</p>")
    elif not rep.findings:
        parts.append("<p>No problem found by any rule.</p>")
    if job.unread_io_modules:
        parts.append(f"<p>note: I/O through {_e(', '.join(job.unread_io_modules))} is in the "
                     "log but no rule reads it: the findings cover POSIX, MPI-IO, STDIO, HDF5 "
                     "and PnetCDF only.</p>")
    if rep.not_judged:
        parts.append("<h2>Not judged</h2><ul>" + "".join(
            f"<li>{_e(rid)}: needs {_e(needs)}</li>" for rid, needs in rep.not_judged)
            + "</ul>")
    for n in job.notes:
        parts.append(f"<p>note: {_e(n)}</p>")
    parts.append("<h2>Thresholds</h2><table>" + "".join(
        f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in rep.thresholds.as_dict().items())
        + "</table>")
    return "\n".join(parts)


def report_body(rep: Report) -> str:
    """One report's HTML body (every name escaped), for ``iolab report``'s page."""
    return _report(rep)


def render_html(reports: list[Report]) -> str:
    body = "\n<hr>\n".join(_report(r) for r in reports)
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            f"<title>iolab diagnose</title><style>{_CSS}</style></head><body>\n{body}\n"
            "</body></html>\n")
