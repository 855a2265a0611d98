"""What a fix artifact must know about the job it is for, read once from the model.

Every emitted file (hints, ``lfs`` commands, Slurm lines, buffering specs) is computed from
these facts, never from placeholders: which MPI library ran (ROMIO hints mean nothing to
Open MPI's OMPIO), how many ranks on how many nodes, which OSTs the LUSTRE records saw, the
layout of each file, the mount each file sits on, which files go through MPI-IO, and the
program and arguments from the log's command line.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING

from iolab.model.files import APP
from iolab.model.mpilib import MpiLibrary, mpi_library

if TYPE_CHECKING:
    from iolab.model.job import Model

# Darshan keeps at most this many characters of the command line (DARSHAN_EXE_LEN - 1).
_DARSHAN_EXE_MAX = 1023


@dataclass(frozen=True)
class JobFacts:
    mpi: MpiLibrary
    nprocs: int
    nodes: int | None
    ranks_per_node: int | None  # the most crowded node's ranks, when nodes are known
    cores_per_node: int | None
    command: tuple[str, ...]  # program and arguments from the log; empty when unknown
    command_note: str  # why the command may be incomplete ("" when it is complete)
    osts_known: int  # the file system has at least this many OSTs (0: no LUSTRE records)
    layouts: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, count)
    mounts: tuple[tuple[str, str], ...] = ()  # (mount point, type), longest first
    mpi_paths: frozenset[str] = frozenset()  # files accessed through MPI-IO
    app_paths: frozenset[str] = frozenset()  # the application's own files
    # The batch scheduler that ran the job ("slurm", "pbs", "lsf", "cobalt") and how it was
    # told (the launch line, a site's file systems); "" when the log does not say.
    scheduler: str = ""
    scheduler_evidence: str = ""

    @functools.cached_property
    def _mount_heads(self) -> tuple[tuple[str, str, str], ...]:
        """(mount point, its folder prefix, type): the prefixes made once, not per file."""
        return tuple((mnt, mnt.rstrip("/") + "/", typ) for mnt, typ in self.mounts)

    @functools.cached_property
    def _mount_places(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each mount's folder prefix, and its point, -> its place in ``_mount_heads`` (the
        first one of a repeated prefix)."""
        heads: dict[str, int] = {}
        points: dict[str, int] = {}
        for k, (mnt, head, _) in enumerate(self._mount_heads):
            heads.setdefault(head, k)
            points.setdefault(mnt, k)
        return heads, points

    def mount_of(self, path: str) -> tuple[str, str] | None:
        """The mount point holding ``path`` and its type (None when unknown): the first
        mount of ``_mount_heads`` that is ``path`` or one of its folders. Looked up by the
        path's own folder prefixes (a head ends with "/": ``path.startswith(head)`` only
        when ``head`` is ``path`` up to one of its "/"), not by trying every mount: a fix
        asking for 1,000 files on a node with 46 mounts made 46,000 startswith calls."""
        heads, points = self._mount_places
        folder = path[:path.rfind("/") + 1]  # every "/" of the path is in its folder
        by_folder = self._folder_mounts
        if folder not in by_folder:
            found = None
            cut = folder.find("/")
            while cut >= 0:
                k = heads.get(folder[:cut + 1])
                if k is not None and (found is None or k < found):
                    found = k
                cut = folder.find("/", cut + 1)
            by_folder[folder] = found
        best, own = by_folder[folder], points.get(path)
        if own is not None and (best is None or own < best):
            best = own
        if best is None:
            return None
        mnt, _, typ = self._mount_heads[best]
        return mnt, typ

    @functools.cached_property
    def _folder_mounts(self) -> dict[str, int | None]:
        """Folder -> the place of the first mount holding it (a job's files share a few)."""
        return {}

    def on_lustre(self, path: str) -> bool:
        """Lustre: the file has a layout in the LUSTRE records, or sits on a Lustre mount."""
        if path in self.layouts:
            return True
        m = self.mount_of(path)
        return m is not None and m[1].lower() == "lustre"

    def lustre_possible(self) -> bool:
        """May any file be on Lustre: a layout in the LUSTRE records, or a Lustre mount?"""
        return bool(self.layouts) or any(t.lower() == "lustre" for _, _, t in self._mount_heads)

    def any_on_lustre(self, paths: Iterable[str]) -> bool:
        """``any(self.on_lustre(p) for p in paths)``, without a mount look-up per file when
        no mount is Lustre (64,000 files: a second)."""
        paths = paths if isinstance(paths, (list, tuple, set, frozenset)) else list(paths)
        if not self.layouts.keys().isdisjoint(paths):
            return True
        if not any(typ.lower() == "lustre" for _, _, typ in self._mount_heads):
            return False
        return any(self.on_lustre(p) for p in paths)

    def is_mount_root(self, path: str) -> bool:
        p = path.rstrip("/") or "/"
        return p == "/" or any(p == (mnt.rstrip("/") or "/") for mnt, _ in self.mounts)

    @property
    def command_line(self) -> str:
        """The program and arguments, shell-quoted; "" when the log does not have them."""
        return shlex.join(self.command)


