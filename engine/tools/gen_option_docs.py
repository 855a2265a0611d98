#!/usr/bin/env python3
"""Generate the option table of docs/engine.md from ``iolab-bench --list-options``.

The option table in the engine (config.c, backends/*.c) is the only declaration of an
option; this script renders it between the markers ``<!-- options:begin -->`` and
``<!-- options:end -->``.

    iolab-bench --list-options | engine/tools/gen_option_docs.py docs/engine.md
    iolab-bench --list-options | engine/tools/gen_option_docs.py --check docs/engine.md
"""

from __future__ import annotations

import json
import sys

BEGIN, END = "<!-- options:begin -->", "<!-- options:end -->"


def render(table: list[dict]) -> str:
    rows = ["| option | JSON key | type | default | choices / unit | owner | what |",
            "|---|---|---|---|---|---|---|"]
    for o in table:
        arg = "" if o["type"] in ("bool", "action") else " " + o["type"].upper()
        choices = "\\|".join(o["choices"]) if o["choices"] else (o["unit"] or "")
        if o["name"] == "api":
            choices = "built backends"  # depends on the build; --list-options shows them
        default = "" if o["default"] is None else f"`{o['default']}`"
        key = f"`{o['key']}`" if o.get("key") else ""
        rows.append(f"| `--{o['name']}{arg}` | {key} | {o['type']} | {default} | {choices} "
                    f"| {o.get('owner', '')} | {o['help'].replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    table = json.load(sys.stdin)
    with open(paths[0]) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        print(f"{paths[0]}: markers {BEGIN} / {END} missing", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{render(table)}{END}{tail}"
    if check:
        # every option of this build must be documented as rendered; rows of backends this
        # build lacks (e.g. pnetcdf in the MPICH build) may stay
        missing = [r for r in render(table).splitlines() if r not in rest]
        if missing:
            print("\n".join(missing), file=sys.stderr)
            print(f"{paths[0]}: option table out of date; regenerate with "
                  "'iolab-bench --list-options | engine/tools/gen_option_docs.py "
                  f"{paths[0]}'", file=sys.stderr)
            return 1
        return 0
    with open(paths[0], "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
