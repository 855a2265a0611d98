"""A fix predicted, or proven on the application: what ``iolab diagnose --proof TUNE_ID`` shows.

diagnose predicts a fix from the counters; ``iolab tune --from-log LOG -- COMMAND`` runs
the user's own command with each predicted setting against the unchanged command and stores
a verdict per fix (iolab.tune.proof). This module reads that stored document (plain data, so
diagnose needs no part of tune to show it) and gives each finding its lines: the verdicts of
the runs that applied its settings, or "predicted, not proven here" with the reason.

A fix that needs a change in the program's code (collective transfers, larger calls, a file
view, an HDF5 property) cannot be applied to a command: it stays a prediction. ``iolab tune
--from-log LOG`` without a command measures those on a proxy of the log's I/O and judges each
prediction against its winner (iolab.tune.fromlog.judge); given as a second ``--proof``, that
judgement is shown beside the code change, as evidence from a proxy, never as a proof on the
application. Settings keep the application proof's verdict.

A proof (or a proxy tune) belongs to one log: :func:`log_identity` names the job a log
recorded (its program, ranks, start and end, job ids), the same for a copy of the log under
another name, and a tune of another job is refused.
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

# A proxy tune's judgement of a code change (iolab.tune.fromlog.judge), as the reports print it.
PROXY_WORDS = {"confirmed": "confirmed on the proxy", "no-gain": "no gain on the proxy",
               "other-value": "the proxy's winner sets another value",
               "not-measured": "not measured on the proxy"}


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


@dataclass
class ProxyEvidence:
    """A proxy tune of the log (``iolab tune --from-log LOG`` without a command): its id, the
    proxy it ran (one line), diagnose's predictions judged against its winner, its claim."""

    tune_id: int
    proxy: str
    judged: list[dict[str, Any]] = field(default_factory=list)
    claim: dict[str, Any] | None = None

    def for_knob(self, knob: str, value: str) -> dict[str, Any]:
        """The proxy's judgement of one code change, as ``{"tune_id", "verdict", "value",
        "winner", "why", "text"}`` (verdict: a key of PROXY_WORDS)."""
        j = next((p for p in self.judged if p.get("knob") == knob), None)
        if j is None:
            verdict, why, winner = "not-measured", "the proxy tune did not include it", None
            value_run = value
        else:
            why, winner, value_run = str(j.get("why", "")), j.get("winner"), j["value"]
            verdict = ("confirmed" if j.get("confirmed") else "not-measured"
                       if why.startswith("not measured") else "no-gain"
                       if "no significant gain" in why else "other-value")
        gain = ""
        c = self.claim or {}
        if verdict == "confirmed" and c.get("speedup") is not None:
            gain = f", {c['speedup']:.2f}x" + (
                f" (95% CI {c['ci_low']:.2f}-{c['ci_high']:.2f})"
                if c.get("ci_low") is not None and c.get("ci_high") is not None else "")
        return {"tune_id": self.tune_id, "verdict": verdict, "value": value_run,
                "winner": winner, "why": why,
                "text": f"on a proxy of your I/O, not a proof on the application: "
                        f"{PROXY_WORDS[verdict]} ({why}{gain}) (proxy tune {self.tune_id})"}


def load(row: dict[str, Any] | None, tune_id: int, model: Model) -> Proof | ProxyEvidence:
    """The tune stored as ``tune_id`` (its database row, None when there is none): a proof
    on the command or a proxy tune, checked to be of this log; UsageError otherwise."""
    if row is None:
        raise UsageError(f"--proof {tune_id}: no tune {tune_id} in the results database "
                         "(iolab tune --list; a proof is made by iolab tune --from-log LOG "
                         "-- COMMAND)")
    result = row.get("result") or {}
    from_log = (row.get("objective") or {}).get("from_log")
    if result.get("kind") != "proof" and not from_log:
        raise UsageError(f"--proof {tune_id}: tune {tune_id} is a search, not a proof of "
                         "fixes nor a proxy of a log (make one with iolab tune --from-log "
                         "LOG -- COMMAND, or --from-log LOG for a proxy)")
    what = "proof" if result.get("kind") == "proof" else "proxy tune"
    if row.get("status") != "done":
        raise UsageError(f"--proof {tune_id}: the {what} did not finish (status "
                         f"{row.get('status')}); run it again")
    if from_log and what == "proxy tune":
        return _load_proxy(tune_id, from_log, result, model)
    if result.get("log_identity") != log_identity(model):
        raise UsageError(f"--proof {tune_id}: tune {tune_id} proves the fixes of "
                         f"{result.get('log')}, another job than this log's; give that log, "
                         "or make a proof of this one")
    return Proof(tune_id, list(result.get("fixes") or []),
                 list(result.get("not_proven") or []))


