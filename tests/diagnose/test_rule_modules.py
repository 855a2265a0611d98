"""Rules split into their own modules keep their place in the report (issue 30): the
cross-layer family lists mpiio-time-skew (rules/time_skew.py) where it stood, and the Lustre
fix scripts come from fixes_lustre.py."""

from __future__ import annotations

from iolab.diagnose import fixes, fixes_lustre
from iolab.diagnose.rules import layers, registry, time_skew

CROSS_LAYER_ORDER = ["read-modify-write", "write-amplification", "single-posix-writer",
                     "mpiio-time-skew", "tiny-collective-calls", "slow-close", "tiny-file-slow"]


def test_mpiio_time_skew_keeps_its_place_from_its_own_module() -> None:
    """Expected: the cross-layer rules in the same order, mpiio-time-skew's trigger and fix
    from rules/time_skew.py, and the registry order unchanged around it / was: all of them in
    rules/layers.py (809 lines)."""
    ids = [r.id for r in layers.rules()]
    assert ids == CROSS_LAYER_ORDER
    skew = next(r for r in registry() if r.id == "mpiio-time-skew")
    assert skew.trigger.__module__ == time_skew.__name__ == skew.fix.__module__
    every = [r.id for r in registry()]
    start = every.index(CROSS_LAYER_ORDER[0])
    assert every[start:start + len(CROSS_LAYER_ORDER)] == CROSS_LAYER_ORDER


def test_lustre_scripts_come_from_their_own_module() -> None:
    """Expected: one home for the lfs scripts, and the stripe size the hints use is the same
    function / was: both in fixes.py (677 lines)."""
    assert not hasattr(fixes, "lfs_setstripe") and not hasattr(fixes, "lfs_new_dirs")
    assert fixes_lustre.stripe_size(4096) == 64 << 10  # never below Lustre's 64 KiB unit
    assert fixes_lustre.stripe_size((1 << 20) + 5) == 1 << 20
