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
           "| id | severity | family | direction | title |", "|---|---|---|---|---|"]
    for r in rules:
        sev = r.severity if r.severity == "info" else "by cost"
        out.append(f"| `{r.id}` | {sev} | {r.family} | "
                   f"{'read/write' if r.directional else '-'} | {_cell(r.title)} |")
    out.append("")
    for r in rules:
        out += [f"## `{r.id}`: {r.title}", "",
                ("- severity: **info** (information only)" if r.severity == "info" else
                 "- severity: from the cost (INFO under `cost_info_s`, HIGH from "
                 "`cost_high_share` of the run in an I/O-bound job)")
                + f", family: {r.family}"
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
