"""``iolab tune --from-log``: a proxy workload built from a job's log, and the diagnosis's
predictions that the tune then confirms or not.

The proxy repeats the pattern of the file that cost the job the most I/O time, scaled to the
machine at hand: the same interface (HDF5 / PnetCDF / MPI-IO / POSIX), direction(s), typical
request size (bytes per call at that layer), shared file or file per process, collective
or independent calls; fewer ranks (``max_ranks``) and fewer bytes per rank (``max_rank_bytes``)
than a production job, since a tune runs it tens of times. The predictions are the knob
settings that ``iolab diagnose`` recommends for the same log (hints from its hints files,
and the workload changes its rules stand for); the tune's winner confirms each or not.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from iolab.tune.knobs import Knob, all_knobs, knob
from iolab.tune.space import DEFAULT

if TYPE_CHECKING:
    from iolab.diagnose.report import Report
    from iolab.model.job import Model

MIN_TRANSFER = 1
MAX_TRANSFER = 64 << 20
MAX_CALLS_PER_RANK = 65536  # a trial stays a few seconds even for 64-byte writes

# Rules whose fix is a change of the workload itself (knob, value); their hints come from
# the hints files they emit.
RULE_KNOBS: dict[str, tuple[tuple[str, str], ...]] = {
    "mpiio-independent": (("collective", "true"),),
    "collective-buffering": (("collective", "true"),),
    "tiny-collective-calls": (("file-view", "true"),),
    "small-requests": (("transfer", "4194304"),),
    "small-serial-io": (("transfer", "4194304"),),
    "direct-io": (("posix.mode", "direct"),),
}


# A call in a fix's code snippet that a knob stands for: (call, knob, value).
_CODE_KNOBS = ("H5Pset_coll_metadata_write", "hdf5.coll-metadata", "true")


@dataclass(frozen=True)
class Prediction:
    rule: str
    title: str
    knob: str
    value: str  # normalised

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Proxy:
    bench_args: list[str]
    api: str
    description: list[str]


def _pow2(n: float) -> int:
    """The power of two nearest to n, within the engine-friendly range."""
    if n <= MIN_TRANSFER:
        return MIN_TRANSFER
    return int(min(MAX_TRANSFER, 2 ** round(np.log2(n))))


def _costliest_file(model: Model) -> int | None:
    lay = model.layers
    app = model.files.is_app()
    time = np.maximum.reduce([lay.posix.slowest_rank_time_s, lay.mpiio.slowest_rank_time_s,
                              lay.stdio.slowest_rank_time_s])
    moved = lay.posix.bytes + lay.mpiio.bytes + lay.stdio.bytes
    score = np.where(app & (moved > 0), time + moved * 1e-15, -1.0)  # bytes break ties
    if score.size == 0 or score.max() < 0:
        return None
    return int(score.argmax())


def build_proxy(model: Model, max_ranks: int = 4, max_rank_bytes: int = 64 << 20) -> Proxy:
    """The bench options that repeat the costliest file's pattern (see the module doc)."""
    i = _costliest_file(model)
    if i is None:
        from iolab.errors import UsageError

        raise UsageError("the log has no application file with data moved: there is no I/O "
                         "pattern to build a workload from")
    lay = model.layers
    lib = str(lay.library[i])
    if lib == "HDF5" and bool(lay.library_uses_mpiio[i]):
        api = "hdf5"
    elif lib == "PnetCDF":
        api = "pnetcdf"
    elif bool(lay.mpiio.present[i]):
        api = "mpiio"
    else:
        api = "posix"
    layer = lay.mpiio if api != "posix" else (lay.posix if lay.posix.present[i] else lay.stdio)
    written, read = float(layer.bytes_written[i]), float(layer.bytes_read[i])
    direction = "write" if written >= read else "read"
    nbytes = written if direction == "write" else read
    calls = float((layer.writes if direction == "write" else layer.reads)[i])
    transfer = _pow2(nbytes / calls if calls else nbytes)
    file_ranks = int(model.files.nranks[i]) or 1
    shared = file_ranks > 1
    ranks = max(1, min(max_ranks, model.job.nprocs if shared else file_ranks))
    per_rank = nbytes / file_ranks
    block = int(max(transfer, min(max_rank_bytes, per_rank, transfer * MAX_CALLS_PER_RANK))
                // transfer * transfer)
    layout = "fpp"
    if shared:
        layout = "strided" if api != "posix" and transfer < per_rank else "segmented"
    args = ["-a", api, "--layout", layout, "-t", str(transfer), "-b", str(block),
            "--np", str(ranks)]
    args += ["-w"] if direction == "write" else ["-r"]
    if read and written and min(read, written) > 0.1 * max(read, written):
        args = [a for a in args if a not in ("-w", "-r")]  # both: the engine's default
    coll = lay.calls.of(direction).get("COLL")
    collective = api != "posix" and coll is not None and float(coll[i]) > 0
    if collective:
        args.append("--collective")
    path = model.files.paths[i]
    desc = [f"proxy of {path}: {api.upper() if api != 'posix' else 'POSIX'}, "
            f"{'shared by ' + str(file_ranks) + ' ranks' if shared else 'one file per rank'}, "
            f"{direction}s of ~{transfer} B per call"
            f"{', collective' if collective else ''}",
            f"scaled to {ranks} rank(s) x {block} B (the job: {model.job.nprocs} ranks, "
            f"{int(per_rank)} B per rank on that file)"]
    return Proxy(args, api, desc)


_HINT_LINE = re.compile(r"^\s*([a-z_]+)\s+(\S+)\s*$")
_MCA_LINE = re.compile(r"^\s*export\s+OMPI_MCA_([a-z_]+)=(\S+)\s*$")


def _knob_for_key(key: str, kind: str) -> Knob | None:
    for k in all_knobs():
        if k.kind == kind and k.library_key == key:
            return k
    return None


def predictions(report: Report) -> list[Prediction]:
    """Knob settings the diagnosis recommends, one per knob (the costliest finding first)."""
    out: dict[str, Prediction] = {}

    def add(rule: Any, knob: Knob, value: str) -> None:
        try:
            norm = knob.normalise(value)
        except Exception:  # a value outside the knob's domain cannot be tuned
            return
        out.setdefault(knob.name, Prediction(rule.id, rule.title, knob.name, norm))

    for f in report.findings:
        for name, value in RULE_KNOBS.get(f.rule.id, ()):
            add(f.rule, next(k for k in all_knobs() if k.name == name), value)
        for art in f.fix.artifacts:
            if _CODE_KNOBS[0] in art.content:  # an HDF5 snippet with collective metadata
                add(f.rule, knob(_CODE_KNOBS[1]), _CODE_KNOBS[2])
            for line in art.content.splitlines():
                if art.kind == "romio-hints" and (m := _HINT_LINE.match(line)):
                    k = _knob_for_key(m.group(1), "romio")
                elif m := _MCA_LINE.match(line):
                    k = _knob_for_key(m.group(1), "ompio")
                else:
                    continue
                if k is not None:
                    add(f.rule, k, m.group(2).strip("'\""))
    return list(out.values())


def from_log(path: str, max_ranks: int, max_rank_bytes: int
             ) -> tuple[Proxy, list[Prediction]]:
    """Load a Darshan log or iolab profile, diagnose it, and build the proxy."""
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.model.job import build_model
    from iolab.sources import load_source

    model = build_model([load_source(path)])
    proxy = build_proxy(model, max_ranks, max_rank_bytes)
    preds = predictions(diagnose(model, Thresholds()))
    # an HDF5 property means nothing to a proxy of another interface
    return proxy, [p for p in preds if not p.knob.startswith("hdf5.") or proxy.api == "hdf5"]


def judge(preds: list[dict[str, str]], winner: dict[str, str], significant: bool,
          tuned: set[str], notes: list[str]) -> list[dict[str, Any]]:
    """Each prediction against the tune's winner: confirmed only when the winner is proven
    faster and sets the knob to the predicted value; a knob the tune could not turn here
    (``tuned`` lacks it: the library ignores it, or the proxy already runs that value) is
    said to be not measured, with the tune's own note."""
    out = []
    for p in preds:
        got = winner.get(p["knob"], DEFAULT)
        why_not = next((n for n in notes if n.startswith(p["knob"] + ":")), None)
        if p["knob"] not in tuned:
            verdict, why = False, ("not measured here: " + why_not.split(": ", 1)[1]
                                   if why_not else "not measured here: the proxy already "
                                   "runs with it")
        elif not significant:
            verdict, why = False, "the tune found no significant gain over the defaults"
        elif got == p["value"]:
            verdict, why = True, "the proven winner sets it"
        elif got == DEFAULT:
            verdict, why = False, "the proven winner leaves it at the default"
        else:
            verdict, why = False, f"the proven winner sets {got} instead"
        out.append({**p, "winner": got, "confirmed": verdict, "why": why})
    return out
