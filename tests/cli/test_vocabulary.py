"""One vocabulary across verbs, walked for real.

Expected: docs/cli.md's table says which verb has which shared flag, and every verb's
``--help`` agrees; an unknown option prints the verb's own one-line usage; ``--mpi`` offers
the same choices everywhere; ``profile show --help`` is answered; ``iolab <verb>`` imports
no other verb's module. Was: ``--mpi`` {default,mpich} in bench but {default,openmpi,mpich}
in profile; ``-q``/``-v`` in some verbs only; an unknown option printed the top-level usage;
``profile show --help`` said "no such profile file"; the CLI imported every verb.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, iolab

from iolab import cli_common, launch
from iolab.cli import VERBS

DOC = REPO / "docs" / "cli.md"


def vocabulary() -> dict[str, dict[str, bool]]:
    """flag -> verb -> has it, from docs/cli.md's table."""
    lines = DOC.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| flag | meaning"))
    verbs = [c.strip() for c in lines[start].strip("|").split("|")][2:]
    table: dict[str, dict[str, bool]] = {}
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        cells = [c.strip() for c in ln.strip("|").split("|")]
        flag = re.findall(r"`(-[-\w]+)`", cells[0])[-1]  # the long spelling
        table[flag] = {v: c != "-" for v, c in zip(verbs, cells[2:])}
    return table


def test_the_table_names_every_verb() -> None:
    table = vocabulary()
    assert set(table) >= {"--output", "--json", "--csv", "--quiet", "--verbose", "--mpi",
                          "--config", "--db"}
    for row in table.values():
        assert set(row) == set(VERBS)


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    out = {}
    for verb in VERBS:
        r = iolab(verb, "--help")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"usage: iolab {verb}"), r.stdout[:200]
        out[verb] = r.stdout
    return out


@pytest.mark.parametrize("verb", list(VERBS))
def test_help_agrees_with_the_table(helps: dict[str, str], verb: str) -> None:
    for flag, has in vocabulary().items():
        spelled = "-o" if flag == "--output" and verb == "bench" else flag  # IOR's -o
        present = re.search(rf"(^|[\s,\[]){re.escape(spelled)}\b", helps[verb], re.M)
        assert bool(present) == has[verb], f"iolab {verb} {flag}: table says {has[verb]}"


@pytest.mark.parametrize("verb", list(VERBS))
def test_unknown_option_is_the_verbs_own_one_line(verb: str) -> None:
    r = iolab(verb, "--no-such-option")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"iolab {verb}: ") and f"'iolab {verb} --help'" in lines[0]


def test_mpi_choices_are_the_same_everywhere(helps: dict[str, str]) -> None:
    assert cli_common.MPI_CHOICES == launch.MPI_FLAVOURS
    for verb, has in vocabulary()["--mpi"].items():
        if has:
            assert "{default,openmpi,mpich}" in helps[verb], verb


def test_every_option_with_choices_lists_them(helps: dict[str, str]) -> None:
    # bench's engine options with a fixed set of values, diagnose's --color
    for name in ("--layout", "--posix.mode", "--group-files"):
        block = helps["bench"].split(name, 1)[1][:400]
        assert "choices:" in block, name
    assert "list-options" not in helps["bench"]  # an engine flag iolab bench rejects
    assert "{auto,always,never}" in helps["diagnose"] and "colour" in helps["diagnose"]


def test_profile_show_help() -> None:
    r = iolab("profile", "show", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: iolab profile show"), r.stderr
    r = iolab("profile", "show")
    assert r.returncode == 2 and "iolab profile show" in r.stderr


@pytest.mark.parametrize("verb", list(VERBS))
def test_only_the_running_verb_is_imported(verb: str) -> None:
    code = ("import sys\nfrom iolab.cli import main\n"
            f"main([{verb!r}, '--no-such-option'])\n"
            "print(' '.join(m for m in sys.modules if m.endswith('.cli')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    loaded = set(r.stdout.split())
    assert loaded == {"iolab.cli", VERBS[verb][0]}, loaded


def test_top_level_help_lists_every_verb_without_importing_them() -> None:
    r = iolab("--help")
    assert r.returncode == 0
    for verb in VERBS:
        assert verb in r.stdout


def test_closed_pipe_is_not_the_fail_on_code(tmp_path: Path) -> None:
    """Expected: exit 0 when the reader is gone; was: the --fail-on code (1) and a message."""
    import corpus

    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    if not corpus.GENERATED_LOGS:
        pytest.skip(corpus.GENERATED_MISSING)
    # a log with a HIGH finding (which one depends on the rules' thresholds)
    log = next((p for p in corpus.GENERATED_LOGS
                if iolab("diagnose", "--fail-on", "high", str(p)).returncode == 1), None)
    if log is None:
        pytest.skip("no generated log has a HIGH finding")
    proc = subprocess.Popen([sys.executable, "-m", "iolab", "diagnose", "--fail-on", "high",
                             str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and "Traceback" not in err and "Exception" not in err


VALUES = {"--output": ["x.out"], "--mpi": ["mpich"], "--config": ["c.toml"], "--db": ["r.db"]}
NEEDS = {"hints": ["."], "compare": ["run:1", "run:2"], "report": ["run", "1"]}  # positionals


@pytest.mark.parametrize("verb", list(VERBS))
def test_each_shared_flag_parses_to_one_meaning(verb: str) -> None:
    """Every shared flag a verb has is accepted with the same value shape everywhere."""
    from iolab.cli import build_parser

    parser = build_parser(only=verb)
    for flag, has in vocabulary().items():
        if not has[verb]:
            continue
        spelled = "-o" if flag == "--output" and verb == "bench" else flag
        argv = [verb, *NEEDS.get(verb, []), spelled, *VALUES.get(flag, [])]
        args, rest = parser.parse_known_args(argv)
        assert rest == [], (verb, flag, rest)
        if flag == "--json":
            assert args.format == "json"
        elif flag == "--csv":
            assert args.format == "csv"
        elif flag in ("--quiet", "--verbose"):
            assert getattr(args, flag[2:]) is True
        elif flag == "--mpi":
            assert args.mpi == "mpich"
    if vocabulary()["--quiet"][verb] and vocabulary()["--verbose"][verb]:
        with pytest.raises(SystemExit):  # -q and -v together: one says less, one more
            parser.parse_args([verb, *NEEDS.get(verb, []), "-q", "-v"])
