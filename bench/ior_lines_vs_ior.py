#!/usr/bin/env python3
"""`iolab ior` / `iolab mdtest` against real IOR / mdtest (built from hpc/ior outside the
repository: --ior/$IOLAB_IOR, --mdtest/$IOLAB_MDTEST) on every IOR test-script line that runs
here: IOR's own testing/basic-tests.sh and complex-tests.sh lines (their IOR and MDTEST
lines, verbatim, with their rank counts and IOR_TMP as the folder, as testing/test-lib.sh
runs them), the lines tests/ior compares files on, and a set of mdtest lines with items
enough to time.

Each line runs with both tools on the same ranks (mpirun --oversubscribe) and folder layout,
interleaved: inside a round every line runs with one tool then the other, the order swapping
every round. Each tool keeps its own folder for the round, so that a script's read line reads
what that tool's previous line wrote (as in the scripts). Per line and phase: IOR's "Summary
of all tests" Mean(MiB) (write, read) or mdtest's SUMMARY rate Mean (per operation); ratio =
iolab median / IOR median with its 95% bootstrap interval over paired rounds (benchtools) and
the guide's verdict: same within noise (interval includes 1), faster, slower.

    bench/ior_lines_vs_ior.py [--rounds 10] [--lines SUBSTRING]... [--publish]

A line either tool cannot run is listed under the table with the first line of its error
(a read line whose writer was filtered out fails for both tools: select both).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# bench/ is on sys.path when a script runs: its shared helpers
from benchtools import (
    CI_NOTE,
    RATIO_HEADER,
    ROOT,
    PerRound,
    announce,
    find_tool,
    fmt,
    machine,
    mpirun,
    publish,
    ratio_cells,
    run,
    values,
)

# hpc/ior testing/basic-tests.sh then complex-tests.sh, their IOR and MDTEST lines verbatim
# (MDWB lines are md-workbench's, which iolab does not run). Both tools get what test-lib.sh
# appends: `-o $IOR_TMP/ior` (IOR), `-d $IOR_TMP/mdest` after an rm -rf of it (mdtest).
IOR_SCRIPTS = """
basic-tests.sh: MDTEST 1 -a POSIX
basic-tests.sh: MDTEST 2 -a POSIX -W 2
basic-tests.sh: MDTEST 1 -C -T -r -F -I 1 -z 1 -b 1 -L -u
basic-tests.sh: MDTEST 1 -C -T -I 1 -z 1 -b 1 -u
basic-tests.sh: MDTEST 2 -n 1 -f 1 -l 2
basic-tests.sh: IOR 1 -a POSIX -w    -z                  -F -Y -e -i1 -m -t 100k -b 2000k
basic-tests.sh: IOR 1 -a POSIX -w    -z                  -F -k -e -i2 -m -t 100k -b 200k
basic-tests.sh: IOR 1 -a MMAP -r    -z                  -F -k -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 2 -a POSIX -w     -C              -k -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 2 -a POSIX -r                     -k -e -i1 -m -t 100k -b 200k -s 10 -z -z
basic-tests.sh: IOR 2 -a POSIX -w    -z  -C             -F -k -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 2 -a POSIX -w    -z  -C -Q 1        -F -k -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 2 -a POSIX -r    -z  -Z -Q 2        -F -k -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 2 -a POSIX -r    -z  -Z -Q 3 -X  13 -F -k -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 3 -a POSIX -w    -z  -Z -Q 1 -X -13 -F    -e -i1 -m -t 100k -b 200k
basic-tests.sh: IOR 2 -f $ROOT/test_comments.ior
basic-tests.sh: IOR 2 -a DUMMY -e -F -t 1m -b 1m -A 328883 -O summaryFormat=JSON -O summaryFile=OUT.json
complex-tests.sh: IOR 2 -a DUMMY -w -O stoneWallingStatusFile=stonewall.log -O stoneWallingWearOut=1 -D 1 -t 1000 -b 1000 -s 15 -k
complex-tests.sh: IOR 2 -a DUMMY -r -O stoneWallingStatusFile=stonewall.log -D 1 -t 1000 -b 1000 -s 30 -k
complex-tests.sh: IOR 2 -a DUMMY -r -O stoneWallingStatusFile=stonewall.log -t 1000 -b 1000 -s 30 -k
complex-tests.sh: MDTEST 2 -I 20 -a DUMMY -W 1 -x stonewall-md.log -C
complex-tests.sh: MDTEST 2 -I 20 -a DUMMY -x stonewall-md.log -T -v
complex-tests.sh: MDTEST 2 -I 20 -a DUMMY -x stonewall-md.log -D -v
complex-tests.sh: IOR 2 -a POSIX -w -z -Y -e -i1 -m -t 100k -b 200k
complex-tests.sh: IOR 2 -a POSIX -w -k -e -i1 -m -t 100k -b 200k
complex-tests.sh: IOR 2 -a POSIX -r -z-k -e -i1 -m -t 100k -b 200k
complex-tests.sh: IOR 2 -a POSIX -w -z -k -e -i1 -m -t 100k -b 200k
complex-tests.sh: IOR 2 -a POSIX -w -Z -i1 -m -t 100k -b 100k -d 0.1
complex-tests.sh: IOR_FAKE_TASK_PER_NODES=1 IOR 2 -a POSIX -f $ROOT/bug-multi-node.conf
"""  # noqa: E501 (the scripts' lines verbatim)
# The two script files those lines name ($ROOT/...), verbatim from hpc/ior testing/
SCRIPT_FILES = {
    "test_comments.ior": "# test to ensure that leading whitespace is ignored\nIOR START\n"
    "api=posix\nwriteFile =1\n   randomOffset=1\nreorderTasks=1\n   filePerProc=1\n"
    "\t\tkeepFile=1\nfsync=1\n\trepetitions=1\nmultiFile=1\n\t\t# tab-prefixed comment\n"
    "transferSize=10k\nblockSize=20k\n    # space-prefixed comment\nrun\n"
    "--dummy.delay-create=1000\nuseo_direct=0\n#--posix.odirect=0\napi=dummy\n    ior stop\n",
    "bug-multi-node.conf": "IOR START\nreorderTasksConstant=1\nrepetitions=1\n"
    "segmentCount=1\nverbose=0\nfsync=0\ncheckWrite=1\nblockSize=16\n"
    "setTimeStampSignature=1511817315\ncheckRead=0\nreadFile=1\nfilePerProc=0\nwriteFile=1\n"
    "transferSize=16\nintraTestBarriers=0\n\nRUN\nIOR STOP\n",
}
# mdtest lines with items enough that each phase takes measurable time (the scripts' own
# mdtest lines create 0 to 20 items)
MDTEST_LINES = [
    ["-F", "-n", "500"],
    ["-n", "200", "-i", "2"],
    ["-D", "-u", "-n", "300"],
    ["-F", "-u", "-w", "4096", "-e", "4096", "-n", "200"],
    ["-z", "2", "-b", "3", "-I", "20"],
]
TESTS_IOR = ROOT / "tests" / "ior" / "test_ior_against_real_ior.py"


@dataclass(frozen=True)
class Line:
    tool: str                # "ior" or "mdtest"
    ranks: int
    words: tuple[str, ...]
    source: str              # where the line comes from
    env: tuple[tuple[str, str], ...] = field(default=())

    @property
    def label(self) -> str:
        prefix = "".join(f"{k}={v} " for k, v in self.env)
        return f"{prefix}{self.tool} -np {self.ranks} {' '.join(self.words)}"


def script_lines(text: str = IOR_SCRIPTS) -> list[Line]:
    """IOR_SCRIPTS as Lines (leading VAR=value words become the line's environment)."""
    out = []
    for raw in filter(None, map(str.strip, text.splitlines())):
        source, rest = raw.split(": ", 1)
        words = rest.split()
        env = []
        while "=" in words[0]:
            k, v = words.pop(0).split("=", 1)
            env.append((k, v))
        tool = {"IOR": "ior", "MDTEST": "mdtest"}[words[0]]
        out.append(Line(tool, int(words[1]), tuple(words[2:]), source, tuple(env)))
    return out


def tests_ior_lines(path: Path = TESTS_IOR) -> list[Line]:
    """The LINES tests/ior compares files on, read from that test file's source (not
    imported: it needs pytest and the tests' helpers), so the list is kept in one place."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "LINES" for t in node.targets):
            return [Line("ior", 2, tuple(w), "tests/ior") for w in ast.literal_eval(node.value)]
    raise SystemExit(f"ior_lines_vs_ior.py: no LINES list in {path}")


def all_lines() -> list[Line]:
    return [*script_lines(), *tests_ior_lines(),
            *(Line("mdtest", 2, tuple(w), "mdtest set") for w in MDTEST_LINES)]


# IOR's "Summary of all tests" table: a header row naming the columns, then one row per
# operation until a blank line
IOR_SUMMARY = "Summary of all tests:"


def ior_phases(stdout: str, folder: Path) -> dict[str, float]:
    """Mean(MiB) (MiB/s) per operation of an IOR report: its text summary table, else its
    JSON summary (-O summaryFormat=JSON, on stdout or in -O summaryFile, relative to folder).
    Several tests in one run (a -f script) are numbered: "write #1"."""
    lines = stdout.splitlines()
    if IOR_SUMMARY in lines:
        # Another rank's lines (a warning naming its file) can land inside rank 0's table on
        # the shared stdout: the header is the line naming the column, a row one whose value
        # reads as a number; anything else there is skipped.
        i = lines.index(IOR_SUMMARY)
        at = next((j for j in range(i + 1, len(lines)) if "Mean(MiB)" in lines[j].split()),
                  None)
        if at is None:
            return {}
        col = lines[at].split().index("Mean(MiB)")
        rows = [ln.split() for ln in lines[at + 1:] if ln.strip()]
        rows = rows[:next((j for j, r in enumerate(rows) if r[0] == "Finished"), len(rows))]
        return numbered([(r[0], float(r[col])) for r in rows
                         if len(r) > col and _is_number(r[col])])
    for text in (stdout, *(p.read_text() for p in sorted(folder.glob("*.json")))):
        doc = ior_json(text)
        if isinstance(doc, dict) and doc.get("summary"):
            return numbered([(s["operation"], float(s["bwMeanMIB"])) for s in doc["summary"]])
    return {}


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


# IOR prints a phase timed 0 s (a DUMMY phase faster than the timer) with printf: "inf" in
# quotes (float() reads it) but its N-divisor StdDev as a bare -nan, which is not JSON
IOR_BARE_NAN = re.compile(r"(?<=: )-?nan\b")


def ior_json(text: str) -> object:
    """The JSON document from its first "{" on (IOR's, with its bare nan read as NaN), or None
    when there is none."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        return json.loads(IOR_BARE_NAN.sub("NaN", text[start:]))
    except json.JSONDecodeError:
        return None


def numbered(pairs: list[tuple[str, float]]) -> dict[str, float]:
    """{operation: value}; an operation met again (the next test of a script) gets #2, #3."""
    out: dict[str, float] = {}
    for op, v in pairs:
        key, n = op, 1
        while key in out:
            n += 1
            key = f"{op} #{n}"
        out[key] = v
    return out


def mdtest_phases(stdout: str) -> dict[str, float]:
    """Mean (ops/s) per operation of mdtest's first "SUMMARY rate" table (a header, a dashes
    line, then "   Operation   max min mean sd" rows); phases that did not run (mean 0) left
    out."""
    lines = stdout.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("SUMMARY rate")), None)
    if start is None:
        return {}
    out = {}
    for ln in lines[start + 3:]:
        words = ln.split()
        if not ln.startswith("   ") or len(words) < 5:
            break
        if float(words[-2]) > 0:
            out[" ".join(words[:-4])] = float(words[-2])
    return out


