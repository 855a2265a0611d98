"""IO500's mdtest phases run with IO500's ``-N 1``: each rank stats, reads and deletes its
neighbour's files, on mdtest's names (the layout IO500's find walks)."""

from __future__ import annotations

from iolab.io500 import config, phases


def _settings() -> phases.Settings:
    return phases.Settings(datadir="/d", resdir="/r", stonewall=0, ranks=2, nodes=None,
                           api="POSIX")


def _args(name: str) -> list[str]:
    cfg = config.parse_text("[global]\ndatadir = /d\n[mdtest-easy]\nn = 10\n"
                            "[mdtest-hard]\nn = 10\n", "test.ini")
    phase = next(p for p in phases.PHASES if p.name == name)
    return phases.engine_args(cfg, phase, _settings())[1]


def test_io500_mdtest_phases_pass_its_neighbour_stride() -> None:
    """expected --md-stride 1 on every mdtest phase, as IO500's -N 1, and -N 1 no longer in
    the passed-over list / was each rank on its own files (-N 1 passed over)."""
    for name in ("mdtest-easy-write", "mdtest-easy-stat", "mdtest-hard-read",
                 "mdtest-hard-delete"):
        args = _args(name)
        assert args[args.index("--md-stride") + 1] == "1", name
        assert args[args.index("--md-layout") + 1] == "mdtest", name
    assert not any("-N" in key for key in phases.MDTEST_NOT_PASSED)


def test_io500_mdtest_write_phases_sync_as_its_minus_y() -> None:
    """expected --md-sync on the mdtest write phases only, as IO500's -Y on its -C lines /
    was no sync (-Y passed over)."""
    for name in ("mdtest-easy-write", "mdtest-hard-write"):
        assert "--md-sync" in _args(name), name
    for name in ("mdtest-easy-stat", "mdtest-hard-read", "mdtest-hard-delete"):
        assert "--md-sync" not in _args(name), name
    assert "-Y" not in phases.MDTEST_NOT_PASSED
