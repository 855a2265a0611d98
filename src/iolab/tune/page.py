"""The page of a stored tune (``iolab report tune ID``): each trial's score with the best so
far, the winner and its claim, the knob importances, every trial."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from iolab.pages import plots, prep_bench
from iolab.pages.fmt import human_seconds
from iolab.pages.page import Page, Plot, Section, Table, Text
from iolab.tune.render import also_confirmed


def tune_page(tune: Mapping[str, Any], trials: list[Any]) -> Page:
    obj = tune.get("objective") or {}
    unit = obj.get("unit") or "MiB/s"
    maximize = obj.get("direction", "maximize") != "minimize"
    search = [t for t in trials if t.phase in ("search", "repeat")]
    values = [t.value if t.status == "ok" else None for t in search]
    numbers = [t.number + 1 for t in search]  # as the terminal numbered them
    sec = Section("Search", [Text(
        f"status {tune['status']}, {len(search)} search trial(s), "
        f"{len(trials) - len(search)} confirmation run(s), seed {tune.get('seed')}")])
    if values:
        best = prep_bench.convergence(values, maximize)
        sec.blocks.append(Plot("convergence", "Each trial's score and the best so far",
                               partial(plots.convergence, values, best, unit, numbers)))
    res = tune.get("result") or {}
    claim = res.get("claim") or {}
    out = Section("Result")
    winner = res.get("winner")
    if winner:
        out.blocks.append(Table(["knob", "winner"], [[k, v] for k, v in winner.items()],
                                "Winner (knobs left at their default are not listed)"))
    elif winner is not None:  # an empty table said nothing
        out.blocks.append(Text("Winner: the defaults (no knob changed beat them)."))
    if claim:
        judged = claim.get("ci_low") is not None and claim.get("ci_high") is not None
        out.blocks.append(Text(  # the verdict is the interval's (iolab.stats)
            f"speed-up {claim.get('speedup', 0):.2f}x, "
            + (f"{claim.get('confidence', 0.95) * 100:.3g}% CI {claim['ci_low']:.2f}-"
               f"{claim['ci_high']:.2f}: "
               + ("significant" if claim.get("significant") else "no significant gain")
               if judged else "not judged: too few confirmation runs")))
    out.blocks += [Text(line) for line in also_confirmed(res.get("confirmed") or [], unit)]
    imp = prep_bench.importance_rows(res.get("importances") or {})
    if imp:
        out.blocks.append(Plot("importances", "Knob importances (Optuna fANOVA)",
                               lambda: plots.importances([k for k, _ in imp],
                                                         [v for _, v in imp])))
    labels = prep_bench.trial_labels(trials, tune.get("confirm"))
    rows = [[label, ", ".join(f"{k}={v}" for k, v in t.params.items()), t.status,
             "-" if t.value is None else f"{t.value:,.1f}", human_seconds(t.wall_time_s)]
            for label, t in zip(labels, trials)]
    trials_sec = Section("Trials", [Table(["trial", "params", "status", unit, "time"], rows)])
    return Page(f"iolab report: tune {tune['id']}", [" ".join(tune.get("command") or [])],
                [sec, out, trials_sec])
