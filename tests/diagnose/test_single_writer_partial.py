"""The single-writer cause when the POSIX records are partial (Darshan ran out of record
memory): a 496-rank job whose rank 0 is the lone aggregator because the file has one stripe.

Expected / was: the rule finds one writer from the writer's bytes against the complete
MPI-IO layer, or names the cause from the Lustre layout and collective writes (a bound, the
POSIX time being unknown), or says in "not judged" why it cannot tell for which file / the
rule was switched off by the partial flag and listed as wanting "complete POSIX, MPI-IO
records", and the job was told about something else."""

from __future__ import annotations

from pathlib import Path

import pytest
from darshan_writer import Lustre, Rec, write_log

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
MiB, GiB = 1 << 20, 1 << 30
RANKS = 496
CKPT = "/scratch/run/ckpt.dat"


def _mpiio() -> Rec:
    return Rec("MPI-IO", CKPT, -1, {
        "MPIIO_COLL_OPENS": RANKS, "MPIIO_COLL_WRITES": RANKS * 4,
        "MPIIO_BYTES_WRITTEN": 8 * GiB, "MPIIO_SIZE_WRITE_AGG_4M_10M": RANKS * 4,
        "MPIIO_F_WRITE_TIME": RANKS * 95.0, "MPIIO_F_SLOWEST_RANK_TIME": 96.0,
        "MPIIO_F_FASTEST_RANK_TIME": 94.0, "MPIIO_SLOWEST_RANK_BYTES": 17 * MiB,
        "MPIIO_FASTEST_RANK_BYTES": 16 * MiB})


def _writer_posix() -> Rec:
    """Rank 0's own POSIX record of the file (the other ranks' records were left out)."""
    return Rec("POSIX", CKPT, 0, {
        "POSIX_OPENS": 1, "POSIX_WRITES": 2048, "POSIX_BYTES_WRITTEN": 8 * GiB,
        "POSIX_SIZE_WRITE_4M_10M": 2048, "POSIX_MAX_BYTE_WRITTEN": 8 * GiB - 1,
        "POSIX_CONSEC_WRITES": 2047, "POSIX_SEQ_WRITES": 2047, "POSIX_F_WRITE_TIME": 90.0})


def _other_posix() -> Rec:
    """The records Darshan kept: an input file read before it ran out of record memory."""
    return Rec("POSIX", "/scratch/run/input.nml", 0, {
        "POSIX_OPENS": 1, "POSIX_READS": 1, "POSIX_BYTES_READ": 4096,
        "POSIX_F_READ_TIME": 0.01})


def _log(tmp_path: Path, name: str, posix: list[Rec], stripes: int | None) -> Path:
    return write_log(tmp_path / name, nprocs=RANKS, run_time_s=200.0, exe="./sim",
                     records=[*posix, _mpiio()], partial=("POSIX",),
                     lustre=[Lustre(CKPT, 4 * MiB, stripes)] if stripes else None)


def _run(log: Path):
    return diagnose(build_model([load_darshan_log(log)]), Thresholds())


def test_partial_posix_one_writer_from_the_mpiio_bytes(tmp_path: Path) -> None:
    """Expected: one writer found, its POSIX time the cost / was: not judged."""
    rep = _run(_log(tmp_path, "measured.darshan", [_writer_posix()], None))
    assert "POSIX" in rep.model.job.partial_modules
    problems = [f for f in rep.findings if not f.rule.overview]
    f = problems[0]
    assert f.rule.id == "single-posix-writer" and f.hit.cost_bound is False
    assert f.hit.values["posix_top_rank_share"] == pytest.approx(1.0)
    assert "of the MPI-IO bytes" in f.hit.summary and "partial" in f.hit.summary
    assert f.cost_s == pytest.approx(90.0 * (1 - 1 / f.hit.values["aggregators_wanted"]))
    assert not any(r == "single-posix-writer" for r, _ in rep.not_judged)


def test_partial_posix_one_stripe_names_the_cause_as_a_bound(tmp_path: Path) -> None:
    """Expected: the file's POSIX record left out, one stripe and collective writes: the lone
    aggregator named from the layout, at most the MPI-IO write time / was: not judged."""
    rep = _run(_log(tmp_path, "layout.darshan", [_other_posix()], 1))
    f = next(f for f in rep.findings if f.rule.id == "single-posix-writer")
    assert f.hit.cost_bound and f.severity != "high"
    assert "one stripe" in f.hit.summary and "one aggregator per OST" in f.hit.summary
    assert "Darshan ran out of record memory" in f.hit.summary
    k = f.hit.values["aggregators_wanted"]
    assert f.cost_s == pytest.approx(96.0 * (1 - 1 / k))
    hints = next(a for a in f.fix.artifacts if a.kind == "romio-hints").content
    assert f"cb_nodes {k}\n" in hints and f"striping_factor {k}\n" in hints
    assert "one OST" in f.fix.text
    problems = [g for g in rep.findings if not g.rule.overview and not g.rule.experiment]
    assert problems[0] is f  # nothing measured explains the writes better


def test_partial_posix_without_layout_says_it_cannot_tell(tmp_path: Path) -> None:
    """Expected: no finding, and "not judged" names the file and why (partial POSIX, no
    one-stripe layout) / was: the generic "complete POSIX, MPI-IO records"."""
    rep = _run(_log(tmp_path, "untold.darshan", [_other_posix()], 4))
    assert not any(f.rule.id == "single-posix-writer" for f in rep.findings)
    why = dict(rep.not_judged)["single-posix-writer"]
    assert CKPT in why and "partial" in why and "Darshan ran out of record memory" in why
    assert "Lustre layout of one stripe" in why
