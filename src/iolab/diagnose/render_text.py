"""Terminal rendering with rich: the one-screen summary first, then each finding.

Severity is always written as a word (HIGH / WARN / INFO); colour only repeats it. Names from
a log are printed as text, never as rich markup.

Every paragraph is wrapped here, at word boundaries, with a hanging indentation (the lines
after the first line up under its text), at the terminal's width, ``$COLUMNS`` when the
output is piped, else 100 columns; rich then prints the lines as they are (``soft_wrap``),
so a pipe gets the same layout as a terminal.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from iolab.diagnose.config import Thresholds
from iolab.diagnose.proof import status_lines
from iolab.diagnose.report import Report, layer_rows, per_log_rows, timeline_lines
from iolab.diagnose.rules.base import FileEvidence, fmt_bytes
from iolab.model.raw import DXT_UNREADABLE
from iolab.settings.change import describe

_STYLE = {"high": "bold red", "warn": "yellow", "info": "cyan"}
DEFAULT_WIDTH = 100
MIN_WIDTH = 40
_BODY = 5  # indentation of a finding's body, under its rule id


def output_width(out: TextIO) -> int:
    """$COLUMNS when set, else the terminal's width, else 100 (a pipe, a file)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(int(env), MIN_WIDTH)
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        return max(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, MIN_WIDTH)
    return DEFAULT_WIDTH


class _Writer:
    """Wrapped, escaped paragraphs on a rich console."""

    def __init__(self, con: Console, width: int, color: bool) -> None:
        self.con, self.width, self.color = con, width, color

    def para(self, text: str, indent: int = 0, hang: int = 0, head: str = "",
             head_style: str = "") -> None:
        """``head`` + ``text`` wrapped at the width: the first line at ``indent``, the others at
        ``indent + hang``; ``head`` (a severity word) may be styled, the rest is plain text."""
        lines = textwrap.wrap(head + text, width=self.width, initial_indent=" " * indent,
                              subsequent_indent=" " * (indent + hang), break_on_hyphens=False)
        for i, line in enumerate(lines or [""]):
            if i == 0 and head and head_style and self.color:
                cut = indent + len(head)
                self.con.print(" " * indent + f"[{head_style}]{escape(head)}[/]"
                               + escape(line[cut:]))
            else:
                self.con.print(escape(line))

    def files(self, rows: list[FileEvidence], indent: int) -> None:
        """An aligned table when it fits the width, else one wrapped paragraph per file."""
        keys = list(rows[0].values)
        cells = [[r.path] + [str(r.values.get(k, "")) for k in keys] for r in rows]
        heads = [rows[0].kind] + keys
        widths = [max(len(h), *(len(c[j]) for c in cells)) for j, h in enumerate(heads)]
        if indent + sum(widths) + 2 * (len(widths) - 1) <= self.width:
            for line in [heads, *cells]:
                text = "  ".join([line[0].ljust(widths[0])]
                                 + [c.rjust(w) for c, w in zip(line[1:], widths[1:])])
                self.con.print(escape(" " * indent + text.rstrip()))
            return
        for c in cells:
            self.para(", ".join(f"{k} {v}" for k, v in zip(keys, c[1:])),
                      indent=indent, hang=4, head=c[0] + ": ")


def render_text(rep: Report, out: TextIO, *, color: bool | None = None,
                width: int | None = None, verbose: bool = False) -> None:
    w = width or output_width(out)
    con = Console(file=out, width=w, no_color=color is False, force_terminal=bool(color),
                  highlight=False, soft_wrap=True)
    wr = _Writer(con, w, bool(color))
    _summary(rep, wr)
    for f in rep.findings:
        sev = f.severity
        d = f" ({f.hit.direction})" if f.hit.direction else ""
        wr.para(f"{f.rule.id}{d}: {f.rule.title}", hang=_BODY, head=f"{sev.upper():4} ",
                head_style=_STYLE[sev])
        wr.para(f.hit.summary, indent=_BODY, hang=2)
        if not f.rule.overview:
            wr.para(f.cost_text(), indent=_BODY, hang=2)
        if f.hit.files:
            wr.files(f.hit.files[: (10 if verbose else 3)], _BODY)
        wr.para(f.fix.text, indent=_BODY, hang=5, head="fix: ")
        changes = describe(f.fix.settings, f.fix.code)
        if changes:
            wr.para("; ".join(changes), indent=_BODY, hang=9, head="changes: ")
        if f.fix.artifacts:
            wr.para(", ".join(a.name for a in f.fix.artifacts)
                    + "  (write them with --emit-fixes DIR)", indent=_BODY, hang=11,
                    head="artifacts: ")
        for head, line in status_lines(rep, f):  # predicted, proven, a proxy's evidence
            wr.para(line, indent=_BODY, hang=len(head) + 2, head=f"{head}: ")
        if verbose:
            wr.para(f.rule.why, indent=_BODY, hang=5, head="why: ")
            for src in f.rule.sources:
                wr.para(f"{src.doc}, {src.where}: \"{src.says}\"", indent=_BODY, hang=8,
                        head="source: ")
            wr.para(f.rule.effect, indent=_BODY, hang=17, head="expected effect: ")
        con.print()
    if not rep.findings and "run_incomplete" in rep.model.job.metadata:
        wr.para("No rule fired on what was recorded, but the run did not finish (see the note "
                "above): what is missing was not judged.", hang=4)
    elif not rep.findings:
        con.print("No problem found by any rule.")
    if rep.model.job.unread_io_modules:
        wr.para(f"I/O through {', '.join(rep.model.job.unread_io_modules)} is in the log but "
                "no rule reads it: the findings cover POSIX, MPI-IO, STDIO, HDF5 and PnetCDF "
                "only.", hang=6, head="note: ")
    if rep.not_judged:
        by_need: dict[str, list[str]] = {}
        for rid, needs in rep.not_judged:  # one line per missing thing, its rules after it
            by_need.setdefault(needs, []).append(rid)
        wr.para("not judged, for want of:")
        for needs, rids in by_need.items():
            wr.para(f"{needs}: {', '.join(rids)}", indent=2, hang=4)
    th = rep.thresholds.as_dict()
    if verbose:
        wr.para(", ".join(f"{k}={v}" for k, v in th.items()), hang=4, head="thresholds: ")
    else:
        wr.para("defaults" + _changed(rep) + " (all shown with -v)", hang=4,
                head="thresholds: ")


