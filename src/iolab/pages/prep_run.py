"""What a stored run measured, told in its own terms (engine documents, ``docs/engine-json.md``).

Three kinds of run, three vocabularies: an I/O run has a transfer and a block size and
bandwidth; an array run (``--layout subarray``, ``--workload btio``) has a grid, a process
grid, steps and an I/O method; a metadata run (``--metadata easy|hard``) has files per rank
and a rate per phase (create, stat, read, remove) in operations per second, and no
bandwidth at all. No drawing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import fmean, median
from typing import Any

from iolab import backends
from iolab.pages.fmt import human_bytes, human_count, human_seconds
from iolab.runs.engine_doc import from_json

IO_OPS = ("write", "read")
# The engine's metadata phases as mdtest users know them; another phase (a directory one)
# is shown by its own name.
METADATA_PHASES = {"create": "file create", "stat": "file stat", "open_read": "file read",
                   "remove": "file remove"}


def kind(doc: Mapping[str, Any] | None) -> str:
    """'metadata', 'btio', 'subarray' or 'io'."""
    return from_json(doc).kind


def phase_name(op: str) -> str:
    return METADATA_PHASES.get(op, op.replace("_", " "))


def io_method(cfg: Mapping[str, Any]) -> str:
    """How an array was written, as BTIO names its methods: 'MPI-IO collective',
    'PnetCDF non-blocking', 'HDF5 independent, file view'."""
    api = str(cfg.get("api") or "?")
    parts = [backends.LABELS.get(api, api)]
    if api == "pnetcdf" and cfg.get("pnetcdf_nonblocking"):
        parts.append("non-blocking")
    else:
        parts.append("collective" if cfg.get("collective") else "independent")
    text = " ".join(parts)
    return text + (", file view" if cfg.get("file_view") else "")


def headline(run: Mapping[str, Any], doc: Mapping[str, Any] | None) -> str:
    """The run in one line, in the terms of its kind."""
    measured = from_json(doc)
    cfg, k = measured.config, measured.kind
    ranks = run.get("ranks") or measured.environment.ranks or "?"
    if k == "metadata":
        plan = measured.metadata_plan
        what = (f"metadata ({cfg.get('metadata')}): {human_count(plan.get('files_per_rank'))} "
                f"files per rank of {human_bytes(plan.get('file_bytes'))}, "
                f"{plan.get('dir', '?')} directories")
    elif k in ("btio", "subarray"):
        arr = cfg.get("array") or {}
        what = (f"{'BTIO' if k == 'btio' else 'subarray'} grid {cfg.get('grid') or '?'}, "
                f"{arr.get('steps', cfg.get('steps'))} step(s), {io_method(cfg)}")
    else:
        what = f"{run.get('api') or '?'} {run.get('layout') or ''}".strip()
    return f"status {run['status']}, {ranks} rank(s), {what}"


# --- configuration rows -----------------------------------------------------------------

_COMMON_TAIL = ("repetitions", "posix_mode", "threads", "files", "total_bytes", "path")
_KEYS_OF_KIND = {
    "io": ("api", "layout", "transfer_bytes", "block_bytes", "segments", "repetitions",
           "posix_mode", "collective", "file_view", "threads", "files", "total_bytes", "path"),
    "btio": ("workload", "api", "grid", "pgrid", "elem_bytes", "steps", "collective",
             "file_view", *_COMMON_TAIL),
    "subarray": ("layout", "api", "grid", "pgrid", "elem_bytes", "steps", "collective",
                 "file_view", *_COMMON_TAIL),
    "metadata": ("metadata", "api", "repetitions", "path"),
}


def config_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    """The settings that define this kind of run (a metadata run has no transfer or block
    size, a BTIO run has its grid and method instead), then the environment and hints."""
    measured = from_json(doc)
    cfg, k, env = measured.config, measured.kind, measured.environment
    rows = []
    for key in _KEYS_OF_KIND[k]:
        if key == "posix_mode" and cfg.get("api") != "posix":
            continue  # the POSIX backend's option: not used by the others
        if cfg.get(key) is not None:
            v = cfg[key]
            rows.append([key, human_bytes(v) if key.endswith("_bytes") else str(v)])
    arr = cfg.get("array") or {}
    if k in ("btio", "subarray"):
        rows.insert(2, ["method", io_method(cfg)])
        if arr.get("pgrid"):  # what the engine chose when --pgrid was left to MPI
            rows.append(["process grid used", "x".join(map(str, arr["pgrid"]))])
        if arr.get("dims"):
            rows.append(["array in the file", "x".join(map(str, arr["dims"]))])
    if k == "metadata":
        plan = measured.metadata_plan  # what the engine ran (--md-dir preset resolved)
        for key, label in (("files_per_rank", "files per rank"), ("file_bytes", "file size"),
                           ("dir", "directory")):
            if plan.get(key) is not None:
                rows.append([label, human_bytes(plan[key]) if key == "file_bytes"
                             else str(plan[key])])
    for key in ("ranks", "hosts", "mpi_library", "mpiio_implementation", "fs_type", "fs_path",
                "start_time"):
        v = env.get(key)
        if v is not None:
            rows.append([key, ", ".join(map(str, v)) if isinstance(v, tuple) else str(v)])
    for key, v in sorted(measured.hints.effective.items()):
        rows.append([f"hint {key}", str(v)])
    return rows


# --- metadata rates ---------------------------------------------------------------------


@dataclass
class PhaseRate:
    """One metadata phase over the repetitions: operations per second."""

    op: str
    name: str
    rates: list[float]  # ops/s, one per repetition
    ops: int  # operations of one repetition (all ranks)
    times_s: list[float]

    @property
    def mean(self) -> float:
        return fmean(self.rates)


def metadata_rates(doc: Mapping[str, Any]) -> list[PhaseRate]:
    """Every phase that is not a data transfer, in the order the engine ran them."""
    out: dict[str, PhaseRate] = {}
    for ph in from_json(doc).phases():
        op = str(ph.op)
        if op in IO_OPS or ph.iops is None:
            continue
        pr = out.setdefault(op, PhaseRate(op, phase_name(op), [], ph.ops or 0, []))
        pr.rates.append(float(ph.iops))
        pr.times_s.append(float(ph.time_s or 0))
    return list(out.values())


METADATA_HEADERS = ["phase", "reps", "mean ops/s", "min ops/s", "max ops/s", "ops/rep",
                    "median time"]


def metadata_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    return [[p.name, str(len(p.rates)), rate(p.mean), rate(min(p.rates)), rate(max(p.rates)),
             human_count(p.ops), human_seconds(median(p.times_s))]
            for p in metadata_rates(doc)]


def rate(v: float) -> str:
    """Operations per second for a table: whole above 100 (3,468), else one decimal."""
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"
