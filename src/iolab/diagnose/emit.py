"""``--emit-fixes DIR``: every finding's artifacts as files, plus an index.

Nothing of the user's is overwritten: DIR must be new, empty, or an earlier ``--emit-fixes``
folder (its README.md says so). A shell file that ``bash -n`` rejects is not written (the
index says why): the builders compute every file from the job, this is the last check.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from iolab.diagnose.jobfacts import job_facts
from iolab.diagnose.report import Report
from iolab.errors import UsageError

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
TITLE = "# Fixes proposed by iolab diagnose"
_SHELL_KINDS = ("env", "mpich-hints", "ompio-mca", "lfs", "slurm")


def _check_outdir(outdir: Path) -> None:
    if not outdir.is_dir() or not any(outdir.iterdir()):
        return
    idx = outdir / "README.md"
    try:
        ours = idx.is_file() and idx.read_text(errors="replace").startswith(TITLE)
    except OSError:
        ours = False
    if not ours:
        raise UsageError(f"--emit-fixes {outdir}: the folder holds other files (the fixes would "
                         "be written among them, README.md included); give a new or empty "
                         "folder")


def _shell_error(content: str) -> str:
    """``bash -n``'s complaint about ``content`` ("" when it parses, or without bash)."""
    bash = shutil.which("bash")
    if bash is None:
        return ""
    r = subprocess.run([bash, "-n"], input=content, capture_output=True, text=True,
                       timeout=30)
    return "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["bad syntax"])[-1]


def emit_fixes(rep: Report, outdir: Path) -> list[Path]:
    """Write artifacts under ``outdir/<rule-id>[-<direction>]/``; return the files written."""
    _check_outdir(outdir)
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{outdir}: cannot create ({exc.strerror}); choose another --emit-fixes"
                         " directory") from None
    written: list[Path] = []
    index = [TITLE, ""] + _job_lines(rep) + [""]
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
            bad = _shell_error(a.content) if (a.kind in _SHELL_KINDS or p.suffix in (
                ".sh", ".env", ".sbatch")) else ""
            if bad:
                index.append(f"- {sub}/{p.name}: not written, bash -n rejects it ({bad})")
                continue
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