def command(impl: str, line: Line, o: argparse.Namespace, folder: Path) -> list[str]:
    """The command of one line by one implementation ("real" or "iolab"), as test-lib.sh
    builds it ($ROOT: folder, where SCRIPT_FILES are)."""
    words = [w.replace("$ROOT", str(folder)) for w in line.words]
    target = ["-o", str(folder / "ior")] if line.tool == "ior" else ["-d", str(folder / "mdest")]
    if impl == "real":
        return [*mpirun(line.ranks), o.ior if line.tool == "ior" else o.mdtest, *words, *target]
    return [sys.executable, "-m", "iolab", line.tool, "--np", str(line.ranks), "--db",
            str(folder / "runs.db"), *words, *target]


def one_run(impl: str, line: Line, o: argparse.Namespace, folder: Path
            ) -> tuple[dict[str, float], str]:
    """One line by one implementation in folder: ({phase: value}, "") or ({}, why not)."""
    shutil.rmtree(folder / "mdest", ignore_errors=True)
    for p in folder.glob("*.json"):
        p.unlink()
    extra: dict[str, str | None] = {"PYTHONPATH": str(ROOT / "src"), **dict(line.env)}
    p = run(command(impl, line, o, folder), timeout=600, extra_env=extra, cwd=folder)
    read = (ior_phases(p.stdout, folder) if line.tool == "ior" else mdtest_phases(p.stdout))
    # a phase timed 0 s has no rate to compare (IOR: inf MiB/s): left out of this round
    got = {k: v for k, v in read.items() if math.isfinite(v)}
    if p.returncode == 0 and got:
        return got, ""
    # iolab's refusals are its last stderr line; IOR's and mdtest's errors say ERROR
    said = [ln.strip() for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
    why = next((ln for ln in said if "ERROR" in ln), said[-1] if said else "")
    if p.returncode == 0:
        why = ("in a round every phase timed 0 s (IOR: inf MiB/s), that round left out"
               if read else "no summary table")
    return {}, f"exit {p.returncode}: {why}"[:200]


def table(theirs: PerRound, ours: PerRound, failed: dict[str, str],
          o: argparse.Namespace, wall: float) -> str:
    keys = list(dict.fromkeys(k for r in [*theirs, *ours] if r for k in r))
    rows = []
    for k in keys:
        label, phase = k.split(" :: ")
        rows.append(f"| `{label}` | {phase} | {fmt(values(theirs, k))} | "
                    f"{fmt(values(ours, k))} | {ratio_cells(ours, theirs, k)} |")
    not_run = [f"- `{label}`: {why}" for label, why in failed.items()]
    flt = "".join(f" --lines '{s}'" for s in o.lines)
    return "\n".join([
        "Measured with (IOR and mdtest built from hpc/ior outside the repository):",
        "",
        f"    bench/ior_lines_vs_ior.py --rounds {o.rounds}{flt}",
        "",
        machine(),
        f"{o.rounds} rounds, each line by both tools in turn (the order swapped every round); "
        f"{wall / 60:.1f} min.",
        "",
        f"| line | phase | IOR/mdtest median [min–max] | iolab median [min–max] | "
        f"{RATIO_HEADER} |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        CI_NOTE + ". MiB/s (IOR's Mean(MiB)) for ior lines, ops/s (mdtest's SUMMARY rate "
        "Mean) for mdtest lines.",
        *(["", "Lines that did not run with one of the tools (the tool, then why):", "",
           *not_run] if not_run else []),
    ])


def one_round(lines: list[Line], o: argparse.Namespace, scratch: Path, i: int
              ) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Every line with both tools, in script order; each tool in its own folder."""
    order = ("real", "iolab") if i % 2 == 0 else ("iolab", "real")
    got: dict[str, dict[str, float]] = {"real": {}, "iolab": {}}
    failed = {}
    folders = {impl: scratch / impl for impl in order}
    for f in folders.values():
        shutil.rmtree(f, ignore_errors=True)
        f.mkdir(parents=True)
        for name, text in SCRIPT_FILES.items():
            (f / name).write_text(text)
    for line in lines:
        for impl in order:
            phases, why = one_run(impl, line, o, folders[impl])
            got[impl].update({f"{line.label} :: {k}": v for k, v in phases.items()})
            if why:
                failed[line.label] = f"{'IOR/mdtest' if impl == 'real' else 'iolab'} {why}"
    for f in folders.values():
        shutil.rmtree(f, ignore_errors=True)
    return got["real"], got["iolab"], failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ior", help="real IOR 4 (default $IOLAB_IOR, else ior on PATH)")
    ap.add_argument("--mdtest", help="real mdtest (default $IOLAB_MDTEST, else on PATH)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--lines", action="append", default=[], metavar="SUBSTRING",
                    help="only the lines whose label contains SUBSTRING (repeatable)")
    ap.add_argument("--dir", type=Path, help="scratch folder (default: a new one in $TMPDIR)")
    ap.add_argument("--publish", action="store_true",
                    help="write the table into docs/benchmarks.md (idle machine only)")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    o = ap.parse_args()
    o.ior = find_tool(o.ior, "IOLAB_IOR", "ior")
    o.mdtest = find_tool(o.mdtest, "IOLAB_MDTEST", "mdtest")
    if not o.ior or not o.mdtest:
        print("ior_lines_vs_ior.py: no real IOR or mdtest: give --ior/--mdtest or set "
              "$IOLAB_IOR/$IOLAB_MDTEST (build hpc/ior outside the repository)",
              file=sys.stderr)
        return 2
    lines = [ln for ln in all_lines() if not o.lines or any(s in ln.label for s in o.lines)]
    if not lines:
        print(f"ior_lines_vs_ior.py: no line matches --lines {o.lines}; the labels look like "
              f"'{all_lines()[0].label}'", file=sys.stderr)
        return 2
    scratch = o.dir or Path(tempfile.mkdtemp(prefix="ior_lines_vs_ior."))
    announce(o.rounds * len(lines) * 4, {"ior": o.ior, "mdtest": o.mdtest})
    theirs: PerRound = []
    ours: PerRound = []
    failed: dict[str, str] = {}
    start = time.monotonic()
    for i in range(o.rounds):
        real, iolab, why = one_round(lines, o, scratch, i)
        theirs.append(real)
        ours.append(iolab)
        failed.update(why)
        print(f"round {i + 1}/{o.rounds}: {len(real)} IOR/mdtest phases, {len(iolab)} iolab "
              f"phases, {len(why)} lines not run", file=sys.stderr)
    if not o.dir:  # a folder the user named keeps everything but the runs' own folders
        shutil.rmtree(scratch, ignore_errors=True)
    body = table(theirs, ours, failed, o, time.monotonic() - start)
    if not o.publish:
        print(body)
        return 0 if any(ours) and any(theirs) else 1
    return publish(o.output, "ior_lines_vs_ior", "IOR's test-script lines: iolab ior / "
                   "iolab mdtest against real IOR / mdtest", body, any(ours))


if __name__ == "__main__":
    sys.exit(main())
