"""What a rule is: data plus a small predicate.

A :class:`Rule` is declared once with its id, severity, title, why (the practice and the
document it comes from), expected effect (published figures) and two functions:
``trigger(model, thresholds) -> list[Hit]`` (empty: nothing found) and
``fix(model, hit, thresholds) -> Fix``. A read/write pair is one rule whose hits carry a
direction. Renderers, ``--emit-fixes`` and ``docs/rules.md`` all read the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Union, overload

import numpy as np

from iolab.settings.change import EXPERIMENT, CodeChange, SettingChange
from iolab.units import fmt_bytes as fmt_bytes  # rules and renderers format bytes from here
from iolab.units import fmt_seconds as fmt_seconds  # ... and seconds

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model

SEVERITY_RANK = {"high": 0, "warn": 1, "info": 2}

Value = Union[int, float, str, bool, None]


@dataclass(frozen=True)
class Source:
    """A citation: which seed document, which section, what it says."""

    doc: str  # the document's title, as a reader would look it up
    where: str  # section or slide title
    says: str  # the practice, quoted or closely paraphrased


# The source documents, cited by title on every page and report (shared/seeds/README.md maps
# each title to its file there; a file name means nothing to a reader).
NERSC_KNL = "Optimizing I/O on Cori KNL (NERSC)"
CSC_LUSTRE = "How to achieve better I/O performance on Lustre (CSC)"
CUG_2017 = "Understanding the I/O performance gap between Cori KNL and Haswell (CUG 2017)"
NUG_2017 = "Best practices for I/O on KNL (NERSC Users Group)"
KAUST = "Parallel I/O seminar (KAUST)"
DRISHTI = "Drishti (LBNL) check set, thresholds as starting points"


@dataclass
class FileEvidence:
    path: str  # a file, or a node's host name when kind is "node"
    values: dict[str, Value]
    kind: str = "file"


class _ListWhenRead(Sequence[Any]):
    """A sequence kept as arrays and made into a list of tuples only when read: what a
    finding claims or owns on 64,000 files costs no 64,000 tuples (tenths of a second on
    such a log) unless someone looks. Compares equal to the same items in any sequence."""

    _items: list[Any] | None = None

    def _make(self) -> list[Any]:
        raise NotImplementedError

    def _list(self) -> list[Any]:
        if self._items is None:
            self._items = self._make()
        return self._items

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._list())

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        return self._list()[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a list's equality: unhashable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._list()!r})"


class FileClaims(_ListWhenRead):
    """:attr:`Hit.claims` as arrays: blocks of (operation, files), each file an index of
    ``paths`` (the model's file names), in the order of the (file, operation) pairs they
    stand for. The attribution reads the indices, and looks up no name."""

    def __init__(self, paths: list[str], blocks: list[tuple[str, np.ndarray]]) -> None:
        self.paths = paths
        self.blocks = blocks

    def files(self) -> np.ndarray:
        """The claims' files (indices of ``paths``), in order."""
        if not self.blocks:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.asarray(f, dtype=np.int64) for _, f in self.blocks])

    def _make(self) -> list[tuple[str, str]]:
        return [(self.paths[i], op) for op, f in self.blocks for i in np.asarray(f).tolist()]

    def __len__(self) -> int:
        return sum(len(f) for _, f in self.blocks)


class OwnedSeconds(_ListWhenRead):
    """:attr:`Finding.owned` as arrays: the (file, operation, seconds) of key ``ids``
    (file * len(operations) + operation; files index ``paths``)."""

    def __init__(self, paths: list[str], operations: tuple[str, ...], ids: np.ndarray,
                 seconds: np.ndarray) -> None:
        self.paths, self.operations, self.ids, self.seconds = paths, operations, ids, seconds

    def _make(self) -> list[tuple[str, str, float]]:
        f, o = np.divmod(self.ids, len(self.operations))
        return list(zip(map(self.paths.__getitem__, f.tolist()),
                        map(self.operations.__getitem__, o.tolist()), self.seconds.tolist()))

    def __len__(self) -> int:
        return len(self.ids)

    def scaled(self, scale: float) -> OwnedSeconds:
        """Each second times ``scale``; those that become 0 dropped."""
        sec = self.seconds * scale
        keep = sec > 0
        return OwnedSeconds(self.paths, self.operations, self.ids[keep], sec[keep])


