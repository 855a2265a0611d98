"""``--emit-fixes DIR``: every finding's artifacts as files, plus an index.

Nothing of the user's is overwritten or removed. iolab records what it wrote in
``DIR/.iolab-fixes.json`` (each file's SHA-256), so a second run into the same folder knows
which files are still exactly as it wrote them:

- a new or empty DIR: everything is written;
- a DIR an earlier ``--emit-fixes`` wrote: files iolab wrote and nobody changed are replaced
  (or, when the new log does not produce them, removed with their fix folders); if any file
  iolab wrote was changed since, the run is refused before anything is written (one line,
  exit 2: move the file out, or give a new folder) -- a folder half old, half new would
  describe two jobs. Files the user added are kept (a fix folder holding one is kept and
  said); a file the user added where iolab would write is refused;
- any other non-empty DIR (no record, or one an iolab older than the record wrote): refused.

A shell file that ``bash -n`` rejects is not written (the index says why): the builders
compute every file from the job, this is the last check.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iolab.diagnose.jobfacts import job_facts
from iolab.diagnose.report import Report
from iolab.errors import UsageError
from iolab.settings.change import describe

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
TITLE = "# Fixes proposed by iolab diagnose"
MANIFEST = ".iolab-fixes.json"
_KIND = "iolab-diagnose-fixes"
_BATCH_KINDS = ("slurm", "pbs", "lsf", "cobalt")  # batch scripts, one per scheduler
_SHELL_KINDS = ("env", "mpich-hints", "ompio-mca", "lfs", *_BATCH_KINDS)


@dataclass(frozen=True)
class FixFile:
    rel: str  # path under DIR, '/'-separated
    content: str
    executable: bool = False

    @property
    def sha256(self) -> str:
        return _sha(self.content.encode("utf-8"))


@dataclass
class Emitted:
    """What a run did in DIR: files written (the index last), earlier files removed, and
    earlier fix folders kept because they hold files iolab did not write."""

    written: list[Path] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the record of what iolab wrote --------------------------------------------------------


def _read_manifest(outdir: Path) -> dict[str, list[str]] | None:
    """rel -> the checksums iolab wrote there; None without a record (UsageError when the
    record cannot be read)."""
    path = outdir / MANIFEST
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        files = doc["files"] if doc.get("kind") == _KIND else None
        if not isinstance(files, dict):
            raise ValueError("not iolab's record")
        return {str(k): [str(s) for s in v] for k, v in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise UsageError(f"--emit-fixes {outdir}: its record {MANIFEST} cannot be read, so "
                         "iolab cannot tell which files you changed; give a new or empty "
                         "folder") from None


def _write_manifest(outdir: Path, files: dict[str, list[str]]) -> None:
    doc = {"schema_version": 1, "kind": _KIND,
           "note": "the files iolab diagnose --emit-fixes wrote here, with their SHA-256: a "
                   "file whose checksum differs was changed since and is never overwritten",
           "files": dict(sorted(files.items()))}
    _write_atomic(outdir / MANIFEST, json.dumps(doc, indent=2) + "\n", False)


def _changed_since(outdir: Path, record: dict[str, list[str]]) -> list[str]:
    """The recorded files that are no longer as iolab wrote them (missing ones are not)."""
    changed = []
    for rel, sums in sorted(record.items()):
        p = outdir / rel
        if not p.exists() and not p.is_symlink():
            continue
        try:
            same = p.is_file() and not p.is_symlink() and _sha(p.read_bytes()) in sums
        except OSError:
            same = False
        if not same:
            changed.append(rel)
    return changed


def check_folder(outdir: Path) -> dict[str, list[str]]:
    """The folder's record of iolab's files ({} for a new or empty folder); UsageError (one
    line, before any log is read) when the folder holds files iolab cannot account for, or
    a file iolab wrote that was changed since."""
    if not outdir.is_dir() or not any(outdir.iterdir()):
        return {}
    record = _read_manifest(outdir)
    if record is None:
        if _old_index(outdir):
            raise UsageError(f"--emit-fixes {outdir}: written by an older iolab that kept no "
                             "record of its files, so iolab cannot tell which you changed; "
                             "give a new folder (or empty this one)")
        raise UsageError(f"--emit-fixes {outdir}: the folder holds other files (the fixes would "
                         "be written among them, README.md included); give a new or empty "
                         "folder")
    changed = _changed_since(outdir, record)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise UsageError(f"--emit-fixes {outdir}: {changed[0]}{more} was changed since iolab "
                         "wrote it; iolab never overwrites or removes your changes: move it "
                         "out of the folder, or give a new one, and run again")
    return record


def _old_index(outdir: Path) -> bool:
    try:
        return (outdir / "README.md").read_text(errors="replace").startswith(TITLE)
    except OSError:
        return False


# --- what to write ---------------------------------------------------------------------------


def _shell_error(content: str) -> str:
    """``bash -n``'s complaint about ``content`` ("" when it parses, or without bash)."""
    bash = shutil.which("bash")
    if bash is None:
        return ""
    r = subprocess.run([bash, "-n"], input=content, capture_output=True, text=True,
                       timeout=30)
    return "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["bad syntax"])[-1]