def _load_proxy(tune_id: int, from_log: dict[str, Any], result: dict[str, Any],
                model: Model) -> ProxyEvidence:
    """A proxy tune of this log (its identity stored by the tune; a tune made before that
    is matched by the log it names, when that log is still there)."""
    identity = from_log.get("log_identity") or _identity_of(from_log.get("log"))
    if identity != log_identity(model):
        raise UsageError(f"--proof {tune_id}: tune {tune_id} is a proxy of "
                         f"{from_log.get('log')}, another job than this log's; give that log, "
                         "or tune a proxy of this one (iolab tune --from-log LOG)")
    proxy = list(from_log.get("proxy") or [])
    return ProxyEvidence(tune_id, proxy[0] if proxy else "",
                         list(result.get("predictions") or []), result.get("claim"))


def _identity_of(log: str | None) -> str | None:
    """The identity of the log a tune names, None when it cannot be read any more."""
    # deferred: the model and the readers pull numpy; tune imports this module at start-up
    from iolab.model.job import build_model
    from iolab.sources import load_source

    if not log:
        return None
    try:
        return log_identity(build_model([load_source(log)]))
    except (OSError, ValueError, UsageError):
        return None


def has_fix(f: Finding) -> bool:
    """A finding with a fix to apply (not the job's overview, not information only)."""
    return not f.rule.overview and not f.fix.text.startswith("Information only")


def fix_status(rep: Report, f: Finding) -> list[dict[str, Any]]:
    """A finding's fix, predicted or proven: one item per measured or unproven setting when
    the report carries a proof that names it, else one "predicted, not proven here" item.
    With a proxy tune, each code change of the fix carries the proxy's judgement
    (``proxy``, see ProxyEvidence.for_knob) on its item, added when the proof has none."""
    if not has_fix(f):
        return []
    proof: Proof | None = rep.proof
    if proof is None:
        items = [{"setting": None, "verdict": "predicted", "text": PREDICTED}]
    else:
        items = proof.for_rule(f.rule.id) or [
            {"setting": None, "verdict": "predicted",
             "text": f"{PREDICTED}: proof {proof.tune_id} had no setting of this fix to "
                     "apply to the command"}]
    evidence: ProxyEvidence | None = rep.proxy
    if evidence is not None:
        items = _with_proxy(items, f, evidence)
    return items


def _with_proxy(items: list[dict[str, Any]], f: Finding, evidence: ProxyEvidence
                ) -> list[dict[str, Any]]:
    """The items with the proxy's judgement beside each code change of the fix (settings
    keep the proof's verdict). The bare prediction goes when the code changes are all the
    fix holds."""
    added = []
    for c in f.fix.code:
        if not c.knob:
            continue
        part = evidence.for_knob(c.knob, c.value)
        item = next((i for i in items
                     if i["setting"] and i["setting"].split("=")[0] == c.knob), None)
        if item is None:
            item = {"setting": f"{c.knob}={part['value']}", "verdict": "predicted",
                    "text": f"{PREDICTED}: a change in the program's own I/O calls"}
            added.append(item)
        item["proxy"] = part
    if added and not f.fix.settings:
        items = [i for i in items if i["setting"] is not None]
    return items + added


def status_lines(rep: Report, f: Finding) -> list[tuple[str, str]]:
    """The text and HTML renderers' lines for a finding's fix, each with its head: "proof"
    (predicted, or the verdict on the command) or "proxy" (a proxy's evidence)."""
    proof: Proof | None = rep.proof
    where = f" (proof {proof.tune_id})" if proof is not None else ""
    out = []
    for i in fix_status(rep, f):
        name = f"{i['setting']}: " if i["setting"] else ""
        out.append(("proof", name + i["text"] + where))
        if i.get("proxy"):  # evidence from a proxy, on its own line: never a proof
            out.append(("proxy", name + i["proxy"]["text"]))
    return out


def annotate(doc: dict[str, Any], rep: Report) -> dict[str, Any]:
    """The report's JSON with each finding's ``proof`` (a list of items, see fix_status) and
    the tune ids of the proof and the proxy tune given (null without)."""
    proof: Proof | None = rep.proof
    evidence: ProxyEvidence | None = rep.proxy
    for fd, f in zip(doc.get("findings", []), rep.findings):
        fd["proof"] = fix_status(rep, f)
    doc["proof_tune_id"] = proof.tune_id if proof is not None else None
    doc["proxy_tune_id"] = evidence.tune_id if evidence is not None else None
    return doc
