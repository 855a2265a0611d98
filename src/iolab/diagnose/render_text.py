"""Terminal rendering with rich: the one-screen summary first, then each finding.

Severity is always written as a word (HIGH / WARN / INFO); colour only repeats it. Names from
a log are printed as text, never as rich markup.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from iolab.diagnose.report import Report
from iolab.diagnose.rules.base import fmt_bytes

_STYLE = {"high": "bold red", "warn": "yellow", "info": "cyan"}


def render_text(rep: Report, out: TextIO, *, color: bool | None = None, width: int = 100,
                verbose: bool = False) -> None:
    con = Console(file=out, width=width, no_color=color is False,
                  force_terminal=bool(color), highlight=False, soft_wrap=False)
    job, m, s = rep.model.job, rep.model.metrics, rep.summary
    con.print(f"[bold]iolab diagnose[/bold]  {escape(', '.join(job.sources[:3]))}"
              + (f" (+{len(job.sources) - 3} more)" if len(job.sources) > 3 else ""))
    con.print(f"  {escape(job.exe[:90]) or '(no executable name)'}")
    con.print(f"  {job.nprocs} process(es)"
              + (f" on {job.nodes} node(s)" if job.nodes else "")
              + f", {job.run_time_s:.3f} s, format {', '.join(job.format_versions) or '?'}"
              + f", top layer {m.top_layer}")
    con.print()
    con.print(f"[bold]Summary[/bold]: {escape(s.headline)}")
    k = s.time_split_s
    con.print(f"  where the I/O time went (summed over ranks): read {k['read']:.3f} s, "
              f"write {k['write']:.3f} s, metadata {k['meta']:.3f} s")
    if m.ifaces:
        con.print("  by interface: " + ", ".join(
            f"{name} {sum(i.time_s.values()):.3f} s / {fmt_bytes(i.total_bytes)}"
            for name, i in m.ifaces.items()))
    con.print(f"  data: read {fmt_bytes(m.bytes_by_dir['read'])}, written "
              f"{fmt_bytes(m.bytes_by_dir['write'])}; files: {m.app_files} application, "
              f"{m.files_by_category['mpi-runtime']} MPI runtime, "
              f"{m.files_by_category['system']} system, {m.files_by_category['stream']} streams")
    counts = {sev: sum(1 for f in rep.findings if f.severity == sev) for sev in _STYLE}
    con.print(f"  findings: {counts['high']} HIGH, {counts['warn']} WARN, {counts['info']} INFO")
    if s.top_fixes:
        con.print("  [bold]top fixes[/bold]:")
        for i, t in enumerate(s.top_fixes, 1):
            con.print(f"   {i}. {escape(t)}")
    for n in job.notes:
        if "partial" in n:
            con.print(f"  note: {escape(n)}")
    con.print()
    for f in rep.findings:
        sev = f.severity
        d = f" ({f.hit.direction})" if f.hit.direction else ""
        con.print(f"[{_STYLE[sev]}]{sev.upper():4}[/] [bold]{f.rule.id}{d}[/bold]: "
                  f"{escape(f.rule.title)}")
        con.print(f"     {escape(f.hit.summary)}")
        if f.hit.files:
            table = Table(show_header=True, box=None, padding=(0, 1), pad_edge=False)
            table.add_column("file", overflow="fold", max_width=60)
            keys = list(f.hit.files[0].values)
            for key in keys:
                table.add_column(key, justify="right")
            for e in f.hit.files[: (10 if verbose else 3)]:
                table.add_row(escape(e.path),
                              *[escape(str(e.values.get(key, ""))) for key in keys])
            con.print(table)
        con.print(f"     fix: {escape(f.fix.text)}")
        if f.fix.artifacts:
            con.print("     artifacts: " + ", ".join(escape(a.name) for a in f.fix.artifacts)
                      + "  (write them with --emit-fixes DIR)")
        if verbose:
            con.print(f"     why: {escape(f.rule.why)}")
            for src in f.rule.sources:
                con.print(f"     source: {escape(src.doc)}, {escape(src.where)}: "
                          f"\"{escape(src.says)}\"")
            con.print(f"     expected effect: {escape(f.rule.effect)}")
        con.print()
    if not rep.findings:
        con.print("No problem found by any rule.")
    if rep.not_judged:
        con.print("not judged, data missing: " + "; ".join(
            f"{rid} ({escape(needs)})" for rid, needs in rep.not_judged))
    th = rep.thresholds.as_dict()
    con.print("thresholds: " + ", ".join(f"{k}={v}" for k, v in th.items())
              if verbose else "thresholds: defaults" + _changed(rep) + " (all shown with -v)")


def _changed(rep: Report) -> str:
    from iolab.diagnose.config import Thresholds

    base = Thresholds().as_dict()
    diff = {k: v for k, v in rep.thresholds.as_dict().items() if base[k] != v}
    return (" except " + ", ".join(f"{k}={v}" for k, v in diff.items())) if diff else ""
