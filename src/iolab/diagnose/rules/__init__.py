"""The rule registry: every rule, in report order. Renderers and docs read it."""

from __future__ import annotations

from dataclasses import replace

from iolab.diagnose.rules.base import Rule

# How each rule's seconds are attributed (report.attribute_time), as data: its tier (who gets
# a second first when several findings claim it: the mechanism that explains it, then the
# access shape it shows as, then the file system's layout) and whether it proposes an
# experiment (a setting to try: owns no time, its gain to be proven by iolab tune) rather
# than finding waste (work that need not happen). Rules not listed are waste symptoms.
MECHANISM, SYMPTOM, LAYOUT = "mechanism", "symptom", "layout"
ATTRIBUTION: dict[str, tuple[str, bool]] = {
    # waste, by the mechanism across layers that makes it
    "read-modify-write": (MECHANISM, False),
    "write-amplification": (MECHANISM, False),
    "fill-mode": (MECHANISM, False),
    "slow-close": (MECHANISM, False),
    "tiny-collective-calls": (MECHANISM, False),
    "mpiio-time-skew": (MECHANISM, False),
    "single-posix-writer": (MECHANISM, False),
    "single-io-stream": (MECHANISM, False),
    "redundant-traffic": (MECHANISM, False),
    "formatted-output": (MECHANISM, False),
    "small-shared-input": (MECHANISM, False),
    # experiments: settings to try, proven or not by iolab tune --from-log
    "mpiio-independent": (SYMPTOM, True),
    "aggregators-per-node": (LAYOUT, True),
    "mpiio-nonblocking": (SYMPTOM, True),
    "direct-io": (SYMPTOM, True),
    "io-stream-per-node": (LAYOUT, True),
    "stripe-shared-file": (LAYOUT, True),
    "stripe-huge-file": (LAYOUT, True),
    "stripe-size-mismatch": (LAYOUT, True),
    "stripe-small-files": (LAYOUT, True),
}


def registry() -> list[Rule]:
    """All rules, built on each call (no module-level state)."""
    # cycle: fixes, fixes_lustre and batch_scripts import rules.base (which runs this __init__)
    # and every rule module imports them back
    from iolab.diagnose.rules import access, cores, files, layers, lustre, mpiio, streams, time

    rules: list[Rule] = []
    for family in (time, layers, access, files, mpiio, lustre, streams, cores):
        rules.extend(family.rules())
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids)), "duplicate rule id"
    return [replace(r, tier=ATTRIBUTION.get(r.id, (SYMPTOM, False))[0],
                    experiment=ATTRIBUTION.get(r.id, (SYMPTOM, False))[1]) for r in rules]