@dataclass
class Hit:
    """One triggered instance of a rule: what was seen, in counters."""

    summary: str  # one line, with the numbers
    values: dict[str, Value]  # the counters and derived values that triggered, with units
    direction: str | None = None  # "read" / "write" for a directional rule
    files: list[FileEvidence] = field(default_factory=list)  # the worst files, at most ~10
    severity: str | None = None  # overrides the rule's severity (e.g. high above a 2nd level)
    data: dict[str, Any] = field(default_factory=dict)  # for the fix (paths, sizes), not shown
    # Seconds the problem costs: the slowest rank's time in the operations concerned (or a
    # bound, said in the rule's ``cost`` text). None: the counters cannot tell.
    cost_s: float | None = None
    # Whose time that cost is: (file path, "read" / "write" / "meta", or "*" for all of the
    # file's time). None: each evidence file, in the hit's direction (all without one). The
    # report attributes each file's time once, to the costliest finding claiming it.
    # (claims_of gives a :class:`FileClaims`: the same pairs as arrays.)
    claims: Sequence[tuple[str, str]] | None = None
    # cost_s is only an upper bound (the counters cannot split the time; a trace would):
    # shown as "at most", graded at most WARN, ranked after measured costs, owns no time.
    cost_bound: bool = False
    # This hit proposes a change to try rather than waste found (True), or the opposite
    # (False), whatever its rule's kind: e.g. hdf5-metadata-alignment finds waste only when
    # the metadata requests' own time is measured and a real share of the run. None: the
    # rule's kind (its ``experiment``).
    experiment: bool | None = None

    def claimed(self) -> Sequence[tuple[str, str]]:
        if self.claims is not None:
            return self.claims
        return [(e.path, self.direction or "*") for e in self.files if e.kind == "file"]


@dataclass
class Artifact:
    """A ready-to-use fix file: hints file, shell lines, Slurm lines, code snippet."""

    kind: str  # romio-hints, env, mpich-hints, lfs, slurm, snippet-c, snippet-fortran, ...
    name: str  # file name under --emit-fixes DIR
    content: str
    note: str = ""
    # The data this file renders: the settings it sets, the code change it shows.
    settings: tuple[SettingChange, ...] = ()
    code: tuple[CodeChange, ...] = ()


