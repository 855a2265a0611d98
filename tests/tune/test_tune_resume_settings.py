"""--resume continues with the stored tune's settings (its policy, budget, workload); the
end-to-end refusal of a changed option is in test_tune_end_to_end."""

from __future__ import annotations

import argparse

import pytest

from iolab.errors import UsageError
from iolab.tune.cli import _refuse_changed_settings, _stored_policy, add_arguments
from iolab.tune.search import Policy


def parsed(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(argv))


def test_the_stored_policy_comes_back_whole() -> None:
    stored = Policy(repeats=4, repeat_top=2, rule="median")
    row = {"command": ["iolab", "tune", "--repeats", "9"],  # the policy wins over the line
           "result": {"policy": {**stored.to_json(), "added_later": 1}}}
    assert _stored_policy(row) == stored


def test_a_tune_stored_before_policies_keeps_its_command_line_and_median_rule() -> None:
    row = {"command": ["iolab", "tune", "--repeats", "1", "--repeat-top", "2", "--", "x"],
           "result": None}
    assert _stored_policy(row) == Policy(repeats=1, repeat_top=2, rule="median")
    assert _stored_policy({"command": None, "result": None}).repeats == Policy().repeats


def test_a_changed_setting_is_refused_and_an_equal_one_accepted() -> None:
    row = {"budget": 12, "confirm": 5, "seed": 0,
           "objective": {"kind": "bench", "target": "write"}}
    policy = Policy(repeats=2)
    _refuse_changed_settings(parsed("--resume", "1"), row, policy)  # nothing given
    _refuse_changed_settings(parsed("--resume", "1", "--trials", "12", "--repeats", "2"),
                             row, policy)
    with pytest.raises(UsageError, match=r"--repeats differs \(the tune's is 2\)"):
        _refuse_changed_settings(parsed("--resume", "1", "--repeats", "5"), row, policy)
    with pytest.raises(UsageError, match=r"--target differs \(the tune's is write\)"):
        _refuse_changed_settings(parsed("--resume", "1", "--target", "read"), row, policy)
    with pytest.raises(UsageError, match="--preset differs"):
        _refuse_changed_settings(parsed("--resume", "1", "--preset", "posix"), row, policy)