def plan(rep: Report, prefix: str = "") -> list[FixFile]:
    """The files of one report under ``prefix`` (``""`` or ``"log0/"``): each finding's
    artifacts in ``<rule-id>[-<direction>]/``, the index README.md last."""
    files: list[FixFile] = []
    index = [TITLE, ""] + _job_lines(rep) + [""]
    for f in rep.findings:
        if not f.fix.artifacts:
            continue
        sub = f.rule.id + (f"-{f.hit.direction}" if f.hit.direction else "")
        folder = _SAFE.sub("_", sub)
        index += [f"## {sub} ({f.severity.upper()}): {f.rule.title}", f"{f.hit.summary}",
                  f"Fix: {f.fix.text}"]
        changes = describe(f.fix.settings, f.fix.code)
        if changes:
            index.append("Changes: " + "; ".join(changes))
        for a in f.fix.artifacts:
            name = _SAFE.sub("_", a.name)
            shell = a.kind in _SHELL_KINDS or Path(name).suffix in (".sh", ".env", ".sbatch")
            bad = _shell_error(a.content) if shell else ""
            if bad:
                index.append(f"- {sub}/{name}: not written, bash -n rejects it ({bad})")
                continue
            files.append(FixFile(f"{prefix}{folder}/{name}", a.content,
                                 a.kind in ("lfs", *_BATCH_KINDS) or name.endswith(".sh")))
            index.append(f"- {sub}/{name}: {a.note or a.kind}")
        index.append("")
    files.append(FixFile(f"{prefix}README.md", "\n".join(index) + "\n"))
    return files


def plan_all(reports: Sequence[Report]) -> list[FixFile]:
    """One report: its files in DIR; several: each in DIR/log<i>/."""
    if len(reports) == 1:
        return plan(reports[0])
    return [f for i, r in enumerate(reports) for f in plan(r, f"log{i}/")]


def check_plan(outdir: Path, files: Sequence[FixFile]) -> dict[str, list[str]]:
    """The folder's record, after :func:`check_folder`; UsageError when a file to write is
    one iolab did not write (the user's own file of that name)."""
    record = check_folder(outdir)
    for f in files:
        p = outdir / f.rel
        if f.rel not in record and (p.exists() or p.is_symlink()):
            raise UsageError(f"--emit-fixes {outdir}: {f.rel} is there and iolab did not write "
                             "it; iolab never overwrites your files: move it out of the "
                             "folder, or give a new one")
    return record


# --- writing ---------------------------------------------------------------------------------


def _write_atomic(path: Path, text: str, executable: bool) -> None:
    """Through a temporary file and a rename: a failure leaves the old contents."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, (0o777 if executable else 0o666) & ~mask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_planned(outdir: Path, files: Sequence[FixFile]) -> Emitted:
    """Write the planned files into a checked folder; remove the earlier files iolab wrote
    that the new set does not have (all unchanged: :func:`check_folder`), and their fix
    folders when nothing of the user's is left in them."""
    record = check_plan(outdir, files)
    new = {f.rel: [f.sha256] for f in files}
    stale = sorted(set(record) - set(new))
    out = Emitted()
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        # until the end, the record holds the old and the new versions: an interrupted run
        # leaves a folder the next run still accounts for
        _write_manifest(outdir, {r: sorted({*record.get(r, []), *new.get(r, [])})
                                 for r in {*record, *new}})
        for f in files:
            p = outdir / f.rel
            p.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(p, f.content, f.executable)
            out.written.append(p)
        for rel in stale:
            p = outdir / rel
            if p.is_file():
                p.unlink()
                out.removed.append(rel)
        _write_manifest(outdir, new)
    except OSError as exc:
        raise UsageError(f"--emit-fixes {outdir}: cannot write ({exc.strerror}); choose "
                         "another folder") from None
    out.kept = _remove_empty_folders(outdir, stale, {f.rel for f in files})
    return out


def _remove_empty_folders(outdir: Path, stale: Sequence[str], wanted: set[str]) -> list[str]:
    """The folders of removed files, when empty; the ones still holding the user's files
    are kept and returned (relative, '/'-separated)."""
    kept: set[str] = set()
    keep_dirs = {str(parent) for w in wanted for parent in Path(w).parents}
    for rel in stale:
        d = Path(rel).parent
        while str(d) not in (".", "") and str(d) not in keep_dirs:
            folder = outdir / d
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                if folder.is_dir():
                    kept.add(d.as_posix())
                break
            d = d.parent
    return sorted(kept)


def emit_fixes(rep: Report, outdir: Path) -> list[Path]:
    """Write one report's artifacts under ``outdir/<rule-id>[-<direction>]/`` and the index
    README.md; return the files written (the index last)."""
    return write_planned(outdir, plan(rep)).written


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
