"""mdtest's command language read as mdtest reads it (IOR's option.c: grouping, glued
values, k/m suffixes), what each line becomes in the engine, and the refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iolab.errors import UsageError
from iolab.mdtest.mapping import plan
from iolab.mdtest.output import sample_stats
from iolab.mdtest.parse import parse_command_line

# id, mdtest words, expected parameters (mdtest's variable names), as mdtest 4 sets them
CASES: list[tuple[str, list[str], dict[str, Any]]] = [
    ("defaults", [], {"items": 0, "iterations": 1, "path": "./out", "depth": 0,
                      "branch_factor": 1, "files_only": 0, "dirs_only": 0, "api": "POSIX",
                      "random_buffer_offset": -1, "dataPacketType": "t"}),
    ("grouped flags", ["-Fu"], {"files_only": 1, "unique_dir_per_task": 1}),
    ("vvv counts", ["-vvv"], {"verbose": 3}),
    ("value glued", ["-n100"], {"items": 100}),
    ("value after =", ["-n=1k"], {"items": 1024}),
    ("flags then a value letter", ["-FPn", "7"], {"files_only": 1, "print_rate_and_time": 1,
                                                   "items": 7}),
    ("bytes", ["-w", "3901", "-e", "3901"], {"write_bytes": 3901, "read_bytes": 3901}),
    ("long flag with its letter", ["--verify-read"], {"verify_read": 1}),
    ("long options", ["--showRankStatistics", "--random-seed", "5"],
     {"show_perrank_statistics": 1, "random_seed": 5}),
    ("module option", ["--posix.odirect"], {"posix.odirect": 1}),
]


@pytest.mark.parametrize("words,expected", [(w, e) for _, w, e in CASES],
                         ids=[c[0] for c in CASES])
def test_mdtest_words_set_mdtests_parameters(words: list[str], expected: dict[str, Any]
                                             ) -> None:
    params = parse_command_line(words).test.params
    assert {k: params[k] for k in expected} == expected


@pytest.mark.parametrize("words,says", [
    (["-n", "abc"], "not a number"),
    (["--posix.nosuch"], "not an mdtest option: 'iolab mdtest -h' lists them"),
    (["somedir"], "options only"),
    (["-n"], "needs a value"),
])
def test_bad_mdtest_words_are_one_line(words: list[str], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_command_line(words)


def args_of(words: list[str], ranks: int = 2) -> list[str]:
    line = parse_command_line(words)
    return plan(line.test, ranks).engine_args(bool(line.test.params["verify_read"]))


@pytest.mark.parametrize("words,expected", [
    (["-F", "-n", "10"], ["--md-files", "10", "--md-size", "0", "--md-dir", "shared",
                          "--md-phases", "files", "--reps", "1", "--md-layout",
                          "mdtest", "--path", "./out"]),
    (["-n", "4", "-u", "-i", "3", "-d", "/x"], ["--md-files", "4", "--md-size", "0",
                                                 "--md-dir", "unique", "--md-phases", "both",
                                                 "--reps", "3", "--path", "/x"]),
    (["-D", "-n", "2"], ["--md-phases", "dirs"]),
    (["-D", "-F", "-n", "2"], ["--md-phases", "both"]),
    (["-F", "-I", "8"], ["--md-files", "8"]),
    (["-F", "-n", "5", "-w", "3901", "-e", "3901", "-X"], ["--md-size", "3901", "--verify"]),
    (["-F", "-n", "5", "-C", "-T", "-E", "-r"], ["--md-phases", "files"]),
    (["-n", "5", "-C", "-T", "-E", "-r", "-U"], ["--md-phases", "both"]),
    (["-F", "-n", "5", "-f", "2", "-l", "2"], ["--md-files", "5"]),  # one test, on 2 ranks
    (["-F", "-n", "5", "-L", "-b", "3", "-G", "7", "--dataPacketType=i", "-v", "-Z"],
     ["--md-files", "5"]),
    # trees as mdtest resolves them: -I x the directories holding items, -n rounded down
    (["-F", "-z", "2", "-b", "2", "-I", "3"], ["--md-files", "21", "--md-depth", "2",
                                               "--md-branch", "2", "--md-items-per-dir", "3"]),
    (["-F", "-z", "2", "-b", "2", "-I", "3", "-L"], ["--md-files", "12", "--md-leaf-only"]),
    (["-F", "-z", "1", "-b", "3", "-n", "10"], ["--md-files", "8", "--md-items-per-dir", "2"]),
    (["-F", "-z", "2", "-b", "2", "-n", "9", "-L"], ["--md-files", "8",
                                                     "--md-items-per-dir", "2"]),
    (["-F", "-n", "5", "-N", "2"], ["--md-stride", "2"]),
    (["-F", "-n", "5", "-W", "3"], ["--stonewall", "3"]),
    (["-F", "-n", "5", "-w", "9", "-e", "9", "-y"], ["--md-size", "9", "--fsync"]),
    (["-F", "-n", "5", "-k"], ["--md-mknod"]),
    (["-F", "-n", "5", "-Y"], ["--md-sync"]),
    (["-F", "-n", "6", "-I", "3"], ["--md-files", "3", "--md-dir-loops", "2"]),
    (["-F", "-n", "5", "-p", "2"], ["--md-pre-delay", "2"]),
    (["-F", "-n", "5", "-R", "--random-seed=11"], ["--md-random-seed", "11",
                                                   "--md-seed-per-rank"]),
    (["-F", "-n", "5", "--random-seed=11"], ["--md-random-seed", "11"]),
    (["-F", "-n", "5", "-c"], ["--md-collective"]),
    (["-F", "-n", "5", "-B=0"], ["--md-files", "5"]),  # mdtest 4 runs -B 0 with barriers
])
def test_mdtest_lines_become_engine_options(words: list[str], expected: list[str]) -> None:
    got = args_of(words)
    assert got[:2] == ["--metadata", "easy"]
    pairs = list(zip(expected[::2], expected[1::2]))
    for flag, value in pairs:
        assert got[got.index(flag) + 1] == value, (flag, got)
    if len(expected) % 2:
        assert expected[-1] in got


@pytest.mark.parametrize("words,says", [
    (["-F", "-n", "5", "-z", "-1"], "depth must be 0 or more"),
    (["-F", "-n", "5", "-z", "1", "-u", "-N", "1"], "neighbour's tree"),
    (["-F", "-I", "2", "-z", "1", "-b", "2", "-W", "3"], "branch factor of 1"),
    (["-F", "-I", "2", "-z", "1", "-W", "3"], "nearest in iolab: -W without -z/-R"),
    (["-F", "-n", "5", "-R", "-W", "3"], "nearest in iolab: -W without -z/-R"),
    (["-F", "-n", "5", "-k", "-w", "4", "-e", "4"], "-k not compatible with -w"),
    (["-F", "-n", "6", "-I", "2", "-u"], "only specify the number of items"),
    (["-F", "-n", "5", "-I", "2"], "multiple of items per directory"),
    (["-F", "-n", "5", "-w", "10"], "nearest in iolab: -w 10 -e 10"),
    (["-F", "-n", "5", "-X"], "verifying needs bytes"),
    (["-F", "-n", "5", "-a", "DUMMY", "--dummy.delay-create=10"],
     "nearest in iolab: -a DUMMY without it"),
    (["-F", "-n", "5", "-a", "NOPE"], "not an mdtest API"),
    (["-F", "-n", "5", "-d", "a@b"], "one -d DIR"),
    (["-F", "-n", "5", "-l", "4"], "mdtest refuses it too"),
    (["-F", "-n", "6", "-I", "3", "-z", "1"], "-I 3 alone"),
    (["-F", "-n", "6", "-I", "3", "-W", "2"], "nearest in iolab: -n 3 -I 3"),
    (["-F", "-n", "6", "-I", "3", "-C"], "one phase alone"),
    (["-F", "-n", "5", "--posix.odirect"], "buffered"),
    (["-F", "-n", "5", "--print-all-procs"], "iolab results show ID"),
    (["-F", "-n", "5", "-B", "1"], "with barriers"),
    (["-F", "-n", "5", "-c", "-u"], "nearest in iolab: -c without -u"),
    (["-F", "-n", "5", "-c", "-N", "1"], "nearest in iolab: -c without -N"),
    (["-F", "-n", "5", "-c", "-W", "2"], "nearest in iolab: -c without -W"),
    (["-F", "-n", "5", "-c", "-k"], "nearest in iolab: -c without -k"),
    (["-F", "-n", "6", "-I", "3", "-c"], "nearest in iolab: -n 3 -I 3"),
])
def test_refused_lines_name_the_nearest_iolab_equivalent(words: list[str], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        args_of(words)


@pytest.mark.parametrize("letter,step", [("-C", "create"), ("-T", "stat"), ("-E", "read"),
                                         ("-r", "remove")])
def test_one_phase_letter_alone_is_one_engine_step(letter: str, step: str) -> None:
    """expected mdtest -F with one of -C/-T/-E/-r alone to run that file phase only
    (--md-only) / was refused ('the engine runs create, stat, read and remove together')."""
    got = args_of(["-F", "-n", "5", "-u", letter])
    assert got[got.index("--md-only") + 1] == step
    assert "--md-only" not in args_of(["-F", "-n", "5", "-C", "-T", "-E", "-r", "-U"])


@pytest.mark.parametrize("words,selected", [
    (["-F", "-I", "1", "-z", "1", "-C", "-T", "-r", "-L", "-u"], "create,stat,remove"),
    (["-I", "1", "-z", "1", "-u", "-T", "-C"], "create,stat"),  # mdtest's order, any kind
    (["-n", "5", "-C", "-T", "-E", "-r"], "create,stat,read,remove"),  # no -U: no rename
    (["-n", "5", "-U"], "rename"),
    (["-n", "5", "-i", "2", "-E"], "read"),
])
def test_phase_subsets_run_in_one_engine_run(words: list[str], selected: str) -> None:
    """expected any of -C -T -E -U -r, with or without -F, as one run of those phases
    (--md-only) / was refused ('the engine runs one phase alone or all four together')."""
    got = args_of(words)
    assert got[got.index("--md-only") + 1] == selected


def test_no_items_runs_the_tree_phases_only() -> None:
    """expected mdtest's line without -n or -I (IOR's 'mdtest -a POSIX') to run on 0 items,
    only the tree's calls, as mdtest / was refused ('no items to create')."""
    for words in (["-a", "POSIX"], ["-a", "POSIX", "-W", "2"], ["-z", "2", "-b", "2",
                                                               "-n", "2"]):
        got = args_of(words)
        assert got[got.index("--md-files") + 1] == "0", words


