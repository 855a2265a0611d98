"""IOR 4's command language read as IOR reads it: grouping, values, -O, -f scripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iolab.errors import UsageError
from iolab.ior.mapping import engine_args, ior_hints
from iolab.ior.parse import parse_command_line

# id, IOR words, expected parameters (IOR's names), as IOR 4.1 sets them (checked against a
# real IOR's JSON "Parameters" for the quirky ones: -t64k gives keepFile 64, -b1m multiFile 1)
CASES: list[tuple[str, list[str], dict[str, Any]]] = [
    ("defaults", [], {"transferSize": 262144, "blockSize": 1048576, "segmentCount": 1,
                      "api": "POSIX", "filePerProc": 0, "writeFile": 1, "readFile": 1,
                      "testFileName": "testFile", "repetitions": 1}),
    ("z-k grouped with a dash", ["-z-k"], {"randomOffset": 1, "keepFile": 1}),
    ("vvv counts", ["-vvv"], {"verbose": 3}),
    ("z twice", ["-z", "-z"], {"randomOffset": 2}),
    ("value glued", ["-t64k"], {"transferSize": 65536, "keepFile": 64}),
    ("value glued sets -m like IOR", ["-b1m"], {"blockSize": 1 << 20, "multiFile": 1}),
    ("value after =", ["-t=64k"], {"transferSize": 65536, "keepFile": 0}),
    ("flags then a value letter", ["-Fet", "4k"], {"filePerProc": 1, "fsync": 1,
                                                    "transferSize": 4096}),
    ("write only", ["-w"], {"writeFile": 1, "readFile": 0}),
    ("checkRead alone reads", ["-R"], {"checkRead": 1, "writeFile": 0, "readFile": 0}),
    ("directives", ["-O", "summaryFormat=JSON,stoneWallingWearOut=1", "-D", "2"],
     {"summaryFormat": "JSON", "stoneWallingWearOut": 1, "deadlineForStonewalling": 2}),
    ("directive case and module key", ["-O", "TRANSFERSIZE=8k,--posix.odirect=1"],
     {"transferSize": 8192, "posix.odirect": 1}),
    ("long module option", ["--posix.odirect", "--mpiio.hintsFileName=h"],
     {"posix.odirect": 1, "mpiio.hintsFileName": "h"}),
    ("long core option", ["--collective", "--random-offset-seed", "7"],
     {"collective": 1, "randomSeed": 7}),
]


@pytest.mark.parametrize("words,expected", [(w, e) for _, w, e in CASES],
                         ids=[c[0] for c in CASES])
def test_ior_words_set_iors_parameters(words: list[str], expected: dict[str, Any]) -> None:
    params = parse_command_line(words).tests[0].params
    assert {k: params[k] for k in expected} == expected


@pytest.mark.parametrize("words,says", [
    (["-t", "abc"], "not a number"),
    (["-t", "1.5"], "IOR takes whole numbers only and reads this as 1; give 1"),
    (["--posix.nosuch"], "not an IOR 4 option"),
    (["-O", "nosuch=1"], "not an IOR 4 parameter"),
    (["-O", "transferSize"], "key=value"),
    (["somefile"], "options only"),
    (["-t"], "needs a value"),
])
def test_bad_ior_words_are_one_line(words: list[str], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_command_line(words)


def test_script_runs_a_test_per_run_line_each_from_the_last(tmp_path: Path) -> None:
    """IOR START / RUN / IOR STOP: RUN twice repeats, parameters carry over, lines after
    the last RUN make a test (as IOR's ReadConfigScript)."""
    script = tmp_path / "s.ior"
    script.write_text("ignored=1\nIOR START\n  # a comment\n  transferSize=64k\n"
                      "  blockSize=128k  # inline\nRUN\n  filePerProc=1, segmentCount=2\n"
                      "RUN\nRUN\n  api=MPIIO\nIOR STOP\nsegmentCount=9\n")
    tests = parse_command_line(["-f", str(script), "-i", "3"]).tests
    got = [(t.params["transferSize"], t.params["filePerProc"], t.params["segmentCount"],
            t.params["api"], t.params["repetitions"]) for t in tests]
    assert got == [(65536, 0, 1, "POSIX", 3), (65536, 1, 2, "POSIX", 3),
                   (65536, 1, 2, "POSIX", 3), (65536, 1, 2, "MPIIO", 3)]


def test_script_without_ior_start_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "s.ior"
    script.write_text("transferSize=64k\nRUN\n")
    with pytest.raises(UsageError, match="IOR START"):
        parse_command_line(["-f", str(script)])


def args_of(words: list[str], ranks: int = 2, nodes: int | None = None) -> list[str]:
    return engine_args(parse_command_line(words).tests[0], ranks, nodes, environ={})


def test_ior_defaults_become_engine_options() -> None:
    """expected IOR's -t 256k -b 1m -s 1 on one shared file / was bench's fpp 1m/4m."""
    a = args_of([])
    assert a[:12] == ["--api", "posix", "--layout", "segmented", "--transfer", "262144",
                      "--block", "1048576", "--segments", "1", "--reps", "1"]
    assert "--write" in a and "--read" in a


@pytest.mark.parametrize("words,present,absent", [
    (["-F", "-z", "-e", "-Y", "-c", "-k"], ["fpp", "--random", "--fsync",
                                              "--fsync-per-write", "--collective", "--keep"], []),
    (["-C"], ["--reorder", "--reorder-nodes", "1"], []),  # the engine's shift: IOR's
    (["-F", "-Z", "-Z", "-X", "-3"], ["--reorder-random", "2", "--reorder-seed", "-3"], []),
    (["-D", "3", "-O", "stoneWallingWearOut=1"], ["--stonewall", "3"], ["--stonewall-stop"]),
    (["-D", "3"], ["--stonewall", "3", "--stonewall-stop"], []),
    (["-a", "DUMMY", "--dummy.delay-xfer=5"], ["null", "--null.delay-us", "5"], []),
    (["-a", "MPIIO", "--posix.odirect"], ["mpiio"], ["--posix.mode"]),
    (["--posix.odirect"], ["--posix.mode", "direct"], []),
    (["-a", "HDF5", "--hdf5.setAlignment=4k", "--hdf5.collectiveMetadata"],
     ["hdf5", "--hdf5.align", "4096", "--hdf5.coll-metadata"], []),
    (["-a", "HDF5", "-s", "3"], ["hdf5", "--hdf5.segment-datasets", "--segments", "3"], []),
    (["-w", "-r", "-R"], ["--verify"], []),
    (["-r", "-z", "-z", "-t", "4k", "-b", "4k"], ["--random-repeat"], ["--random"]),
    (["-z", "--random-offset-seed=7", "--randomPrefill=64k"],
     ["--random", "--random-seed", "7", "--random-prefill", "65536"], ["--random-repeat"]),
    (["-F"], ["--fpp-digits", "8"], []),
    ([], ["--remove-each-rep"], ["--fpp-digits", "--random-seed", "--use-existing"]),
    (["-E", "-m", "-g", "-x"], ["--use-existing", "--file-per-rep", "--step-barriers"], []),
    (["-d", "2", "-T", "3"], ["--phase-delay", "2", "--max-time", "180"], []),
    (["-w", "-W"], ["--check-write", "--verify"], ["--read"]),
])
def test_ior_options_become_engine_options(words: list[str], present: list[str],
                                           absent: list[str]) -> None:
    a = args_of(words)
    assert all(p in a for p in present), a
    assert not any(p in a for p in absent), a


def test_reorder_across_nodes_shifts_to_another_node() -> None:
    a = args_of(["-C", "-Q", "2"], ranks=4, nodes=2)
    assert "--reorder" in a and a[a.index("--reorder-nodes") + 1] == "2"


@pytest.mark.parametrize("words,says", [
    (["-z", "-z"], "division by zero; nearest in iolab: -w -z"),
    (["-z", "-t", "4k", "-b", "4k"], "multiple of -t above it"),
    (["--randomPrefill=4k"], "add -z"),
    (["-z", "-C"], "add -F or drop one"),
    (["-z", "--randomPrefill=4k", "-D", "2"], "inside the deadline"),
    (["-a", "DAOS"], "DFuse"),
    (["-a", "MMAP"], "-a POSIX"),
    (["-a", "NOPE"], "not an IOR 4 API"),
    (["-N", "3"], "--np 3"),
    (["-Z", "-C"], "choose one"),
    (["-b", "100k", "-t", "64k"], "multiple of the transfer"),
    (["-a", "HDF5", "-z"], "nearest in iolab: -a MPIIO"),
    (["--mpiio.useFileView"], "--file-view"),
])
def test_refused_options_name_the_nearest_iolab_equivalent(words: list[str],
                                                           says: str) -> None:
    with pytest.raises(UsageError, match=says):
        args_of(words)


def test_ior_hints_from_the_environment_and_the_hints_file(tmp_path: Path) -> None:
    """expected IOR_HINT__MPI__key=value lines applied as hints / was the whole line taken
    as one hint key (exit 0, hint never applied)."""
    hints = tmp_path / "hints"
    hints.write_text("IOR_HINT__MPI__romio_cb_write=enable\n# other\n"
                     "IOR_HINT__MPI__cb_nodes=2\n")
    test = parse_command_line(["-a", "MPIIO", f"--mpiio.hintsFileName={hints}"]).tests[0]
    got = ior_hints(test, "mpiio", {"IOR_HINT__MPI__striping_factor": "4", "PATH": "/bin"})
    assert got == ["striping_factor=4", "romio_cb_write=enable", "cb_nodes=2"]
    a = engine_args(test, 2, None, environ={"IOR_HINT__MPI__striping_factor": "4"})
    assert a.count("--hint") == 3


def test_gpfs_hints_are_refused_in_one_line() -> None:
    test = parse_command_line(["-a", "MPIIO"]).tests[0]
    with pytest.raises(UsageError, match="only IOR_HINT__MPI__"):
        ior_hints(test, "mpiio", {"IOR_HINT__GPFS__x": "1"})


@pytest.mark.parametrize("text,seconds", [("0.1", 0), ("1.9", 1), ("2", 2)])
def test_delay_with_a_fraction_is_read_as_ior_reads_it(text: str, seconds: int) -> None:
    """expected -d 0.1 (IOR's own test line) read as IOR reads it, the whole seconds (0.1:
    0 s, 1.9: 1 s, real IOR's JSON interTestDelay), with a note / was refused."""
    for words in (["-d", text], ["-O", f"interTestDelay={text}"]):
        test = parse_command_line(words).tests[0]
        assert test.params["interTestDelay"] == seconds
        assert bool(test.notes) == ("." in text), test.notes
        assert all(f"whole seconds, {seconds} s" in n for n in test.notes)
