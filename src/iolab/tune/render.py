"""What ``iolab tune`` prints: a line per finished trial (stderr), then the result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Any

from iolab.results.tunes import Trial
from iolab.tune.knobs import knob
from iolab.tune.search import INCONCLUSIVE, TuneResult
from iolab.tune.space import DEFAULT


def _config(params: dict[str, str]) -> str:
    set_ = [f"{k}={v}" for k, v in params.items() if v != DEFAULT]
    return " ".join(set_) if set_ else "(defaults)"


def _value(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    return f"{v:.1f} {unit}" if unit != "s" else f"{v:.3f} s"


class TrialPrinter:
    """One line per trial: n/N, phase, configuration, score, best so far and its speed-up."""

    def __init__(self, budget: int, confirm: int, unit: str, maximize: bool,
                 quiet: bool = False, verbose: bool = False,
                 stream: IO[str] | None = None) -> None:
        self.budget = budget
        self.confirm = confirm
        self.unit = unit
        self.maximize = maximize
        self.quiet = quiet
        self.verbose = verbose
        self.stream = stream if stream is not None else sys.stderr

    def trial(self, t: Trial, progress: TuneResult) -> None:
        if self.quiet:
            return
        if t.phase in ("search", "repeat"):
            where = f"trial {t.number + 1}/{self.budget}" + (" again" if t.phase == "repeat"
                                                            else "")
        else:  # the winner's 2 x confirm runs, then the runner-up's (a second look)
            n = t.number - progress.search_runs
            batch = 2 * max(1, self.confirm)
            where = (f"confirm {n + 1}/{batch}" if n < batch
                     else f"runner-up {n - batch + 1}/{batch}")
        score = _value(t.value, self.unit) if t.status == "ok" else f"{t.status}: {t.error}"
        best = ""
        b, w = progress.baseline_score, progress.winner_score
        if b and w and t.phase != "confirm":
            ratio = w / b if self.maximize else b / w
            best = f"   best {_value(w, self.unit)} ({ratio:.2f}x the defaults)"
        run = f"   run {t.run_id}" if self.verbose and t.run_id is not None else ""
        print(f"iolab tune: {where:17} {_config(t.params):50} {score}{best}{run}",
              file=self.stream, flush=True)


def also_confirmed(confirmed: list[dict[str, Any]], unit: str) -> list[str]:
    """The configuration a second look confirmed and did not keep (TuneResult.confirmed):
    its speed-up, its confirmation median against its search median."""
    out = []
    for c in confirmed:
        if not c.get("kept"):
            claim = c.get("claim") or {}
            out.append(f"also confirmed, not kept: {_config(c.get('winner') or {})}: "
                       f"{claim.get('speedup', 0):.2f}x the defaults ("
                       f"{_value(c.get('score'), unit)} against "
                       f"{_value(c.get('search_score'), unit)} in the search)")
    return out


def render_result(tune_id: int, r: TuneResult, unit: str, written: list[Path]) -> str:
    inconclusive = bool(r.error and r.error.startswith(INCONCLUSIVE))
    lines = [f"Tune {tune_id}: {INCONCLUSIVE if inconclusive else r.status}"
             + (f" (MPI-IO implementation tuned: {r.implementation})" if r.implementation
                else "")]
    if inconclusive:  # no winner line: none was measured
        lines.append(f"  {r.error}")
    elif r.error:
        lines.append(f"  error: {r.error}")
    lines.append(f"  baseline (defaults): {_value(r.baseline_score, unit)}")
    if r.winner:
        lines.append(f"  winner: {_value(r.winner_score, unit)} with")
        for name, value in r.winner.items():
            lines.append(f"    {name} = {value}    ({knob(name).applied_by})")
    elif r.status == "done":
        lines.append("  winner: the defaults")
    if r.claim is not None:
        lines.append(f"  claim: {r.claim.statement()}")
    lines += [f"  {line}" for line in also_confirmed(r.confirmed, unit)]
    if r.importances:
        ranked = sorted(r.importances.items(), key=lambda kv: -kv[1])
        lines.append("  what mattered: " + ", ".join(f"{k} {v:.0%}" for k, v in ranked))
    for n in r.notes:
        lines.append(f"  note: {n}")
    if r.predictions:
        lines.append("  diagnose's predictions, measured:")
        for p in r.predictions:
            mark = ("confirmed" if p["confirmed"] else "not measured"
                    if p["why"].startswith("not measured") else "not confirmed")
            lines.append(f"    {mark:13} {p['knob']}={p['value']} ({p['rule']}): {p['why']}")
    if written:
        lines.append("  files: " + ", ".join(str(p) for p in written))
    return "\n".join(lines) + "\n"
