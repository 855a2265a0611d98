"""``iolab tune --from-log``: a proxy workload built from a job's log, and the diagnosis's
predictions that the tune then confirms or not.

The proxy repeats the pattern of the file that cost the job the most I/O time, scaled to the
machine at hand: the same interface (HDF5 / PnetCDF / MPI-IO / POSIX), direction(s), typical
request size (bytes per call at that layer), shared file or file per process, collective
or independent calls; fewer ranks (``max_ranks``) and fewer bytes per rank (``max_rank_bytes``)
than a production job, since a tune runs it tens of times. The predictions are the knob
settings that ``iolab diagnose`` recommends for the same log, read from its fixes as data
(the settings and code changes each fix carries); the tune's winner confirms each or not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from iolab.errors import UsageError
from iolab.tune.knobs import all_knobs
from iolab.tune.space import DEFAULT

if TYPE_CHECKING:
    from iolab.diagnose.report import Report
    from iolab.model.job import Model
    from iolab.tune.proxy import Proxy


@dataclass(frozen=True)
class Prediction:
    rule: str
    title: str
    knob: str
    value: str  # normalised

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def predictions(report: Report) -> list[Prediction]:
    """Knob settings the diagnosis recommends, one per knob (the costliest finding first):
    each fix's changes as data (iolab.settings.change), the code changes a knob stands for
    first, then the settings of its files (a catalogue row tune turns); nothing is read
    back from the rendered files. A hint is taken in ROMIO's form where the fix has one
    (tune writes the Cray line from it), else in Cray MPICH's (cb_config_list already
    turned into cb_nodes for the job's nodes). A Lustre layout is its ``lfs`` rows (stripe
    count and size) as the fix's ``lfs setstripe`` script writes them, its first file's
    first."""
    out: dict[str, Prediction] = {}
    knobs = {k.name: k for k in all_knobs()}
    for f in report.findings:
        hint_form = "romio" if any(s.library == "romio" for s in f.fix.settings) else "cray"
        wanted = [(c.knob, c.value) for c in f.fix.code if c.knob]
        wanted += [(s.knob, s.value) for s in f.fix.settings
                   if s.knob and s.library in ("ompio", "lfs", hint_form)]
        for name, value in wanted:
            k = knobs.get(name)
            if k is None or name in out:
                continue
            try:
                norm = k.normalise(value)
            except UsageError:  # a value outside the knob's domain cannot be tuned
                continue
            out[name] = Prediction(f.rule.id, f.rule.title, name, norm)
    return list(out.values())


def from_log(path: str, max_ranks: int, max_rank_bytes: int
             ) -> tuple[Proxy, list[Prediction]]:
    """Load a Darshan log or iolab profile, diagnose it, and build the proxy."""
    return from_model(load_log(path), max_ranks, max_rank_bytes)


def load_log(path: str) -> Model:
    # deferred: the model and the log readers pull numpy, not wanted at every tune's start-up
    from iolab.model.job import build_model
    from iolab.sources import load_source

    return build_model([load_source(path)])


def from_model(model: Model, max_ranks: int, max_rank_bytes: int
               ) -> tuple[Proxy, list[Prediction]]:
    """The proxy of a log's model and the diagnosis's predictions for it."""
    # deferred: the diagnosis and the proxy pull numpy, not wanted at every tune's start-up
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.tune.proxy import build_proxy

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
