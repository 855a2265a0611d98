"""Fix artifacts: hints files, environment lines, ``lfs`` commands, Slurm lines, snippets.

Every builder takes the model and returns :class:`Artifact` objects computed from the job's
own facts (:mod:`iolab.diagnose.jobfacts`), so that ``--emit-fixes DIR`` writes files a user
can source or run as they are, and that can do no harm:

- MPI-IO hints in the form the job's MPI library reads: a ROMIO hints file (MPICH, Intel
  MPI, Open MPI's ROMIO component), Open MPI OMPIO's MCA parameters, Cray MPICH's
  ``MPICH_MPIIO_HINTS`` (``pattern:key=value:...``, comma-separated) for the files named;
  names from one table, values checked (64 KiB multiples for stripes, counts within the
  OSTs the log saw), ROMIO's defaults and hints already in effect left out;
- ``lfs setstripe`` scripts (:mod:`iolab.diagnose.fixes_lustre`);
- Slurm lines from the job's ranks and nodes (``-c`` computed at run time, at least 1) and
  the program and arguments of the log's command line;
- buffering patterns for exactly the files a finding names, never MPI-IO files.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose.batch_scripts import program_words
from iolab.diagnose.fixes_lustre import stripe_size
from iolab.diagnose.jobfacts import JobFacts, job_facts, own_file
from iolab.diagnose.rules.base import Artifact
from iolab.diagnose.snippets import CHANGES as SNIPPETS_CHANGES
from iolab.diagnose.snippets import SNIPPETS
from iolab.settings import catalogue
from iolab.settings.apply import (  # noqa: F401 (cray_hints: diagnose's name for tests)
    ROMIO_SWITCH_VALUE,
    changes,
    cray_carried,
    cray_hints,
    cray_line,
    hints_file_of,
    lfs_changes,
    lfs_size,
    lfs_words_of,
    mca_export,
    mca_lines,
    mpich_mpiio_hints,
    ompio_settings,
    romio_env_lines,
    romio_switch_line,
)
from iolab.settings.change import CodeChange, SettingChange, collective

if TYPE_CHECKING:
    from iolab.model.job import Model

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# The directory of the sourced file, so that it can be sourced from anywhere.
_HERE = '$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)'
# Characters a pattern list cannot hold as they are (separators, glob metacharacters); the
# shell quoting of the whole list takes care of the rest.
_PATTERN_UNSAFE = set(",:*?[]\\\n\t")


# ---- MPI-IO hints --------------------------------------------------------------------------

def _hint_value(facts: JobFacts, key: str, value: str) -> str | None:
    """``value`` made valid for this job, or None to leave the hint out: the catalogue's
    domain (iolab.settings), then the job's own limits."""
    row = catalogue.setting(key)
    if row is None or not row.is_hint:
        return None
    kind = row.domain
    v = str(value).strip()
    if kind == "config":
        host, _, per = v.partition(":")
        if host != "*" or not per.isdigit() or int(per) < 1:
            return None
        per_node = min(int(per), facts.ranks_per_node or int(per))
        return f"*:{per_node}"
    if kind in ("stripe", "bytes"):  # rounded to 64 KiB below, so any whole number >= 1
        if not v.isdigit() or int(v) < 1:
            return None
    elif catalogue.parse(row, v) is None:
        return None
    if kind not in catalogue.NUMERIC:
        return v
    n = int(v)
    if kind == "stripe":  # Lustre only: a multiple of 64 KiB
        return str(stripe_size(n)) if facts.osts_known else None
    if kind == "osts":  # the aggregators wanted: never more than the ranks (see romio_hints)
        return str(min(n, facts.nprocs)) if facts.osts_known else None
    if kind == "count" and key == "cb_nodes":
        return str(min(n, facts.nprocs))
    if kind == "bytes":  # buffers: whole 64 KiB units
        return str(max(n - n % (64 * KiB), 64 * KiB))
    return str(n)


