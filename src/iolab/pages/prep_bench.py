"""Tables and plot series of stored benchmark runs, sweeps and tunes (engine documents,
``docs/engine-json.md``), and the B/A ratio of two sets of samples. No drawing here."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

from iolab.pages.fmt import human_bytes, human_count, human_seconds, mib_s
from iolab.runs.engine_doc import from_json
from iolab.stats import estimate, fewest_to_judge
from iolab.units import parse_number

if TYPE_CHECKING:
    from iolab.pages.prep_log import RankBars

# numpy (and prep_log, which holds numpy arrays) only where a page's rank bars are drawn:
# sweep, compare and study read this module's records and bandwidths at start-up, and
# numpy there cost each of those commands ~0.2 s of CPU.

MIB = float(1 << 20)


@dataclass
class Series:
    """One line of a plot: medians with the low/high range across repetitions."""

    label: str
    x: list[Any]
    median: list[float]
    low: list[float]
    high: list[float]


def phase_bandwidths(doc: Mapping[str, Any] | None, op: str, read_pass: int = 0) -> list[float]:
    """The bandwidth (bytes/s) of each repetition's ``op`` phase (reads: pass ``read_pass``)."""
    return phase_values(doc, op, read_pass, "bw_bytes_per_s")


def phase_values(doc: Mapping[str, Any] | None, op: str, read_pass: int = 0,
                 key: str = "bw_bytes_per_s") -> list[float]:
    """Each repetition's ``key`` of its ``op`` phase: bandwidth, or ``iops`` (the rate of
    a metadata phase)."""
    return from_json(doc).rates(op, read_pass, key)


def ops_of(doc: Mapping[str, Any] | None) -> list[tuple[str, int]]:
    """(op, read pass) of the phases a document holds, in the order the engine ran them."""
    return from_json(doc).ops()


def op_name(op: str, read_pass: int) -> str:
    return op if read_pass == 0 else f"{op} pass {read_pass + 1}"


def summary_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    """Per phase: repetitions, median / min / max bandwidth (MiB/s), bytes, cache."""
    run = from_json(doc)
    rows = []
    for op, p in run.ops():
        bws = run.rates(op, p)
        phases = list(run.phases(op, p))
        cache = sorted({ph.cache for ph in phases if ph.cache})
        if not bws:
            continue
        rows.append([op_name(op, p), str(len(bws)), mib_s(median(bws)), mib_s(min(bws)),
                     mib_s(max(bws)), human_bytes(phases[0].bytes),
                     human_seconds(median(float(ph.time_s or 0) for ph in phases)),
                     "/".join(cache) or "-"])
    return rows


def repetition_series(doc: Mapping[str, Any]) -> list[Series]:
    """Bandwidth (MiB/s) of each repetition, one line per phase."""
    run = from_json(doc)
    out = []
    for op, p in run.ops():
        bws = [b / MIB for b in run.rates(op, p)]
        if bws:
            out.append(Series(op_name(op, p), list(range(1, len(bws) + 1)), bws, bws, bws))
    return out


def run_rank_bars(doc: Mapping[str, Any], op: str = "write") -> RankBars | None:
    """The last repetition's ``op`` phase, per rank: open + transfer + close time, bytes."""
    import numpy as np

    # deferred: numpy (prep_log) only for the per-rank bars, not for a whole sweep
    from iolab.pages.prep_log import RankBars

    last = None
    for ph in from_json(doc).phases(op, 0):
        if ph.per_rank:
            last = ph
    if last is None:
        return None
    pr = sorted(last.per_rank, key=lambda r: r.rank or 0)
    t = np.array([float(r.open_s or 0) + float(r.xfer_s or 0) + float(r.close_s or 0)
                  for r in pr])
    b = np.array([float(r.bytes or 0) for r in pr])
    return RankBars(np.array([i if r.rank is None else r.rank for i, r in enumerate(pr)]),
                    t, b, (pr[int(t.argmax())].rank or 0) if t.size else 0,
                    float(np.median(t)) if t.size else 0.0)


# --- tunes ------------------------------------------------------------------------------


def convergence(values: Sequence[float | None], maximize: bool = True
                ) -> list[float | None]:
    """Best value so far after each trial (failed trials, None, keep the previous best)."""
    best: float | None = None
    out: list[float | None] = []
    for v in values:
        if v is not None and (best is None or (v > best if maximize else v < best)):
            best = v
        out.append(best)
    return out


def trial_labels(trials: Sequence[Any], confirm: int | None) -> list[str]:
    """Each stored trial named as the terminal printed it while the tune ran: 'trial 1'
    (search trials, numbered from 1), 'confirm 2', 'runner-up 1' (iolab.tune.render)."""
    n_search = sum(1 for t in trials if t.phase in ("search", "repeat"))
    batch = 2 * max(1, int(confirm or 1))
    out = []
    for t in trials:
        if t.phase in ("search", "repeat"):
            out.append(f"trial {t.number + 1}")
        else:
            n = t.number - n_search
            out.append(f"confirm {n + 1}" if n < batch else f"runner-up {n - batch + 1}")
    return out


def importance_rows(imp: Mapping[str, float]) -> list[tuple[str, float]]:
    return sorted(((k, float(v)) for k, v in imp.items()), key=lambda kv: -kv[1])


# --- sweeps -----------------------------------------------------------------------------


@dataclass
class SweepPoint:
    params: dict[str, str]
    status: str
    doc: Mapping[str, Any] | None = None
    run_id: int | None = None


