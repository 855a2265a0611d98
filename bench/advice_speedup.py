#!/usr/bin/env python3
"""Does diagnose's advice make real programs faster? For each real program of issue 32's
four shapes (tests/tune/progs: h5_slab.c writing a contiguous 1-D HDF5 dataset, the same
writing a strided hyperslab, its strided read, all with independent transfers; the Fortran
PnetCDF non-blocking checkpoint pnc_checkpoint.f90), under Open MPI (OMPIO) and MPICH
(ROMIO) where the libraries exist:

1. ``iolab profile`` the program, diagnose the profile;
2. the top predicted fix (diagnose's costliest finding's first setting) applied as the fix
   says: ROMIO hints in a file named by ROMIO_HINTS (with ``OMPI_MCA_io=^ompio`` beside it
   under Open MPI, as diagnose's .env file pairs them), OMPIO parameters as OMPI_MCA_*, and
   the code changes the program offers as options (collective transfers: --collective;
   collective metadata: --coll-metadata);
3. the unchanged and the fixed program interleaved (the order turned each round), scored by
   the program's own MiB/s line: ratio of medians (fixed / unchanged, above 1 is faster)
   with its 95% interval (benchtools.ratio_cells);
4. the proof step's verdict for the same fix (``iolab tune --from-log LOG -- COMMAND``), or
   why it stays a prediction.

    bench/advice_speedup.py                       # full size, writes docs/benchmarks.md
    bench/advice_speedup.py --tiny --output /tmp/b.md   # a smoke run

Run it on an idle machine: a shared one measures its neighbours.
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchtools as bt  # bench/ is on sys.path when a script runs

PROGS = bt.ROOT / "tests" / "tune" / "progs"
SECTION = "advice_speedup"
TITLE = "Diagnose's top fix on real programs: measured speed-up and the proof's verdict " \
        "(`bench/advice_speedup.py`)"
METRIC = r"([0-9.]+) MiB/s"
MPIS = {"openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe", "-q"]),
        "mpich": ("mpicc.mpich", ["mpirun.mpich"])}
PROGRAM_OPTIONS = {"collective": "--collective", "hdf5.coll-metadata": "--coll-metadata"}


@dataclass
class Case:
    name: str  # the row's program column
    mpi: str
    exe: Path
    argv: list[str]  # after the executable
    prepare: list[str] = field(default_factory=list)  # run once before (a read's input)


def _build(tmp: Path, sizes: argparse.Namespace) -> list[Case]:
    cases: list[Case] = []
    n, b = str(sizes.n), str(sizes.block)
    for mpi, (cc, launcher) in MPIS.items():
        inc = Path(f"/usr/include/hdf5/{mpi}")
        if shutil.which(cc) is None or shutil.which(launcher[0]) is None or not inc.is_dir():
            print(f"advice_speedup: {cc} or HDF5 for {mpi} missing: its rows left out",
                  file=sys.stderr)
            continue
        exe = tmp / f"h5_slab-{mpi}"
        subprocess.run([cc, "-O2", f"-I{inc}", "-o", str(exe), str(PROGS / "h5_slab.c"),
                        f"-L/usr/lib/x86_64-linux-gnu/hdf5/{mpi}", "-lhdf5"], check=True,
                       cwd=tmp)
        data = str(tmp / f"{mpi}-s.h5")
        cases += [Case("HDF5 contiguous write", mpi, exe,
                       ["contig-write", str(tmp / f"{mpi}-c.h5"), n]),
                  Case("HDF5 strided write", mpi, exe, ["strided-write", data, n, b]),
                  Case("HDF5 strided read", mpi, exe, ["strided-read", data, n, b],
                       prepare=["strided-write", data, n, b])]
    mods = glob.glob("/usr/lib/x86_64-linux-gnu/fortran/*/pnetcdf.mod")
    if shutil.which("mpif90.openmpi") and mods:
        exe = tmp / "pnc_checkpoint"
        subprocess.run(["mpif90.openmpi", "-O2", f"-I{Path(mods[0]).parent}", "-o", str(exe),
                        str(PROGS / "pnc_checkpoint.f90"), "-lpnetcdf"], check=True, cwd=tmp)
        cases.append(Case("PnetCDF nb checkpoint (Fortran)", "openmpi", exe,
                          [str(tmp / "ckpt.nc"), str(sizes.pnc_nx), str(sizes.pnc_ny),
                           str(sizes.steps)]))
    return cases


def _iolab(*args: str) -> subprocess.CompletedProcess[str]:
    return bt.run([sys.executable, "-m", "iolab", *args], extra_env={"PYTHONPATH": str(
        bt.ROOT / "src")})


def _top_fix(log: Path) -> tuple[Any, str]:
    """diagnose's first predicted setting (None: no setting), and how diagnose presents it:
    "fix" (a waste finding's), or "experiment" with the reason (its rule's kind, or the
    oversubscribed node that turned it into one)."""
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.diagnose.rules.cores import SYNCHRONISING
    from iolab.model.job import build_model
    from iolab.sources import load_source
    from iolab.tune.fromlog import predictions

    report = diagnose(build_model([load_source(str(log))]), Thresholds())
    preds = predictions(report)
    if not preds:
        return None, ""
    f = next(f for f in report.findings if f.rule.id == preds[0].rule)
    if not f.rule.experiment:
        return preds[0], "fix"
    over = report.model.job.oversubscribed()
    why = (f"{over[0][1]} ranks on {over[0][2]} CPUs" if over and f.rule.id in SYNCHRONISING
           else f"gain at most {f.estimate_s or 0.0:.3g} s, to be proven")
    return preds[0], f"experiment ({why})"


def _apply(pred: Any, mpi: str, tmp: Path) -> tuple[list[str], dict[str, str], str] | None:
    """(program options, environment, how) of a fix as written; None: it cannot be applied
    to this program."""
    from iolab.tune.knobs import all_knobs

    if pred.knob in PROGRAM_OPTIONS:
        return [PROGRAM_OPTIONS[pred.knob]], {}, f"program option {PROGRAM_OPTIONS[pred.knob]}"
    k = next((k for k in all_knobs() if k.name == pred.knob), None)
    if k is not None and k.kind == "romio":
        hints = tmp / f"hints-{pred.knob}"
        hints.write_text(f"{k.library_key} {pred.value}\n")
        env = {"ROMIO_HINTS": str(hints)}
        if mpi == "openmpi":
            env["OMPI_MCA_io"] = "^ompio"
        return [], env, "ROMIO hints file" + (" + OMPI_MCA_io=^ompio" if mpi == "openmpi"
                                              else "")
    if k is not None and k.kind == "ompio" and mpi == "openmpi":
        return [], {f"OMPI_MCA_{k.library_key}": pred.value}, "OMPI_MCA_ parameter"
    return None


def _score(cmd: list[str], env: dict[str, str]) -> float | None:
    out = bt.run(cmd, timeout=1800, extra_env=dict(env))
    found = re.findall(METRIC, out.stdout)
    return float(found[-1]) if out.returncode == 0 and found else None


def _proof_verdict(log: Path, launch: list[str], tmp: Path, pred: Any, rounds: int) -> str:
    out = _iolab("tune", "--db", str(tmp / "proof.db"), "--from-log", str(log), "--metric",
                 METRIC, "--repeats", str(rounds), "--json", "--", *launch)
    if out.returncode != 0:
        return f"proof failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}"
    doc = json.loads(out.stdout)
    fix = next((f for f in doc["fixes"] if pred.knob in f["params"] and f["group"] == "alone"),
               None)
    if fix is not None:
        return str(fix["text"])
    why = next((u["reason"] for u in doc["not_proven"] if u["knob"] == pred.knob), "?")
    return f"predicted, not proven here ({why.split(':')[0]})"


def _row(case: Case, args: argparse.Namespace, tmp: Path) -> tuple[str, bool]:
    """The case's table row, and whether both sides were measured."""
    launch = [*MPIS[case.mpi][1], "-np", str(args.np)]
    if case.prepare:
        bt.run([*launch, str(case.exe), *case.prepare], timeout=1800)
    name = f"{case.exe.name}-{case.argv[0]}".replace("/", "_")[:40]
    prof = _iolab("profile", "-q", "-o", str(tmp / "prof"), "--name", name, "--np",
                  str(args.np), "--mpi", case.mpi, "--", str(case.exe), *case.argv)
    head = f"| {case.name} | {case.mpi} |"
    if prof.returncode != 0:
        return f"{head} profile failed: {prof.stderr.strip()[-120:]} |" + " |" * 7, False
    log = tmp / "prof" / f"{name}.iolab"
    pred, shown_as = _top_fix(log)
    if pred is None:
        return f"{head} none predicted |" + " – |" * 6 + " nothing to prove |", False
    fix = f"{pred.knob}={pred.value} [{pred.rule}], {shown_as}"
    how = _apply(pred, case.mpi, tmp)
    verdict = _proof_verdict(log, [*launch, str(case.exe), *case.argv], tmp, pred,
                             args.proof_rounds)
    if how is None:
        return (f"{head} {fix} | not applicable to this program |" + " – |" * 5
                + f" {verdict} |", False)
    opts, env, how_text = how
    base: bt.PerRound = []
    fixed: bt.PerRound = []
    for r in range(args.rounds):
        runs = [(base, [], {}), (fixed, opts, env)]
        for side, o, e in (runs if r % 2 == 0 else runs[::-1]):
            v = _score([*launch, str(case.exe), *o, *case.argv], e)
            side.append({"mibs": v} if v is not None else None)
    cells = bt.ratio_cells(fixed, base, "mibs")
    return (f"{head} {fix} | {how_text} | {bt.fmt(bt.values(base, 'mibs'))} | "
            f"{bt.fmt(bt.values(fixed, 'mibs'))} | {cells} | {verdict} |",
            bool(bt.paired(fixed, base, "mibs")[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=4,
                    help="ranks; more than the cores oversubscribes the machine (collective "
                    "calls wait for descheduled ranks: diagnose then presents collective "
                    "advice as experiments)")
    ap.add_argument("--n", type=int, default=262144, help="doubles a rank (HDF5)")
    ap.add_argument("--block", type=int, default=8, help="doubles a strided piece (HDF5)")
    ap.add_argument("--pnc-nx", type=int, default=64, help="x values a rank (PnetCDF)")
    ap.add_argument("--pnc-ny", type=int, default=4096, help="y rows (PnetCDF)")
    ap.add_argument("--steps", type=int, default=4, help="checkpoints (PnetCDF)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved A/B rounds")
    ap.add_argument("--proof-rounds", type=int, default=5, help="the proof's --repeats")
    ap.add_argument("--tiny", action="store_true", help="a smoke run: tiny sizes, 5 rounds")
    ap.add_argument("--output", type=Path, default=bt.ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    if args.tiny:
        args.n, args.pnc_ny, args.steps, args.rounds, args.proof_rounds = 2048, 64, 1, 5, 4
    cases_s = 7 * (args.rounds * 2 + (args.proof_rounds * 2) + 4) * 1.5
    bt.announce(cases_s, {"mpirun.openmpi": shutil.which("mpirun.openmpi"),
                          "mpirun.mpich": shutil.which("mpirun.mpich")})
    with tempfile.TemporaryDirectory(prefix="advice-speedup-") as d:
        tmp = Path(d)
        done = [_row(c, args, tmp) for c in _build(tmp, args)]
    rows, measured = [r for r, _ in done], any(m for _, m in done)
    body = "\n".join([
        bt.machine(),
        "",
        f"{args.np} ranks; HDF5: {args.n} doubles a rank, strided pieces of {args.block} "
        f"doubles; PnetCDF: {args.pnc_nx} x {args.pnc_ny} doubles a rank and field, "
        f"{args.steps} checkpoint(s); {args.rounds} interleaved rounds. --np above the "
        "machine's cores oversubscribes it: collective calls then wait for descheduled "
        "ranks, and diagnose (which reads the CPUs from the profile) turns advice that adds "
        "synchronisation into experiments; the column says whether diagnose presents the "
        "setting as a fix or an experiment. Scores: the "
        "program's own MiB/s (median [min–max]); ratio: with the fix / unchanged. "
        + bt.CI_NOTE + ". Proof: `iolab tune --from-log LOG --metric ... -- COMMAND` with "
        f"--repeats {args.proof_rounds}.",
        "",
        "| program | MPI | top predicted fix | applied as | unchanged MiB/s | with the fix "
        f"MiB/s | {bt.RATIO_HEADER} | proof's verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
    ])
    return bt.publish(args.output, SECTION, TITLE, body, measured)


if __name__ == "__main__":
    sys.exit(main())
