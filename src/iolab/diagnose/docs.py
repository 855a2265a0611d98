"""``docs/rules.md`` generated from the rule registry and the threshold table.

Run ``python -m iolab.diagnose.docs > docs/rules.md``; a test checks the file is current.
"""

from __future__ import annotations

from iolab.diagnose.config import Thresholds
from iolab.diagnose.examples import EXAMPLES
from iolab.diagnose.rules import registry


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_markdown() -> str:
    rules = registry()
    out = ["# iolab diagnose: rules", "",
           "Generated from the rule registry (`python -m iolab.diagnose.docs > docs/rules.md`);"
           " do not edit by hand.", "",
           "`kind`: waste (work that need not happen: owns the seconds it explains) or "
           "experiment (a setting to try: owns none, its gain an estimate to prove with "
           "`iolab tune --from-log`); `tier`: who gets a second first when findings claim the "
           "same (mechanism, then symptom, then layout); see docs/diagnose.md.", "",
           "| id | severity | kind | tier | family | direction | title |",
           "|---|---|---|---|---|---|---|"]
    for r in rules:
        sev = r.severity if r.severity == "info" else "by cost"
        kind = "experiment" if r.experiment else "waste"
        out.append(f"| `{r.id}` | {sev} | {kind} | {r.tier} | {r.family} | "
                   f"{'read/write' if r.directional else '-'} | {_cell(r.title)} |")
    out.append("")
    for r in rules:
        out += [f"## `{r.id}`: {r.title}", "",
                ("- severity: **info** (information only)" if r.severity == "info" else
                 "- severity: from the cost (INFO under `cost_info_s`, HIGH from "
                 "`cost_high_share` of the run in an I/O-bound job)")
                + f", family: {r.family}, "
                + ("an experiment (owns no time)" if r.experiment else f"waste, tier {r.tier}")
                + (", one finding per direction (read/write)" if r.directional else ""),
                f"- why: {r.why}",
                f"- expected effect: {r.effect}"]
        if r.cost:
            out.append(f"- cost: {r.cost}")
        if r.id in EXAMPLES:
            out.append(f"- example: {EXAMPLES[r.id]}")
        for check in (r.requires, r.partly):
            if check is not None and check.__doc__:
                out.append(f"- judged only with: {check.__doc__.strip().splitlines()[0]} "
                           "(listed as 'not judged' otherwise)")
        out.append("- sources:")
        out += [f"  - {s.doc}, *{s.where}*: \"{s.says}\"" for s in r.sources]
        out.append("")
    out += ["## Thresholds", "",
            "Defaults, then `--config FILE` (TOML `[thresholds]` table or JSON), then "
            "`--set name=value`. Sizes accept `64M`, `1G`.", "",
            "| name | type | default | unit | meaning |", "|---|---|---|---|---|"]
    for name, typ, default, unit, help_ in Thresholds.describe():
        out.append(f"| `{name}` | {typ} | {default} | {unit} | {_cell(help_)} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(rules_markdown(), end="")