def test_task_count_series_is_one_test_per_count() -> None:
    """expected mdtest -f/-l/-s as its series of task counts / was refused ('the engine
    runs one test on the launched ranks')."""
    def counts(words: list[str], ranks: int) -> tuple[int, ...]:
        return plan(parse_command_line(words).test, ranks).task_counts
    assert counts(["-n", "1", "-f", "1", "-l", "2"], 2) == (1, 2)
    assert counts(["-n", "1", "-f", "1", "-l", "4", "-s", "2"], 4) == (1, 3)
    assert counts(["-n", "1", "-f", "2", "-l", "2"], 2) == ()  # the launched ranks alone


def test_summary_stddev_divides_by_n_minus_1_as_mdtest() -> None:
    """expected mdtest's standard deviation over iterations (divisor N-1, 0 for one) / was
    IOR's N (what iolab ior prints)."""
    assert sample_stats([1.0, 3.0]) == (3.0, 1.0, 2.0, pytest.approx(2 ** 0.5))
    assert sample_stats([5.0]) == (5.0, 5.0, 5.0, 0.0)


def test_status_file_count_becomes_n_of_a_later_phase(tmp_path: Path) -> None:
    """expected -x FILE's number as the items of a -T line alone (0 refused, a tree refused)
    / was refused ('the engine runs every phase in one run')."""
    status = tmp_path / "sw"
    status.write_text("7")
    got = args_of(["-F", "-n", "100", "-x", str(status), "-T"])
    assert got[got.index("--md-files") + 1] == "7"
    got = args_of(["-F", "-n", "100", "-x", str(status), "-C"])  # the creation writes it
    assert got[got.index("--md-files") + 1] == "100"
    status.write_text("0")
    with pytest.raises(UsageError, match="holds 0 items"):
        args_of(["-F", "-n", "100", "-x", str(status), "-T"])
    with pytest.raises(UsageError, match="-x without -z"):
        args_of(["-F", "-z", "1", "-I", "2", "-x", str(status), "-T"])
