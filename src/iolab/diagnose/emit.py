"""``--emit-fixes DIR``: every finding's artifacts as files, plus an index."""

from __future__ import annotations

import os
import re
from pathlib import Path

from iolab.diagnose.jobfacts import job_facts
from iolab.diagnose.report import Report
from iolab.errors import UsageError

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def emit_fixes(rep: Report, outdir: Path) -> list[Path]:
    """Write artifacts under ``outdir/<rule-id>[-<direction>]/``; return the files written."""
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{outdir}: cannot create ({exc.strerror}); choose another --emit-fixes"
                         " directory") from None
    written: list[Path] = []
    index = ["# Fixes proposed by iolab diagnose", ""] + _job_lines(rep) + [""]
    for f in rep.findings:
        if not f.fix.artifacts:
            continue
        sub = f.rule.id + (f"-{f.hit.direction}" if f.hit.direction else "")
        d = outdir / _SAFE.sub("_", sub)
        d.mkdir(exist_ok=True)
        index.append(f"## {sub} ({f.severity.upper()}): {f.rule.title}")
        index.append(f"{f.hit.summary}")
        index.append(f"Fix: {f.fix.text}")
        for a in f.fix.artifacts:
            p = d / _SAFE.sub("_", a.name)
            p.write_text(a.content)
            if a.kind in ("lfs", "slurm") or a.name.endswith(".sh"):
                os.chmod(p, 0o755)
            written.append(p)
            index.append(f"- {sub}/{p.name}: {a.note or a.kind}")
        index.append("")
    idx = outdir / "README.md"
    idx.write_text("\n".join(index) + "\n")
    written.append(idx)
    return written


def _job_lines(rep: Report) -> list[str]:
    """What the files were computed for: check it matches the job you will run."""
    facts = job_facts(rep.model)
    where = f" on {facts.nodes} node(s)" if facts.nodes else " (nodes not in the log)"
    lines = [f"For: `{facts.command_line or '(command line not in the log)'}`, "
             f"{facts.nprocs} rank(s){where}.",
             f"MPI library: {facts.mpi.label} ({facts.mpi.evidence}).",
             "Lustre: " + (f"at least {facts.osts_known} OSTs seen in the log." if
                           facts.osts_known else "no layout records in the log.")]
    if facts.command_note:
        lines.append(f"Note: {facts.command_note}.")
    return lines