def _summary(rep: Report, wr: _Writer) -> None:
    job, m, s = rep.model.job, rep.model.metrics, rep.summary
    con = wr.con
    wr.para(", ".join(job.sources[:3])
            + (f" (+{len(job.sources) - 3} more)" if len(job.sources) > 3 else ""),
            hang=4, head="iolab diagnose  ")
    wr.para(job.exe[:300] or "(no executable name)", indent=2, hang=4)
    wr.para(f"{job.nprocs} process(es)" + (f" on {job.nodes} node(s)" if job.nodes else "")
            + f", {job.run_time_s:.3f} s, format {', '.join(job.format_versions) or '?'}"
            + f", top layer {m.top_layer}", indent=2, hang=4)
    con.print()
    wr.para(s.headline, hang=4, head="Summary: ", head_style="bold")
    k = s.time_split_s
    wr.para(f"where the I/O time went (summed over ranks): read {k['read']:.3f} s, "
            f"write {k['write']:.3f} s, metadata {k['meta']:.3f} s", indent=2, hang=4)
    if m.ifaces:
        wr.para("by interface: " + ", ".join(
            f"{name} {sum(i.time_s.values()):.3f} s / {fmt_bytes(i.total_bytes)}"
            for name, i in m.ifaces.items()), indent=2, hang=4)
    wr.para(f"data: read {fmt_bytes(m.bytes_by_dir['read'])}, written "
            f"{fmt_bytes(m.bytes_by_dir['write'])}; files: {m.app_files} application, "
            f"{m.files_by_category['mpi-runtime']} MPI runtime, "
            f"{m.files_by_category['system']} system, {m.files_by_category['stream']} streams",
            indent=2, hang=4)
    logs = per_log_rows(rep)
    if logs:
        # Darshan names share a long head (user, program, job id): show what differs.
        names = [r.path for r in logs]
        head = os.path.commonprefix(names) if len(logs) > 1 else ""
        head = head if len(head) >= 8 else ""
        tail = os.path.commonprefix([n[len(head):][::-1] for n in names])[::-1]
        if len(logs) > 1 and tail:
            names = [n[:len(n) - len(tail)] for n in names]
        ids = sorted({str(s.jobid) for s in job.logs})
        which = (f"job {ids[0]}" if len(ids) == 1 else
                 f"job ids {', '.join(ids[:5])}" + (" ..." if len(ids) > 5 else ""))
        wr.para(f"{job.n_logs} logs of {which}"
                + " (each its own run time and slowest rank's I/O "
                "time; logs that overlap in time count once in the totals)"
                + (f", the first {len(logs)}" if len(logs) < job.n_logs else "")
                + (f"; names {head}...{tail}" if head or tail else "") + ":", indent=2, hang=4)
        wr.files([FileEvidence("..." + n[len(head):] if head else n, r.values, r.kind)
                  for n, r in zip(names, logs)], 4)
    rows = layer_rows(rep)
    if rows:
        wr.para("across layers (files that cost most; bytes, slowest rank's time):", indent=2)
        wr.files(rows, 4)
    for i, line in enumerate(timeline_lines(s.timeline)):
        wr.para(line, indent=2 if i == 0 else 4, hang=4)
    counts = {sev: sum(1 for f in rep.findings if f.severity == sev) for sev in _STYLE}
    wr.para(f"findings: {counts['high']} HIGH, {counts['warn']} WARN, {counts['info']} INFO",
            indent=2)
    if s.top_fixes:
        wr.para("top fixes:", indent=2)
        for i, t in enumerate(s.top_fixes, 1):
            wr.para(t, indent=3, hang=len(f"{i}. "), head=f"{i}. ")
    for n in job.notes:
        if "partial" in n or n.startswith(DXT_UNREADABLE):
            wr.para(n, indent=2, hang=6, head="note: ")
    con.print()


def _changed(rep: Report) -> str:
    base = Thresholds().as_dict()
    diff = {k: v for k, v in rep.thresholds.as_dict().items() if base[k] != v}
    return (" except " + ", ".join(f"{k}={v}" for k, v in diff.items())) if diff else ""
