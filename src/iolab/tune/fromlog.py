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

from iolab.tune.knobs import Knob, all_knobs, knob
from iolab.tune.proxy import Proxy, build_proxy
from iolab.tune.space import DEFAULT

if TYPE_CHECKING:
    from iolab.diagnose.report import Report

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