# Parameters whose engine setting is not called <name>_bytes.
_SIZE_KEYS = {"md-size": "md_file_bytes"}
_SIZE_SUFFIX = re.compile(r"^\s*\d+(\.\d+)?\s*[kmgt]i?b?\s*$", re.I)


def x_kind(param: str, values: Sequence[str], points: Iterable[SweepPoint] = ()) -> str:
    """How to draw a swept parameter (plots.X_KINDS): 'category' (a mode, an API),
    'bytes' (a size: written 64k, or set in the engine as <name>_bytes), 'integer' (ranks,
    threads) or 'number'."""
    nums = [parse_number(v) for v in values]
    if not nums or any(n is None for n in nums):
        return "category"
    key = _SIZE_KEYS.get(param, param.replace("-", "_").replace(".", "_") + "_bytes")
    if any(_SIZE_SUFFIX.match(v) for v in values) or any(
            key in from_json(pt.doc).config for pt in points):
        return "bytes"
    return "integer" if all(float(n or 0).is_integer() for n in nums) else "number"


def sweep_series(points: Iterable[SweepPoint], x_param: str, op: str,
                 line_param: str | None = None, read_pass: int = 0,
                 metadata: bool = False) -> list[Series]:
    """Bandwidth (MiB/s; ``metadata``: operations per second) of ``op`` against
    ``x_param``, one line per value of ``line_param``: the median and the min-max range of
    the point's repetitions."""
    groups: dict[str, list[tuple[Any, list[float]]]] = {}
    for pt in points:
        if pt.status != "ok":
            continue
        bws = (phase_values(pt.doc, op, read_pass, "iops") if metadata
               else [b / MIB for b in phase_bandwidths(pt.doc, op, read_pass)])
        if not bws:
            continue
        key = f"{line_param}={pt.params[line_param]}" if line_param else ""
        xv = pt.params[x_param]
        n = parse_number(xv)
        groups.setdefault(key, []).append((n if n is not None else xv, bws))
    out = []
    for key, pts in groups.items():
        if all(isinstance(x, (int, float)) for x, _ in pts):
            pts.sort(key=lambda p: p[0])
        out.append(Series(key, [x for x, _ in pts], [median(b) for _, b in pts],
                          [min(b) for _, b in pts], [max(b) for _, b in pts]))
    return out


# --- B / A ------------------------------------------------------------------------------


@dataclass
class Ratio:
    workload: str
    a_median: float | None
    b_median: float | None
    ratio: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n_a: int = 0
    n_b: int = 0
    note: str = ""
    unit: str = "MiB/s"

    def row(self) -> list[str]:
        ci = (f"{self.ci_low:.2f}-{self.ci_high:.2f}" if self.ci_low is not None
              and self.ci_high is not None else "-")
        return [self.workload, _one_decimal(self.a_median), _one_decimal(self.b_median),
                "-" if self.ratio is None else f"{self.ratio:.2f}", ci,
                f"{self.n_a} / {self.n_b}", self.note]


def _one_decimal(v: float | None) -> str:
    return "-" if v is None else f"{v:,.1f}"


RATIO_HEADERS = ["workload", "A", "B", "B/A", "95% CI", "samples A / B", "note"]


def ratio(workload: str, a: Sequence[float], b: Sequence[float], unit: str = "MiB/s",
          maximize: bool = True) -> Ratio:
    """B/A of the medians (higher is better when ``maximize``; else A/B so that above 1
    still means B is better), with the 95% interval and the verdict of iolab.stats: B or A
    better exactly when the interval excludes 1; no interval, and no verdict, from samples
    too few to show a difference at 95% (fewer than 4 a side)."""
    a = [float(v) for v in a if v is not None]
    b = [float(v) for v in b if v is not None]
    if not a or not b:
        return Ratio(workload, median(a) if a else None, median(b) if b else None, None,
                     n_a=len(a), n_b=len(b), note="missing on one side", unit=unit)
    if min(*a, *b) <= 0:
        return Ratio(workload, median(a), median(b), None, n_a=len(a), n_b=len(b),
                     note="zero values", unit=unit)
    e = estimate(a, b, maximize)
    if e.low is None:
        note = (f"too few samples to judge at 95% ({fewest_to_judge()} a side are enough)"
                if len(a) > 1 or len(b) > 1 else "one sample: no interval")
    else:
        note = {1: "B better", -1: "A better", 0: "no significant difference"}[e.direction]
    return Ratio(workload, median(a), median(b), e.ratio, e.low, e.high, len(a), len(b),
                 note, unit)


@dataclass
class Samples:
    """Named samples of one side of a comparison (workload -> values, MiB/s)."""

    title: str
    values: dict[str, list[float]] = field(default_factory=dict)


def run_samples(title: str, doc: Mapping[str, Any] | None, prefix: str = "") -> Samples:
    s = Samples(title)
    run = from_json(doc)
    for op, p in run.ops():
        bws = [b / MIB for b in run.rates(op, p)]
        if bws:
            s.values[prefix + op_name(op, p)] = bws
    return s


def ratios(a: Samples, b: Samples) -> list[Ratio]:
    """A ratio per workload either side has (in A's order, then B's)."""
    keys = list(a.values) + [k for k in b.values if k not in a.values]
    return [ratio(k, a.values.get(k, []), b.values.get(k, [])) for k in keys]


def count(n: Any) -> str:
    return human_count(n)
