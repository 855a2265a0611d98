"""``iolab profile show FILE``: a darshan-parser-like dump of a profile's counters."""

from __future__ import annotations

from typing import TextIO

from iolab import counters as ctr
from iolab.model.raw import RawJob
from iolab.units import fmt_time


def _when(t: float) -> str:
    return fmt_time(t)


def dump(job: RawJob, out: TextIO) -> None:
    """Write the job header, then one line per counter of every record."""
    out.write(f"# iolab profile: {', '.join(job.source_paths)}\n")
    out.write(f"# format: {job.format_version}\n# exe: {job.exe}\n# nprocs: {job.nprocs}\n")
    out.write(f"# hosts: {', '.join(job.hosts)}\n")
    out.write(f"# start_time: {job.start_time:.6f} ({_when(job.start_time)})\n")
    out.write(f"# end_time: {job.end_time:.6f} ({_when(job.end_time)})\n")
    out.write(f"# run time: {job.run_time_s:.4f} s\n")
    if "run_incomplete" in job.metadata:
        out.write(f"# RUN INCOMPLETE: {job.metadata['run_incomplete']}\n")
    for key, value in sorted(job.metadata.items()):
        out.write(f"# metadata: {key} = {value}\n")
    if job.partial_modules:
        out.write(f"# PARTIAL: {', '.join(job.partial_modules)} (something was left out)\n")
    for note in job.notes:
        out.write(f"# note: {note}\n")
    mods = ctr.load()
    out.write("\n#<module>\t<rank>\t<record id>\t<counter>\t<value>\t<file name>\n")
    for mod, mc in mods.items():
        table = job.tables.get(mod)
        recs = table.rows() if table is not None else []
        if not recs:
            continue
        out.write(f"\n# {mod} module: {len(recs)} records\n")
        for r in sorted(recs, key=lambda r: (r.path, r.rank)):
            head = f"{mod}\t{r.rank}\t{r.record_id}"
            for c in mc.ints:
                out.write(f"{head}\t{c.name}\t{r.counters.get(c.name, 0)}\t{r.path}\n")
            for c in mc.floats:
                out.write(f"{head}\t{c.name}\t{r.fcounters.get(c.name, 0.0):.6f}\t{r.path}\n")
    segments = job.segments()
    if segments:
        out.write(f"\n# trace: {len(segments)} operations\n")
        out.write("#<module>\t<rank>\t<op>\t<offset>\t<length>\t<start>\t<end>\t<file name>\n")
        for s in segments:
            times = f"{s.start_s:.6f}\t{s.end_s:.6f}"
            out.write(f"{s.module}\t{s.rank}\t{s.op}\t{s.offset}\t{s.length}\t{times}\t{s.path}\n")
