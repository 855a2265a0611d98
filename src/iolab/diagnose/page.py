"""The page of a Darshan log or iolab profile (one diagnosed job): ``diagnose --html``,
``iolab report LOG`` and ``compare`` of two logs draw it."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from iolab.diagnose.render_html import report_body
from iolab.pages import plots, prep_log
from iolab.pages.fmt import human_bytes, human_pct, human_seconds
from iolab.pages.page import Html, Page, Plot, Section, Table, Text

if TYPE_CHECKING:
    from iolab.diagnose.report import Report


def findings_rows(rep: Report) -> list[list[str]]:
    """One row per finding: severity, rule, title, cost, fix."""
    return [[f.severity.upper(), f.rule.id, f.rule.title,
             f.cost_text() if not f.rule.overview else "-", f.fix.text] for f in rep.findings]


def log_sections(rep: Report, prefix: str = "") -> list[Section]:
    """The sections of one job; ``prefix`` keeps figure names unique on a page of several."""
    model = rep.model
    job, m = model.job, model.metrics
    overview = Section("Job", [
        Text(f"{job.exe or '(no executable name)'}: {job.nprocs} process(es), run "
             f"{human_seconds(job.run_time_s)}, I/O {human_seconds(m.io_time_s)} "
             f"({human_pct(m.io_fraction)} of the run) on the slowest rank; read "
             f"{human_bytes(m.bytes_by_dir['read'])}, written "
             f"{human_bytes(m.bytes_by_dir['write'])}; top layer {m.top_layer or '-'}"),
        Text(rep.summary.headline)])
    out = [overview]
    fix = Section("Findings: what it costs and the fix")
    rows = findings_rows(rep)
    fix.blocks.append(Table(["severity", "rule", "what", "cost", "fix"], rows) if rows
                      else Text("No problem found by any rule."))
    for rid, needs in rep.not_judged:
        fix.blocks.append(Text(f"not judged: {rid} (needs {needs})"))
    out.append(fix)
    figs = Section("Pictures")
    hists = prep_log.access_sizes(model)
    if hists:
        figs.blocks.append(Plot(f"{prefix}access-sizes", "Requests per size bin (Darshan's bins)",
                                partial(plots.size_histograms, hists)))
    rb = prep_log.rank_bars(model)
    if rb is not None:
        figs.blocks.append(Plot(
            f"{prefix}ranks", f"Per rank: I/O time and bytes; slowest rank {rb.slowest} "
            f"({human_seconds(float(rb.time_s[rb.slowest]))}, median "
            f"{human_seconds(rb.median_time_s)})", partial(plots.rank_bars, rb)))
    lay = prep_log.layers(model)
    if lay:
        figs.blocks.append(Plot(f"{prefix}layers", "Bytes and time per layer, from the "
                                "application's interface down to POSIX",
                                partial(plots.layer_bars, lay)))
    tl = prep_log.timeline(model)
    if tl is not None:
        act = prep_log.rank_activity(model)
        layers = sorted(set(tl.layer_of_file.values()))
        figs.blocks.append(Plot(
            f"{prefix}timeline", f"Operation timeline from the trace ({tl.ops:,} operations "
            f"counted at the {'/'.join(layers)} layer, each byte once)",
            partial(plots.timeline, tl, act)))
    else:
        figs.blocks.append(Text("No timeline: the log has no DXT trace (run with "
                                "DXT_ENABLE_IO_TRACE=1, or 'iolab profile --trace')."))
    out.append(figs)
    tables = Section("Darshan summary tables")
    tables.blocks += [
        Table(["layer", "access size", "count"],
              prep_log.common_access_sizes(model), "Most common access sizes"),
        Table(["type", "files", "avg size", "max size"], prep_log.file_counts(model),
              "File count summary"),
        Table(["layer", "read time", "write time", "meta time", "read", "written"],
              prep_log.average_io_per_process(model), "Average I/O per process"),
        Table(["file system", "type", "files", "read", "written"],
              prep_log.data_per_file_system(model), "Data per file system"),
    ]
    var = prep_log.shared_file_variance(model)
    tables.blocks.append(Table(
        ["file", "layer", "processes", "fastest rank", "time", "bytes", "slowest rank", "time",
         "bytes", "σ time", "σ bytes"], var, "Variance in shared files") if var
        else Text("Variance in shared files: no shared file (or per-rank records only)."))
    out.append(tables)
    out.append(Section("Configuration and environment",
                       [Table(["item", "value"], prep_log.environment_rows(model))]))

    out.append(Section("Diagnosis in full: evidence, sources, fix files", [Html(report_body(rep))]))
    return out


def log_page(reports: list[Report]) -> Page:
    names = ", ".join(s for r in reports for s in r.model.job.sources)
    page = Page(f"iolab report: {names}", [f"{len(reports)} job(s)"] if len(reports) > 1 else [])
    for i, rep in enumerate(reports):
        secs = log_sections(rep, prefix=f"job{i}-" if len(reports) > 1 else "")
        if len(reports) > 1:
            secs[0].heading = f"Job {i + 1}: {', '.join(rep.model.job.sources)}"
        page.sections += secs
    return page
