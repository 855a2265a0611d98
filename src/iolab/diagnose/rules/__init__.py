"""The rule registry: every rule, in report order. Renderers and docs read it."""

from __future__ import annotations

from iolab.diagnose.rules.base import Rule


def registry() -> list[Rule]:
    """All rules, built on each call (no module-level state)."""
    from iolab.diagnose.rules import access, files, layers, lustre, mpiio, time

    rules: list[Rule] = []
    for family in (time, layers, access, files, mpiio, lustre):
        rules.extend(family.rules())
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids)), "duplicate rule id"
    return rules