def _command(model: Model) -> tuple[tuple[str, ...], str]:
    exe = model.job.exe.strip()
    if not exe:
        return (), "the log does not record the command line"
    if model.job.source_kind == "iolab-profile":
        try:
            return tuple(shlex.split(exe)), ""
        except ValueError:
            pass
    # Darshan stores the command line as words joined by spaces, cut at 1023 characters.
    words = tuple(exe.split())
    note = ""
    if len(model.job.exe) >= _DARSHAN_EXE_MAX:
        note = "Darshan cut the command line at 1023 characters: check the last arguments"
    if model.job.n_logs > 1:
        note = (note + "; " if note else "") + "the first log's command of a workflow"
    return words, note


def _ranks_per_node(model: Model) -> int | None:
    job = model.job
    if job.rank_hosts and len(job.rank_hosts) >= job.nprocs:
        counts: dict[str, int] = {}
        for host in job.rank_hosts.values():
            counts[host] = counts.get(host, 0) + 1
        return max(counts.values())
    if job.nodes:
        return -(-max(job.nprocs, 1) // job.nodes)
    return None


# Where a log says nothing of its scheduler, a site's file systems do (data: mount prefix ->
# scheduler, the site). Only prefixes one scheduler serves: /lus/grand and /lus/eagle served
# Theta (Cobalt) and serve Polaris (PBS), so they tell nothing.
SITE_SCHEDULERS: tuple[tuple[str, str, str], ...] = (
    ("/lus/theta-fs0", "cobalt", "ALCF Theta"),
    ("/gpfs/alpine", "lsf", "OLCF Summit"),
    ("/gpfs/alpine2", "lsf", "OLCF Summit"),
    ("/lus/flare", "pbs", "ALCF Aurora"),
    ("/global/cscratch1", "slurm", "NERSC Cori"),
    ("/pscratch", "slurm", "NERSC Perlmutter"),
    ("/lustre/orion", "slurm", "OLCF Frontier"),
    ("/scratch/project_", "slurm", "CSC Puhti/Mahti/LUMI"),
)
# A site's prefix at a line's start, then the line's end or the head's "/" (a name that is the
# prefix or starts with its head): in the names joined by line breaks (_scheduler).
_SITE_TAILS = [re.escape(prefix) + ("" if prefix.endswith("_") else "[/\n]")
               for prefix, _, _ in SITE_SCHEDULERS]
_SITE_PATTERNS = tuple(re.compile("\n" + tail) for tail in _SITE_TAILS)
_ANY_SITE = re.compile("\n(?:" + "|".join(_SITE_TAILS) + ")")
# The launcher a recorded launch line names -> its scheduler.
LAUNCHER_SCHEDULERS = {"srun": "slurm", "sbatch": "slurm", "aprun": "cobalt",
                       "jsrun": "lsf", "qsub": "pbs"}


def _scheduler(model: Model, app_paths: frozenset[str]) -> tuple[str, str]:
    """(scheduler, evidence) from the job's own launch line (iolab profiles record it), else
    from the file systems of its files; ("", "") when neither says."""
    launch = model.job.metadata.get("launch", "")
    for word in launch.split():
        name = os.path.basename(word)
        if name in LAUNCHER_SCHEDULERS:
            return LAUNCHER_SCHEDULERS[name], f"launched with {name}"
    # a prefix's head: project_1234, or a folder
    heads = [(prefix, prefix if prefix.endswith("_") else prefix + "/")
             for prefix, _, _ in SITE_SCHEDULERS]
    names = [*app_paths, *(m for m, _ in model.job.mounts)]
    # the names one per line: a site's name or head after a line break is a name that is
    # it or starts with it (one scan in C for any site, then one per site in their order; a
    # startswith per name on 64,000 files cost 60 ms), unless a name holds a line break
    joined = "\n" + "\n".join(names) + "\n"
    if joined.count("\n") == len(names) + 1:
        if _ANY_SITE.search(joined) is None:
            return "", ""
        for pattern, (prefix, sched, site) in zip(_SITE_PATTERNS, SITE_SCHEDULERS):
            if pattern.search(joined):
                return sched, f"files on {prefix} ({site})"
        return "", ""
    exact, starts = frozenset(p for p, _ in heads), tuple(h for _, h in heads)
    paths = [p for p in names if p in exact or p.startswith(starts)]
    for (prefix, head), (_, sched, site) in zip(heads, SITE_SCHEDULERS):
        if any(p == prefix or p.startswith(head) for p in paths):
            return sched, f"files on {prefix} ({site})"
    return "", ""


def job_facts(model: Model) -> JobFacts:
    """The facts of ``model`` (computed once per model and kept on it)."""
    cached = vars(model).get("_iolab_job_facts")
    if isinstance(cached, JobFacts):
        return cached
    files = model.files
    # record id -> file, only when a layout needs it (a dict of 64,000 ids otherwise)
    pos = {int(i): k for k, i in enumerate(files.ids.tolist())} if model.stripes else {}
    layouts = {files.paths[pos[rid]]: (int(s), int(c)) for rid, (s, c) in model.stripes.items()
               if rid in pos and s > 0 and c > 0}
    osts = {o for v in model.lustre_osts.values() for o in v if o >= 0}
    # OST indices are numbered from 0: the highest one seen bounds the file system's count.
    osts_known = max([max(osts) + 1 if osts else 0] + [c for _, c in layouts.values()])
    md = model.mods.get("MPI-IO")
    mpi_paths = frozenset(files.paths[i] for i in set(md.file_index.tolist())) if (
        md is not None and len(md)) else frozenset()
    command, note = _command(model)
    app_paths = frozenset(compress(files.paths, (files.category == APP).tolist()))
    scheduler, evidence = _scheduler(model, app_paths)
    facts = JobFacts(
        mpi=mpi_library(model),
        nprocs=max(model.job.nprocs, 1),
        nodes=model.job.nodes,
        ranks_per_node=_ranks_per_node(model),
        cores_per_node=model.job.cores_per_node,
        command=command,
        command_note=note,
        osts_known=osts_known,
        layouts=layouts,
        mounts=tuple(sorted(((m, t) for m, t in model.job.mounts if m.startswith("/")),
                            key=lambda mt: -len(mt[0]))),
        mpi_paths=mpi_paths,
        app_paths=app_paths,
        scheduler=scheduler,
        scheduler_evidence=evidence,
    )
    vars(model)["_iolab_job_facts"] = facts
    return facts


def own_file(facts: JobFacts, path: str) -> bool:
    """A path a fix may name: one of the job's application files, absolute, not a mount
    root, a real name (not an anonymised record) and printable on one line."""
    return (path in facts.app_paths and os.path.isabs(path) and not facts.is_mount_root(path)
            and not path.startswith("<") and path.isprintable())
