"""A fix predicted, or proven on the application: what ``iolab diagnose --proof TUNE_ID`` shows.

diagnose predicts a fix from the counters; ``iolab tune --from-log LOG -- COMMAND`` runs
the user's own command with each predicted setting against the unchanged command and stores
a verdict per fix (iolab.tune.proof). This module reads that stored document (plain data, so
diagnose needs no part of tune to show it) and gives each finding its lines: the verdicts of
the runs that applied its settings, or "predicted, not proven here" with the reason.

The proof belongs to one log: :func:`log_identity` names the job a log recorded (its program,
ranks, start and end, job ids), the same for a copy of the log under another name, and a
proof of another job is refused.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iolab.errors import UsageError

if TYPE_CHECKING:
    from iolab.diagnose.report import Report
    from iolab.diagnose.rules.base import Finding
    from iolab.model.job import Model

PREDICTED = "predicted, not proven here"

# The verdicts a proof gives a fix (iolab.tune.proof), as the reports print them.
VERDICT_WORDS = {"faster": "proven faster", "no-effect": "no effect",
                 "slower": "slower — do not apply", "failed": "fails — do not apply"}


def log_identity(model: Model) -> str:
    """A short digest of the job a log recorded (program, ranks, start, end, job ids): the
    same for the same log under any name, different for another run."""
    job = model.job
    ids = sorted(str(s.jobid) for s in job.logs)
    key = json.dumps([job.exe, job.nprocs, round(job.start_time, 3), round(job.end_time, 3),
                      ids])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass
class Proof:
    """A stored proof: the tune's id and its result document (``kind`` "proof")."""

    tune_id: int
    fixes: list[dict[str, Any]] = field(default_factory=list)
    not_proven: list[dict[str, Any]] = field(default_factory=list)

    def for_rule(self, rule_id: str) -> list[dict[str, Any]]:
        """What the proof says about a rule's fix: its measured candidates (alone, its
        settings together, and every predicted setting together) and its unproven settings,
        as ``{"setting", "verdict", "text"}``."""
        out = [{"setting": c["label"], "verdict": c["verdict"], "text": c["text"]}
               for c in self.fixes if rule_id in c.get("rules", ())]
        out += [{"setting": f"{u['knob']}={u['value']}", "verdict": "predicted",
                 "text": f"{PREDICTED}: {u['reason']}"}
                for u in self.not_proven if u.get("rule") == rule_id]
        return out


def load(row: dict[str, Any] | None, tune_id: int, model: Model) -> Proof:
    """The proof stored as tune ``tune_id`` (its database row, None when there is none),
    checked to be a proof of this log; UsageError otherwise."""
    if row is None:
        raise UsageError(f"--proof {tune_id}: no tune {tune_id} in the results database "
                         "(iolab tune --list; a proof is made by iolab tune --from-log LOG "
                         "-- COMMAND)")
    result = row.get("result") or {}
    if result.get("kind") != "proof":
        raise UsageError(f"--proof {tune_id}: tune {tune_id} is a search, not a proof of "
                         "fixes (make one with iolab tune --from-log LOG -- COMMAND)")
    if row.get("status") != "done":
        raise UsageError(f"--proof {tune_id}: the proof did not finish (status "
                         f"{row.get('status')}); run it again")
    if result.get("log_identity") != log_identity(model):
        raise UsageError(f"--proof {tune_id}: tune {tune_id} proves the fixes of "
                         f"{result.get('log')}, another job than this log's; give that log, "
                         "or make a proof of this one")
    return Proof(tune_id, list(result.get("fixes") or []),
                 list(result.get("not_proven") or []))


def has_fix(f: Finding) -> bool:
    """A finding with a fix to apply (not the job's overview, not information only)."""
    return not f.rule.overview and not f.fix.text.startswith("Information only")


def fix_status(rep: Report, f: Finding) -> list[dict[str, Any]]:
    """A finding's fix, predicted or proven: one item per measured or unproven setting when
    the report carries a proof that names it, else one "predicted, not proven here" item."""
    if not has_fix(f):
        return []
    proof: Proof | None = rep.proof
    if proof is None:
        return [{"setting": None, "verdict": "predicted", "text": PREDICTED}]
    items = proof.for_rule(f.rule.id)
    if items:
        return items
    return [{"setting": None, "verdict": "predicted",
             "text": f"{PREDICTED}: proof {proof.tune_id} had no setting of this fix to "
                     "apply to the command"}]


def status_lines(rep: Report, f: Finding) -> list[str]:
    """The text and HTML renderers' lines for a finding's fix (empty when it has none)."""
    proof: Proof | None = rep.proof
    where = f" (proof {proof.tune_id})" if proof is not None else ""
    return [(f"{i['setting']}: " if i["setting"] else "") + i["text"] + where
            for i in fix_status(rep, f)]


def annotate(doc: dict[str, Any], rep: Report) -> dict[str, Any]:
    """The report's JSON with each finding's ``proof`` (a list of items, see fix_status) and,
    with a proof, its tune id at the top."""
    proof: Proof | None = rep.proof
    for fd, f in zip(doc.get("findings", []), rep.findings):
        fd["proof"] = fix_status(rep, f)
    doc["proof_tune_id"] = proof.tune_id if proof is not None else None
    return doc