@dataclass
class Fix:
    """What to do, as data (``settings``, ``code``) and its renderings: ``text`` and the
    ``artifacts`` (files). The data of every artifact is the fix's too; ``code`` and
    ``settings`` given here are changes no file shows (a transfer size, a file view)."""

    text: str  # what to do, in one or two sentences
    artifacts: list[Artifact] = field(default_factory=list)
    settings: list[SettingChange] = field(default_factory=list)
    code: list[CodeChange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.settings = list(dict.fromkeys(
            [*self.settings, *(s for a in self.artifacts for s in a.settings)]))
        code: dict[tuple[str, str, str], CodeChange] = {}
        for c in [*self.code, *(c for a in self.artifacts for c in a.code)]:
            key = (c.change, c.layer, c.direction)
            old = code.get(key)
            if old is None:
                code[key] = c
            elif c.knob and not old.knob:  # one entry per change: the one a knob stands for
                code[key] = replace(c, snippet=c.snippet or old.snippet)
        self.code = list(code.values())
        trials = list(dict.fromkeys(c.change for c in self.code if c.experiment))
        if trials and EXPERIMENT not in self.text:
            # "Collective transfers are", "Collective metadata is", "... and ... are"
            what = " and ".join(trials)
            verb = "are" if len(trials) > 1 or what.endswith("s") else "is"
            self.text = self.text.rstrip() + f" {what[0].upper()}{what[1:]} {verb} {EXPERIMENT}"
            if any(a.name == "romio_switch.env" for a in self.artifacts):
                self.text += (" (under Open MPI's OMPIO, with and without the switch to ROMIO "
                              "in romio_switch.env)")
            self.text += "."


Trigger = Callable[["Model", "Thresholds"], list[Hit]]
FixFn = Callable[["Model", Hit, "Thresholds"], Fix]


@dataclass(frozen=True)
class Rule:
    id: str
    family: str
    severity: str
    title: str
    why: str
    sources: tuple[Source, ...]
    effect: str  # expected effect, with published figures where they exist
    trigger: Trigger
    fix: FixFn
    directional: bool = False
    # A typed precondition: None when the model holds what the rule needs, else the reason
    # it cannot judge (listed in the report under "not judged").
    requires: Callable[[Model, Thresholds], str | None] | None = None
    # A precondition for part of the rule (e.g. its write case): the rule runs, and the
    # part it could not judge is listed.
    partly: Callable[[Model, Thresholds], str | None] | None = None
    cost: str = ""  # how the finding's cost in seconds is counted (docs/rules.md)
    overview: bool = False  # describes the job (I/O share, balance) rather than a problem
    # Who gets a second first when findings claim the same (file, operation) time: the
    # mechanism that explains it ("mechanism": read-modify-write, fill values, a close-time
    # flush), then the access shape it shows as ("symptom": small, misaligned, random), then
    # the file system's layout ("layout"). Set from the registry's table (rules/__init__).
    tier: str = "symptom"
    # An experiment proposes a setting to try (more aggregators, another stripe count): it
    # owns no time, and its gain is an estimate to prove with `iolab tune --from-log`. A
    # waste finding (work that need not happen) owns the seconds it explains.
    experiment: bool = False


@dataclass
class Finding:
    rule: Rule
    hit: Hit
    fix: Fix
    graded: str | None = None  # severity from the cost (set by the report)
    run_time_s: float = 0.0
    # Findings that already own some of the seconds this one's cost counts (set by the
    # report's attribution): the same seconds, not a saving in addition.
    same_time_as: list[str] = field(default_factory=list)
    # The seconds this finding owns once every second is counted once (set by the report's
    # attribution); None before it ran.
    net_s: float | None = None
    # Costlier findings whose time on the slowest rank this one's ran beside (on other
    # ranks): its seconds are not in addition to theirs (the job's I/O time is counted).
    beside: list[str] = field(default_factory=list)
    # What it owns, (file, operation, seconds): net_s is their sum.
    owned: Sequence[tuple[str, str, float]] = field(default_factory=list)
    # An experiment's worst plausible gain: its estimate on only the seconds no waste finding
    # explains (fix the waste first and that is what is left to gain; set by the report's
    # attribution). None: not computed (the range is then the estimate alone).
    estimate_low_s: float | None = None

    @property
    def key(self) -> str:
        """The rule id, with the direction when the rule has one: 'small-requests/write'."""
        return self.rule.id + (f"/{self.hit.direction}" if self.hit.direction else "")

    @property
    def severity(self) -> str:
        return self.graded or self.hit.severity or self.rule.severity

    @property
    def gross_s(self) -> float | None:
        """The seconds the rule counts for its operations, before attribution."""
        return self.hit.cost_s

    @property
    def cost_s(self) -> float | None:
        """The seconds this finding owns (net of what more specific findings explain); None
        for an experiment (it owns none: see estimate_s) or when the counters cannot tell."""
        if self.rule.experiment:
            return None
        return self.net_s if self.net_s is not None else self.hit.cost_s

    @property
    def cost_measured(self) -> bool | None:
        """True: the cost is the time of the finding's operations; False: only an upper
        bound; None: no cost (unknown, or an experiment's estimate)."""
        if self.rule.experiment or self.hit.cost_s is None:
            return None
        return not self.hit.cost_bound

    @property
    def estimate_s(self) -> float | None:
        """An experiment's estimated gain (a bound from the rule's stated model)."""
        return self.hit.cost_s if self.rule.experiment else None

    @property
    def estimate_range_s(self) -> tuple[float, float] | None:
        """An experiment's gain as (worst, best) plausible seconds, from the job's own
        numbers: the best is the rule's model on all the time it concerns (estimate_s), the
        worst the same on the seconds no waste finding explains. Ranks nothing."""
        high = self.estimate_s
        if high is None:
            return None
        low = high if self.estimate_low_s is None else min(max(self.estimate_low_s, 0.0), high)
        return (low, high)

    @property
    def cost_share(self) -> float | None:
        """The cost as a share of the run (None when unknown)."""
        c = self.cost_s if not self.rule.experiment else self.estimate_s
        if c is None or self.run_time_s <= 0:
            return None
        return min(c / self.run_time_s, 1.0)

    def cost_text(self) -> str:
        """'costs 12.3 s (15.0% of the run)', or why not."""
        share = self.cost_share
        of_run = f" ({pct(share)} of the run)" if share is not None else ""
        if self.rule.experiment:
            if self.estimate_s is None:
                return "gain unknown: to be proven with iolab tune --from-log"
            low, high = self.estimate_range_s or (self.estimate_s, self.estimate_s)
            if high - low > 0.005 * max(high, 1e-9):
                lo = "0 s" if low < 5e-5 else fmt_seconds(low)
                run = self.run_time_s
                shares = (f" ({pct(min(low / run, 1.0))}-{pct(min(high / run, 1.0))} of the "
                          "run)" if run > 0 else "")
                return (f"may save {lo} to {fmt_seconds(high)}{shares}: an estimate "
                        f"({fmt_seconds(high)} if the change acts on all of its time, {lo} "
                        "on the time no waste finding explains), to be proven with iolab "
                        "tune --from-log")
            return (f"may save up to {fmt_seconds(self.estimate_s)}{of_run}: an estimate, "
                    "to be proven with iolab tune --from-log")
        if self.cost_s is None:
            return "cost unknown from the counters"
        if self.hit.cost_bound:
            return (f"at most {fmt_seconds(self.cost_s)}{of_run}: an upper bound from the "
                    f"counters, not a measured cost ({MEASURE_BOUND} measures it)")
        gross = self.gross_s or 0.0
        if self.same_time_as and self.cost_s <= 0.005 * max(gross, 1e-9):
            return (f"costs {fmt_seconds(gross)}: the same time as "
                    f"{', '.join(self.same_time_as)}, not in addition")
        if self.beside and self.cost_s <= 0.005 * max(gross, 1e-9):
            return (f"costs {fmt_seconds(gross)} on other ranks, while the slowest rank spent "
                    f"the time {', '.join(self.beside)} counts: not in addition")
        if self.same_time_as or self.beside:
            others = ", ".join(self.same_time_as + self.beside)
            return (f"costs {fmt_seconds(self.cost_s)}{of_run} beyond the time of {others} "
                    f"({fmt_seconds(gross)} in all)")
        return f"costs {fmt_seconds(self.cost_s)}{of_run}"


# What turns a bound into a measurement: the trace times each request.
MEASURE_BOUND = "`iolab profile --trace`"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"
