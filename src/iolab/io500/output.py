"""IO500's score and result files: result_summary.txt (also on stdout), result.txt (IO500's
``key = value`` sections), config-orig.ini and config.ini, and ``--json``.

The score is IO500's ``calc_score``: per group (BW in GiB/s, MD in kIOPS) the geometric mean
of the phases' scores that are above 0 (0 when none is), and the total the square root of
their product. A phase is ``[INVALID]`` as IO500 marks it: a write phase shorter than the
stonewall, a score of 0, a find that found nothing; the run is invalid when any phase is,
or when the stonewall is not IO500's 300 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from iolab.io500.phases import Phase

VERSION = "io500-sc25+iolab"  # the IO500 list the phases and rules follow
SCHEMA_VERSION = 1


@dataclass
class PhaseResult:
    phase: Phase
    score: float
    runtime_s: float
    io500_exe: str
    iolab_exe: str
    run_id: int | None = None
    pairs: list[tuple[str, str]] = field(default_factory=list)  # result.txt lines
    invalid: list[str] = field(default_factory=list)  # IO500's "ERROR INVALID" reasons


def group_scores(results: list[PhaseResult]) -> dict[str, float]:
    """IO500's calc_score for the phases that ran (extended ones included when run)."""
    scores = {}
    for group in ("MD", "BW"):
        values = [r.score for r in results if r.phase.group == group and r.score > 0]
        scores[group] = math.prod(values) ** (1 / len(values)) if values else 0.0
    scores["TOTAL"] = math.sqrt(scores["MD"] * scores["BW"])
    return scores


def result_line(r: PhaseResult) -> str:
    mark = "[RESULT]" if r.phase.group else "[      ]"
    bad = " [INVALID]" if r.invalid else ""
    return (f"{mark} {r.phase.name:>20} {r.score:15f} {r.phase.unit} : time "
            f"{r.runtime_s:.3f} seconds{bad}")


def score_line(scores: dict[str, float], valid: bool) -> str:
    bad = "" if valid else " [INVALID]"
    return (f"[SCORE ] Bandwidth {scores['BW']:f} GiB/s : IOPS {scores['MD']:f} kiops : "
            f"TOTAL {scores['TOTAL']:f}{bad}")


def _pair(key: str, value: str) -> str:
    return f"{key:<15} = {value}"


def result_txt(results: list[PhaseResult], head: list[tuple[str, str]], run_invalid: list[str],
               scores: dict[str, float], valid: bool) -> str:
    out = ["[run]", *(_pair(k, v) for k, v in head)]
    out += [f"; ERROR INVALID {why}" for why in run_invalid]
    out.append("")
    for r in results:
        out += ["", f"[{r.phase.name}]", _pair("exe", r.io500_exe),
                _pair("iolab-exe", r.iolab_exe)]
        out += [_pair(k, v) for k, v in r.pairs]
        out += [f"; ERROR INVALID {why}" for why in r.invalid]
        if r.phase.kind != "timestamp":
            out.append(_pair("score", f"{r.score:f}"))
        if r.run_id is not None:
            out.append(_pair("iolab-run", str(r.run_id)))
    out += ["", "[SCORE]", _pair("MD", f"{scores['MD']:f}"), _pair("BW", f"{scores['BW']:f}"),
            _pair("SCORE", f"{scores['TOTAL']:f}" + ("" if valid else " [INVALID]"))]
    return "\n".join(out) + "\n"


def json_doc(results: list[PhaseResult], scores: dict[str, float], valid: bool,
             mode: str, resdir: str, ranks: int, run_invalid: list[str]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION, "kind": "io500", "version": VERSION, "mode": mode,
        "ranks": ranks, "result_dir": resdir, "valid": valid, "invalid": run_invalid,
        "phases": [{"name": r.phase.name, "group": r.phase.group, "unit": r.phase.unit,
                    "score": r.score, "time_s": r.runtime_s, "valid": not r.invalid,
                    "invalid": r.invalid, "run_id": r.run_id, "io500_exe": r.io500_exe,
                    "iolab_exe": r.iolab_exe} for r in results],
        "score": {"bandwidth_gib_per_s": scores["BW"], "md_kiops": scores["MD"],
                  "total": scores["TOTAL"]},
    }