def _valid_hints(facts: JobFacts, model: Model, hints: Mapping[str, str],
                 named: Iterable[str] = ()) -> tuple[dict[str, str], list[str]]:
    """The hints worth setting: known names, valid values, not ROMIO's default, not already
    in effect for every file of the job (iolab profiles record the hints in effect), and a
    hint read only inside collective calls only where the program makes some (on the
    ``named`` files, all of the job's without names)."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    in_effect = list(model.job.hints.values())
    for key, value in hints.items():
        v = _hint_value(facts, key, value)
        row = catalogue.setting(key)
        d = "write" if key.endswith("_write") else "read" if key.endswith("_read") else None
        if v is None:
            dropped.append(f"{key}={value} (not valid for this job)")
        elif row is not None and row.collective_only and not collective_calls(model, named, d):
            # a hints file cannot act on independent calls (issue 32: it measured nothing)
            dropped.append(f"{key}={v} (acts only inside collective calls; the program's "
                           f"{d + ' ' if d else ''}calls on these files are independent)")
        elif key == "cb_config_list" and not facts.nodes:
            # *:N asks N aggregators on each node; how many that is, and whether they spread
            # over the job's nodes, the log cannot tell (it gives no node count)
            dropped.append(f"{key}={v} (the log does not give the node count: set cb_nodes "
                           "to the aggregators wanted, one or two per node of the job)")
        elif row is not None and catalogue.default(row, "romio") == v:
            dropped.append(f"{key}={v} (ROMIO's default already)")
        elif in_effect and all(h.get(key) == v for h in in_effect):
            dropped.append(f"{key}={v} (already in effect)")
        else:
            kept[key] = v
    return kept, dropped


def _stripe_of_named(facts: JobFacts, named: list[str], kept: dict[str, str],
                     dropped: list[str]) -> None:
    """``striping_unit`` is the named MPI-IO files' own stripe size when the log has their
    layout (one size for all of them; several sizes: left out)."""
    if "striping_unit" not in kept:
        return
    sizes = {facts.layouts[p][0] for p in named if p in facts.mpi_paths and p in facts.layouts}
    if len(sizes) > 1:
        dropped.append(f"striping_unit (the files have different stripe sizes: "
                       f"{', '.join(map(str, sorted(sizes)))})")
        del kept["striping_unit"]
    elif sizes:
        kept["striping_unit"] = str(sizes.pop())


def _cray_patterns(facts: JobFacts, paths: Iterable[str]) -> list[str]:
    """MPICH_MPIIO_HINTS patterns (glob(7) on the name given to MPI_File_open) for the named
    MPI-IO files: the name opened from its own directory, the absolute path, and any path
    ending in the name (where ``*`` may match ``/``)."""
    out: list[str] = []
    for p in paths:
        base = os.path.basename(p)
        if p in facts.mpi_paths and own_file(facts, p) and base and not (
                set(p) & _PATTERN_UNSAFE):
            for pat in (base, p, f"*/{base}"):
                if pat not in out:
                    out.append(pat)
    return out[:32]


def romio_hints(model: Model, hints: Mapping[str, str], stem: str = "romio_hints",
                paths: Iterable[str] = ()) -> list[Artifact]:
    """MPI-IO hints in the form the job's MPI library reads (see the module docstring);
    ``paths``: the files the finding names (Cray patterns; ``*`` without them). Nothing when
    the job has no MPI-IO, when the named files are none of its MPI-IO files (hints would
    reach only the others), or when no hint is worth setting. Each file carries the
    settings it sets (:class:`SettingChange`), which is what ``tune --from-log`` reads.

    Under Open MPI's OMPIO a ROMIO hint never travels alone: OMPIO's own parameters (a
    ``.ompio.env`` only when it sets one), and the ROMIO switch in the same ``.env`` file
    that names the hints file."""
    facts = job_facts(model)
    lib = facts.mpi
    named = list(paths)
    if lib.name == "none" or (named and not set(named) & facts.mpi_paths):
        return []
    kept, dropped = _valid_hints(facts, model, hints, named)
    _stripe_of_named(facts, named, kept, dropped)
    if not kept:
        return []
    scope = tuple(named)
    head = [f"# For {facts.command[0] if facts.command else 'this job'}: MPI library "
            f"{lib.label} ({lib.evidence})."]
    head += [f"# left out: {d}" for d in dropped]
    wide = int(kept.get("striping_factor", "0"))
    if wide > facts.osts_known:  # a hints file cannot ask `lfs df` as the lfs scripts do
        head.append(f"# striping_factor {wide}: more than the {facts.osts_known} OST(s) the log "
                    "proves; Lustre gives a new file at most the OSTs it has (`lfs df`)")
    out: list[Artifact] = []
    if lib.io in ("ompio", "unknown"):
        out += _ompio_file(facts, kept, head, stem, scope)
    if lib.name != "cray-mpich":
        out += _romio_files(lib.io, kept, head, stem, scope)
    carried, notes = cray_carried(kept, facts.nodes, facts.nprocs)
    name = f"{stem}.cray.env"
    cray = changes(carried, "cray", scope, name)
    line = cray_line(cray, _cray_patterns(facts, named) or ["*"])
    if lib.name in ("cray-mpich", "unknown") and line:
        out.append(Artifact("mpich-hints", name,
                            "\n".join([*head, *notes, line]) + "\n"
                            "export MPICH_MPIIO_HINTS_DISPLAY=1  # Cray MPICH prints the hints "
                            "it used\n", "Cray MPICH", settings=cray))
    if lib.io != "ompio":  # the library's own form first
        out.sort(key=lambda a: a.kind == "ompio-mca")
    return out


def collective_calls(model: Model, paths: Iterable[str] = (), direction: str | None = None
                     ) -> bool:
    """The program reaches these files (every MPI-IO file of the job when none is named)
    with collective calls in ``direction`` (either without one): what collective-buffering
    hints and OMPIO's fcoll parameters need, as ROMIO and OMPIO read them only inside
    collective calls. Where the log has the file's HDF5 or PnetCDF records, the library's
    data calls decide (H5D_USE_MPIIO_COLLECTIVE; PNETCDF_VAR_COLL_*, or non-blocking
    requests a collective wait completes): the MPI-IO layer's collective calls may be
    metadata alone (HDF5's collective metadata, PnetCDF's header). Otherwise the MPI-IO
    layer's collective, split-collective and non-blocking calls (Darshan counts
    MPI_File_iwrite_all among the last)."""
    names = {p: i for i, p in enumerate(model.files.paths)}
    idx = [names[p] for p in paths if p in names]
    if not idx:
        idx = np.nonzero(model.layers.mpiio.present)[0].tolist()
    dirs = (direction,) if direction in ("read", "write") else ("read", "write")
    return any(_file_collective(model, i, dirs) for i in idx)


def _file_collective(model: Model, i: int, dirs: tuple[str, ...]) -> bool:
    h5d, var = model.mods.get("H5D"), model.mods.get("PNETCDF_VAR")
    if h5d is not None and len(h5d) and (h5d.file_index == i).any():
        rows = h5d.file_index == i
        moved = sum(int(h5d.pos(f"H5D_{'WRITES' if d == 'write' else 'READS'}")[rows].sum())
                    for d in dirs)
        return moved > 0 and bool(h5d.pos("H5D_USE_MPIIO_COLLECTIVE")[rows].sum() > 0)
    if var is not None and len(var) and (var.file_index == i).any():
        rows = var.file_index == i
        pf = model.mods.get("PNETCDF_FILE")
        frows = None if pf is None else pf.file_index == i
        indep_waits = (pf is not None and frows is not None and frows.any()
                       and pf.has("PNETCDF_FILE_COLL_WAITS")
                       and int(pf.pos("PNETCDF_FILE_COLL_WAITS")[frows].sum()) == 0)
        for d in dirs:
            op = "WRITES" if d == "write" else "READS"
            if var.pos(f"PNETCDF_VAR_COLL_{op}")[rows].sum() > 0:
                return True
            if var.pos(f"PNETCDF_VAR_NB_{op}")[rows].sum() > 0 and not indep_waits:
                return True
        return False
    calls = model.layers.calls
    return any(float(calls.of(d)[k][i]) > 0 for d in dirs for k in ("COLL", "SPLIT", "NB"))


def sieving_acts(model: Model, paths: Iterable[str], direction: str) -> bool:
    """ROMIO's data sieving (romio_ds_read / romio_ds_write) can act on these independent
    calls: each MPI-IO call covers several pieces of the file (its bytes per call at least
    twice the POSIX requests' beneath it, no more POSIX bytes than MPI-IO bytes: ROMIO went
    piece by piece, its path with sieving off). ADIOI_GEN_WriteStrided / ReadStrided
    (ad_write_str.c, ad_read_str.c) sieve only inside one call through a noncontiguous file
    view; a call of one contiguous piece (HDF5's independent transfers of a hyperslab reach
    MPI-IO so) goes straight to ADIO_WriteContig / ReadContig, which no hint merges."""
    names = {p: i for i, p in enumerate(model.files.paths)}
    idx = [names[p] for p in paths if p in names]
    if not idx:
        return False
    L = model.layers
    w = direction == "write"
    m_ops = float(L.calls.total(direction)[idx].sum())
    m_bytes = float((L.mpiio.bytes_written if w else L.mpiio.bytes_read)[idx].sum())
    p_ops = float((L.posix.writes if w else L.posix.reads)[idx].sum())
    p_bytes = float((L.posix.bytes_written if w else L.posix.bytes_read)[idx].sum())
    if m_ops <= 0 or p_ops <= 0:
        return False
    return p_bytes <= 1.05 * m_bytes and m_bytes / m_ops >= 2 * (p_bytes / p_ops)


def ompio_parameters_file(model: Model, params: Mapping[str, str], stem: str,
                          paths: Iterable[str] = (), why: str = "") -> list[Artifact]:
    """OMPIO's own MCA parameters (catalogue rows, values checked) as ``STEM.ompio.env``, for
    a job that ran OMPIO; nothing under another library or for parameters read only inside
    collective calls where the program makes none."""
    if job_facts(model).mpi.io != "ompio":
        return []
    named = list(paths)
    kept: dict[str, str] = {}
    for key, value in params.items():
        row = catalogue.setting(key)
        v = None if row is None or row.is_hint else catalogue.parse(row, value)
        if v is not None and not (row is not None and row.collective_only
                                  and not collective_calls(model, named)):
            kept[key] = v
    if not kept:
        return []
    name = f"{stem}.ompio.env"
    settings = changes(kept, "ompio", tuple(dict.fromkeys(named)), name)
    lines = [f"# Open MPI's OMPIO ran this job{': ' + why if why else ''}.",
             *mca_lines(settings)]
    return [Artifact("ompio-mca", name, "\n".join(lines) + "\n",
                     "Open MPI (OMPIO): source before mpirun", settings=settings)]


def independent_pieces(model: Model, paths: Iterable[str], direction: str | None
                       ) -> tuple[str, list[Artifact]]:
    """What a hint can do for small independent calls on these files, as (a sentence, the
    hints files): data sieving where each call covers several pieces (sieving_acts), none
    where each call is one piece, and why."""
    paths = list(paths)
    d = "read" if direction == "read" else "write"
    if sieving_acts(model, paths, d):
        key, buf = f"romio_ds_{d}", "ind_wr_buffer_size" if d == "write" else (
            "ind_rd_buffer_size")
        return ((f" Each independent call covers several pieces that ROMIO {d}s one by one: "
                 f"data sieving ({key} enable, a hint that acts on independent calls) "
                 + ("reads, fills and writes back" if d == "write" else "reads")
                 + f" whole buffers ({buf}) around them."),
                romio_hints(model, {key: "enable"}, "romio_hints_sieving", paths))
    return ((" Each independent call is one contiguous piece, so no hint merges them: ROMIO "
             "sieves only inside one call through a noncontiguous file view, and collective "
             "buffering acts only inside collective calls."), [])


def _ompio_file(facts: JobFacts, kept: Mapping[str, str], head: list[str], stem: str,
                scope: tuple[str, ...]) -> list[Artifact]:
    """OMPIO's MCA parameters for the hints that have one; nothing when none has (a file of
    comments alone set nothing: was an empty ``.ompio.env``)."""
    lines, pairs, none = ompio_settings(kept, facts.nodes, facts.nprocs)
    if not pairs:
        return []
    body = head + ["# Open MPI's default MPI-IO (OMPIO) ignores ROMIO hints files: these "
                   "are its MCA parameters."] + lines
    if none:
        body.append(f"# no OMPIO equivalent for {', '.join(none)}: {stem}.env switches Open "
                    "MPI to ROMIO and names the hints file that sets them")
    name = f"{stem}.ompio.env"
    return [Artifact("ompio-mca", name, "\n".join(body) + "\n",
                     "Open MPI (OMPIO): source before mpirun",
                     settings=changes(dict(pairs), "ompio", scope, name))]


def _romio_files(io: str, kept: Mapping[str, str], head: list[str], stem: str,
                 scope: tuple[str, ...]) -> list[Artifact]:
    """The ROMIO hints file and the ``.env`` that names it; under OMPIO (and commented when
    the library is unknown) the ``.env`` also switches Open MPI to ROMIO, so that the hints
    and the switch they need are sourced together."""
    romio = changes({k: v for k, v in kept.items()
                     if (row := catalogue.setting(k)) is None or "romio" in row.libraries},
                    "romio", scope, f"{stem}.txt")
    body = "\n".join(head) + "\n" + hints_file_of(romio)
    if io == "ompio":
        body = (f"# Open MPI: source {stem}.env, which switches to ROMIO and names this file; "
                "OMPIO, the default, ignores it.\n" + body)
    env_name = f"{stem}.env"
    settings = changes({catalogue.ROMIO_SWITCH: ROMIO_SWITCH_VALUE} if io == "ompio" else {},
                       "ompio", scope, env_name)
    env = romio_env_lines(settings, f'"{_HERE}/{stem}.txt"', io)
    return [Artifact("romio-hints", f"{stem}.txt", body,
                     "ROMIO hints file (MPICH, Intel MPI, Open MPI with io romio)",
                     settings=romio),
            Artifact("env", env_name,
                     "\n".join(env) + "\n"
                     "export ROMIO_PRINT_HINTS=1  # check in the job output that they "
                     "applied\n", "ROMIO: source before mpirun/srun", settings=settings)]


def cray_direct_io(model: Model) -> list[Artifact]:
    """Cray MPICH's direct I/O switches, for jobs that may run on Cray MPICH (they mean
    nothing to other libraries)."""
    if job_facts(model).mpi.name not in ("cray-mpich", "unknown"):
        return []
    return [env(["export MPIO_DIRECT_READ=TRUE   # Cray MPICH: direct reads in MPI-IO",
                 "export MPIO_DIRECT_WRITE=TRUE  # and writes (aligned requests only)"],
                "direct_io.env", "Cray MPICH direct I/O")]


def env(lines: Iterable[str], name: str, note: str = "") -> Artifact:
    return Artifact("env", name, "\n".join(lines) + "\n", note)


def snippets(topic: str, change: CodeChange | None = None, ompio: bool = False
             ) -> list[Artifact]:
    """The C, Fortran and Python versions of one code change, each carrying the change as
    data (``change``, else the topic's own: snippets.CHANGES). ``ompio``: the job runs
    under Open MPI's OMPIO, which ignores ROMIO hints: MPI_Info_set lines of ROMIO hints are
    left out of the code (a ROMIO hint never goes alone), with a comment saying why."""
    data = change or SNIPPETS_CHANGES.get(topic)
    code = (data,) if data else ()
    out = []
    for lang, ext in (("c", "c"), ("fortran", "f90"), ("python", "py")):
        text = SNIPPETS.get((topic, lang))
        if text:
            if ompio:
                text = _without_romio_hints(text, lang)
            out.append(Artifact(f"snippet-{lang}", f"{topic}.{ext}", text, f"{lang} snippet",
                                code=code))
    return out


def _without_romio_hints(code: str, lang: str) -> str:
    lines = [ln for ln in code.splitlines() if "romio_" not in ln]
    if len(lines) == len(code.splitlines()):
        return code
    mark = {"c": "/* {} */", "fortran": "! {}", "python": "# {}"}[lang]
    note = mark.format("Open MPI's OMPIO ignores ROMIO hints (left out); it aggregates "
                       "collective calls itself (OMPI_MCA_fcoll)")
    return "\n".join([lines[0], note, *lines[1:]]) + "\n"


def io_layer(model: Model, paths: Iterable[str]) -> str:
    """The layer whose calls made the I/O on these files: "hdf5" or "pnetcdf" when that
    library made them all, else "mpiio"."""
    L, pos = model.layers, {p: i for i, p in enumerate(model.files.paths)}
    libs = {str(L.library[pos[p]]) for p in paths if p in pos}
    lib = libs.pop() if len(libs) == 1 else ""
    return {"HDF5": "hdf5", "PnetCDF": "pnetcdf"}.get(lib, "mpiio")


def job_direction(model: Model, direction: str | None) -> str:
    """The direction a change concerns: the finding's, else "read" for a job that wrote no
    bytes (a read-only job never gets write advice), else "write"."""
    if direction in ("read", "write"):
        return direction
    return "write" if model.metrics.bytes_by_dir["write"] > 0 else "read"


def collective_code(model: Model, paths: Iterable[str], direction: str | None = None,
                    change: CodeChange | None = None) -> list[Artifact]:
    """Collective transfers at the layer the program calls (HDF5's transfer property,
    PnetCDF's _all calls, MPI-IO's _all calls), in the finding's direction; an experiment
    (iolab.settings.change.EXPERIMENT): the counters never show how the same pattern runs
    collectively under the job's library (under Open MPI's OMPIO it can be slower).
    ``change``: what the snippet shows instead, for calls already collective (more data
    per call: not a switch to collective, so no experiment and no ``collective`` knob).

    Under OMPIO the switch to ROMIO comes with it (``romio_switch.env``): collective calls
    measured slower under OMPIO for two of issue #32's programs and faster together with
    ROMIO, so the experiment is both, with and without the switch."""
    layer = io_layer(model, paths)
    d = job_direction(model, direction)
    topic = {"hdf5": f"hdf5_collective_{d}", "pnetcdf": f"pnetcdf_collective_{d}",
             "mpiio": "collective_io" if d == "write" else "collective_io_read"}[layer]
    calls = SNIPPETS_CHANGES[topic].calls
    ompio = job_facts(model).mpi.io == "ompio"
    out = snippets(topic, change or collective(layer, d, calls), ompio=ompio)
    if ompio and change is None:
        name = "romio_switch.env"
        out.append(Artifact(
            "env", name, "# Open MPI's OMPIO ran this job: its collective path can be slower "
            "than independent calls;\n# measure the collective calls with and without this "
            "switch to ROMIO.\n" + romio_switch_line() + "\n",
            "Open MPI: the switch to ROMIO, to measure collective calls under both",
            settings=(SettingChange(catalogue.ROMIO_SWITCH, ROMIO_SWITCH_VALUE, "ompio",
                                    tuple(dict.fromkeys(paths)), name),)))
    return out


def more_per_call(model: Model, paths: Iterable[str], direction: str | None = None
                  ) -> CodeChange:
    """Calls already collective: make each carry more data."""
    return CodeChange("more data per collective call", io_layer(model, paths),
                      direction=job_direction(model, direction))


def transfer_size(layer: str, direction: str | None, size: int = 4 * MiB) -> CodeChange:
    """Fewer, larger requests: ``size`` bytes per call (tune's ``transfer`` knob)."""
    return CodeChange(f"transfer size {size // MiB} MiB" if size % MiB == 0 else
                      f"transfer size {size} B", layer, knob="transfer", value=str(size),
                      direction=direction or "")


def nonblocking_code(model: Model, paths: Iterable[str]) -> list[Artifact]:
    """Non-blocking I/O at the program's layer: PnetCDF's iput + wait_all, MPI-IO's
    MPI_File_i*; none for HDF5 (its asynchronous calls need the async VOL connector: the
    fix's text names them)."""
    layer = io_layer(model, paths)
    if layer == "hdf5":
        return []
    if layer == "pnetcdf":  # reads: the text names ncmpi_iget_vara (no MPI_File_* code)
        return snippets("pnetcdf_nonblocking") if job_direction(model, None) == "write" else []
    return snippets("nonblocking_io" if job_direction(model, None) == "write"
                    else "nonblocking_io_read")


def hdf5_metadata_code(model: Model) -> list[Artifact]:
    """Collective HDF5 metadata: with H5Pset_coll_metadata_write for a job that writes,
    collective metadata reads alone for a read-only job."""
    return snippets("hdf5_collective_metadata" if job_direction(model, None) == "write"
                    else "hdf5_collective_metadata_read")


# ---- buffering -----------------------------------------------------------------------------

def buffer_paths(model: Model, paths: Iterable[str]) -> list[str]:
    """The named files a buffering library may take: the job's own, not MPI-IO files (the
    library would reorder what MPI-IO ranks share), names a pattern list can hold."""
    facts = job_facts(model)
    return [p for p in dict.fromkeys(paths)
            if own_file(facts, p) and p not in facts.mpi_paths and not (set(p) & _PATTERN_UNSAFE)]


def iolab_buffer(model: Model, paths: Iterable[str], size: str = "64M", count: int = 4
                 ) -> list[Artifact]:
    """iolab's buffering library and Cray IOBUF for exactly the named files (at most 16):
    ``path:size=..:count=..`` entries. Read-ahead is left to the library's
    ``prefetch=auto``: on where reads are round trips (FUSE, NFS, Lustre...), off on local
    disks where the kernel's readahead already overlaps them. Nothing when no named file
    can be buffered safely."""
    named = buffer_paths(model, paths)[:16]
    if not named:
        return []
    spec = ",".join(f"{p}:size={size}:count={count}" for p in named)
    q = shlex.quote(spec)
    words, pre = program_words(model)
    lines = [f"# Buffers for {len(named)} file(s) the finding names (not MPI-IO files)."]
    lines += [f"export IOBUF_PARAMS={q}  # Cray IOBUF (module load iobuf, relink)",
              f"export IOLAB_BUFFER={q}",
              f"export LD_PRELOAD={_buffer_library()}${{LD_PRELOAD:+:$LD_PRELOAD}}"]
    lines += [ln if ln.startswith("#") else "# " + ln for ln in pre]
    lines.append(f"# or, without the exports: iolab buffer --spec {q} -- {' '.join(words)}")
    return [env(lines, "buffering.env", "iolab buffer / Cray IOBUF: source before the run")]


def _buffer_library() -> str:
    """libiolab-buffer.so on the machine that runs the job, shell-quoted: under the
    IOLAB_PREFIX the user sets there (a bare name loads only from the loader's search path;
    the analysing machine's own install means nothing on the cluster)."""
    return ('"${IOLAB_PREFIX:?set IOLAB_PREFIX to where iolab is installed on the '
            'machine that runs the job}/lib/iolab/libiolab-buffer.so"')
