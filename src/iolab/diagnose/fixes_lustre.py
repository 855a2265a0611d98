"""Lustre fix artifacts: ``lfs setstripe`` scripts for the job's own files and new
directories, from the job's facts (:mod:`iolab.diagnose.jobfacts`).

Only the job's own files on Lustre, never a mount root or a shared directory: a new file with
the layout, then a copy (the KAUST seminar's way), or a new directory for the next run's
output; never fewer stripes than a file already has when the fix is more stripes. Split from
:mod:`iolab.diagnose.fixes` (the MPI-IO hints, environment and code builders).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from iolab.diagnose.jobfacts import job_facts, own_file
from iolab.diagnose.rules.base import Artifact
from iolab.settings import catalogue
from iolab.settings.apply import lfs_changes, lfs_size, lfs_words_of
from iolab.settings.change import SettingChange
from iolab.units import LUSTRE_STRIPE_UNIT

if TYPE_CHECKING:
    from iolab.diagnose.striping import StripeCount
    from iolab.model.job import Model


def stripe_size(n: int) -> int:
    """A valid Lustre stripe size near ``n``: a multiple of 64 KiB, 64 KiB to 4 GiB - 64 KiB
    (requests of 4 KiB never become a 4 KiB stripe)."""
    unit = LUSTRE_STRIPE_UNIT
    n = max(int(n), unit)
    return min(n - n % unit, catalogue.LUSTRE_STRIPE_MAX)


# The script's shell function for a count above the OSTs the log proves: asks `lfs df`.
_STRIPES_FUNCTION = [
    "# stripes N DIR: N, or the OSTs of DIR's file system when it has fewer (lfs df)",
    "stripes() {",
    "    local osts",
    "    osts=$(lfs df \"$2\" | grep -c '\\[OST:' || true)",
    "    if [ \"${osts:-0}\" -lt 1 ]; then echo \"lfs df $2: no OST listed\" >&2; return 1; fi",
    "    echo $(( $1 < osts ? $1 : osts ))",
    "}"]


def lfs_setstripe(model: Model, paths: Iterable[str], count: int | Mapping[str, StripeCount],
                  size: int, name: str, keep_count: bool = False,
                  more_stripes: bool = False) -> list[Artifact]:
    """Re-create the job's own Lustre files with ``count`` stripes of ``size`` (each file: a
    new file with the layout, a copy, a rename), and a new directory for the next run's
    output with that layout. ``count``: one number for every file (1: a single OST), or each
    file's :class:`StripeCount` (its origin goes into the comment; above the OSTs the log
    proves, the script asks ``lfs df`` when it runs). ``keep_count``: each file keeps its
    current stripe count (the fix is about size); ``more_stripes``: files already striped at
    least as widely are left alone. Nothing when no named file is the job's own on Lustre."""
    if model.job.names_anonymised:
        return []  # hashed names: a script would name files that do not exist
    facts = job_facts(model)
    size = stripe_size(size)
    lines = ["#!/bin/bash",
             "# Lustre layouts are fixed when a file is created (KAUST: create a new file with",
             "# the layout and copy the old one into it). Run after the job, not while it runs.",
             f"# The file system has at least {facts.osts_known} OSTs (highest OST index in the "
             "log); `lfs df` shows them all." if facts.osts_known else
             "# The log has no Lustre layout records: check the OSTs with `lfs df` first.",
             "set -e"]
    n = 0
    dirs: dict[str, tuple[int, bool]] = {}
    uses_df = False
    layouts: list[SettingChange] = []  # the data the script renders: each file's layout
    for p in dict.fromkeys(paths):
        if not (own_file(facts, p) and facts.on_lustre(p)):
            continue
        cur = facts.layouts.get(p)
        if keep_count and not cur:
            continue  # the count to keep is not in the log: never guess it down to 1
        plan = None
        if isinstance(count, Mapping):
            plan = count.get(p)
            if plan is None:
                continue
        c = (cur[1] if keep_count and cur else plan.count if plan else
             max(1, int(count)) if isinstance(count, int) else 1)
        # A fix of the count keeps the file's own stripe size (1 MiB, the size of CSC's and
        # KAUST's examples, when the log has no layout for it).
        fsize = stripe_size(cur[0]) if plan and cur else size
        if cur and ((more_stripes and cur[1] >= c) or (cur[1] == c and cur[0] == fsize)):
            continue  # already as wide, or already this layout
        now = f"now {cur[1]} x {lfs_size(cur[0])}" if cur else "layout not in the log"
        why = (f" ({plan.comment}; stripe size "
               + ("its own" if cur else f"{lfs_size(size)}, CSC's and KAUST's examples")
               + ")" if plan else " (keeps its stripe count)" if keep_count else "")
        lines.append(f"# {p}: {now} -> {c} x {lfs_size(fsize)}{why}")
        layout = lfs_changes(c, fsize, paths=(p,), file=name)
        layouts += layout
        lines += _restripe_lines(p, layout, c, bool(plan and plan.ask_lfs_df))
        uses_df = uses_df or bool(plan and plan.ask_lfs_df)
        n += 1
        d = os.path.dirname(p)
        if not facts.is_mount_root(d):
            old = dirs.get(d, (0, False))
            dirs[d] = (max(old[0], c), old[1] or bool(plan and plan.ask_lfs_df))
        if n >= 50:
            lines.append("# (first 50 files; the others take the same command)")
            break
    if n == 0:
        return []
    if uses_df:
        lines[5:5] = _STRIPES_FUNCTION
    for d, (c, df) in ([] if keep_count else list(dirs.items())[:5]):
        new_dir = os.path.join(d, "iolab-striped")
        layout = lfs_changes(c, size, paths=(new_dir,), file=name)
        layouts += layout
        new = shlex.quote(new_dir)
        lines.append(f"# next run: write the output into a new directory with this layout "
                     f"(point the program's output path there): mkdir {new} && "
                     f"{' '.join(lfs_words_of(layout, new))}"
                     + (" (fewer stripes if `lfs df` shows fewer OSTs)" if df else ""))
    return [Artifact("lfs", name, "\n".join(lines) + "\n", "Lustre striping commands",
                     settings=tuple(layouts))]


def _restripe_lines(path: str, layout: tuple[SettingChange, ...], count: int,
                    ask_lfs_df: bool) -> list[str]:
    """Re-create ``path`` with ``layout`` (its lfs settings): a new file with the layout, a
    copy, a rename; ``ask_lfs_df``: ``count`` is above the OSTs the log proves, so the script
    takes fewer when `lfs df` shows fewer (``stripes``, _STRIPES_FUNCTION)."""
    tmp, q = shlex.quote(path + ".iolab-restripe"), shlex.quote(path)
    ask = [f"c=$(stripes {count} {shlex.quote(os.path.dirname(path))})"] if ask_lfs_df else []
    words = lfs_words_of(layout, tmp, '"$c"' if ask_lfs_df else None)
    return [*ask, f"{' '.join(words)} && cp -p {q} {tmp} && mv {tmp} {q}"]


def lfs_new_dirs(model: Model, dirs: Iterable[str], size: int, name: str) -> list[Artifact]:
    """New directories (beside the crowded ones the job wrote into) whose new files get one
    stripe of ``size`` (KAUST: directories of many small files on single OSTs; one stripe
    fits every file system): a directory's layout never changes other jobs' files."""
    if model.job.names_anonymised:
        return []  # hashed names: no directory to name
    facts = job_facts(model)
    if not facts.lustre_possible():
        return []  # no file can be on Lustre (no layout, no Lustre mount): no directory to set
    size, count = stripe_size(size), 1
    # the job's files by directory, grouped once: scanning every file for every crowded
    # directory was quadratic (64,000 files in 64 directories: 4 million dirname calls)
    files_in: dict[str, list[str]] = {}
    for p in facts.app_paths:  # by the head before the last "/" (dirname's input), then
        files_in.setdefault(p[:p.rfind("/") + 1], []).append(p)
    by_dir: dict[str, list[str]] = {}  # ... one dirname per head, not per file
    for head, ps in files_in.items():
        by_dir.setdefault(os.path.dirname(head), []).extend(ps)
    files_in = by_dir
    lines = ["#!/bin/bash",
             "# New directories for the job's many small files (one per crowded directory), each",
             f"# with {count} stripe(s) for the files created in it; point the program there.",
             "set -e"]
    n = 0
    layouts: list[SettingChange] = []
    for d in dict.fromkeys(dirs):
        if d not in files_in or facts.is_mount_root(d) or not d.startswith("/") or not (
                d.isprintable() and facts.any_on_lustre(files_in[d])):
            continue
        new_dir = os.path.join(d, "iolab-c1" if count == 1 else f"iolab-c{count}")
        layout = lfs_changes(count, size, paths=(new_dir,), file=name)
        layouts += layout
        lines.append(f"mkdir {shlex.quote(new_dir)} && "
                     f"{' '.join(lfs_words_of(layout, shlex.quote(new_dir)))}")
        n += 1
        if n >= 20:
            break
    if n == 0:
        return []
    return [Artifact("lfs", name, "\n".join(lines) + "\n", "Lustre directory layouts",
                     settings=tuple(layouts))]
