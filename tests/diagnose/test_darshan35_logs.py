"""Known answers from real programs run here under the real Darshan 3.5.0 runtime (issue 8).

The logs in darshan35/ were made by darshan35/make_logs.sh from the programs of progs/ (the
same scenarios as test_profiled_programs.py, which runs them under ``iolab profile``), with
DXT tracing on; darshan35/README.md says for each how to remake it. The tests read only
these logs (no Darshan, no MPI at test time). Each asserts the finding, its place among the
findings (the costliest first), its cost within a band set by what the program does (its
sleep, its sizes, the log's own time counters: never a number copied from the output), its
fix artifacts (artifact_check) and, for what the job already does, the findings that must
not appear.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from artifact_check import all_problems

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import Report, diagnose
from iolab.diagnose.rules.base import SEVERITY_RANK, Finding
from iolab.model.job import build_model
from iolab.model.mpilib import mpi_library
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
LOGS = Path(__file__).resolve().parent / "darshan35"
KiB, MiB = 1 << 10, 1 << 20
RANKS = 4
# progs/mpi_patterns.c holes: 64 collective calls of 64 KiB per rank
HOLES_CALLS, HOLES_PIECE = 64, 64 * KiB
# progs/mpi_patterns.c sieve: 4096 blocks of 1 KiB per rank through a file view
SIEVE_N, SIEVE_S = 4096, 1024
# progs/mpi_small_calls.c: 1200 calls of 256 B per rank
SMALL_CALLS, SMALL_S = 1200, 256
H5_GROUPS = 40000  # progs/h5_many_groups.c: 40,000 groups in a 64 MiB metadata cache
# progs/pnc_steps.c: 300 steps of 4 variables, 256 doubles per rank each
PNC_STEPS, PNC_VARS = 300, 4
SLEEP_S = 2.0  # mpi_patterns.c late / lateclose: rank 0 sleeps 2000 ms
FLUSH_LINES = 2000  # progs/flush_log.c: 2000 lines, each fflush'd and fsync'd
FSYNC_MIN_S = 0.05  # the tiny-file threshold lowered to a fast disk (as test_profiled_programs)


@cache
def _report(name: str, tiny_file_min_s: float | None = None) -> Report:
    th = Thresholds()
    if tiny_file_min_s is not None:
        th.tiny_file_min_s = tiny_file_min_s
    return diagnose(build_model([load_darshan_log(LOGS / name)]), th)


def _key(f: Finding) -> str:
    return f.rule.id + (f"/{f.hit.direction}" if f.hit.direction else "")


def _find(rep: Report, key: str) -> Finding:
    found = [f for f in rep.findings if _key(f) == key]
    assert found, f"{key} not among {[_key(f) for f in rep.findings]}"
    return found[0]


def _maybe(rep: Report, key: str) -> Finding | None:
    """A finding whose presence is not the point (another rule may claim the calls: tiny
    calls go to small-requests / tiny-collective-calls); what it says is."""
    return next((f for f in rep.findings if _key(f) == key), None)


def _rank(rep: Report, key: str) -> int:
    return [_key(f) for f in rep.findings].index(key)


def _absent(rep: Report, *keys: str) -> None:
    fired = {_key(f) for f in rep.findings} | {f.rule.id for f in rep.findings}
    assert not fired & set(keys), sorted(fired & set(keys))


def _well_ordered(rep: Report) -> None:
    """Problems before the overview, by severity, the costliest first; no artifact problem."""
    keys = [(f.rule.overview, SEVERITY_RANK[f.severity], -(f.cost_s or 0.0))
            for f in rep.findings]
    assert keys == sorted(keys)
    assert all_problems(rep.model, rep.findings) == []


def _hints(f: Finding) -> str:
    return next(a for a in f.fix.artifacts if a.kind == "romio-hints").content


def _ompio_told(rep: Report) -> None:
    """Open MPI's OMPIO ignores ROMIO hints: every fix with a ROMIO hints file says so and
    carries the MCA parameters."""
    assert mpi_library(rep.model).io == "ompio"
    with_hints = [f for f in rep.findings
                  if any(a.kind == "romio-hints" for a in f.fix.artifacts)]
    assert with_hints
    for f in with_hints:
        assert "--mca io romio321" in f.fix.text
        assert any(a.kind == "ompio-mca" for a in f.fix.artifacts)


def _run_time(rep: Report) -> float:
    return rep.model.metrics.run_time_s


def _posix_time(rep: Report, d: str) -> float:
    return float(rep.model.layers.posix.time_s[d].sum())


# ---- ROMIO collective writes with holes: read-modify-write --------------------------------

@pytest.mark.parametrize("name", ["holes-mpich-new.darshan", "holes-mpich-old.darshan"])
def test_romio_collective_writes_with_holes_read_the_file(name: str) -> None:
    """MPICH, romio_cb_write enable (ROMIO_HINTS): two-phase collective buffering reads each
    call's file domain (7 of the 8 blocks a call spans hold data) before writing it: one
    aggregator on one node, one read per call. The first run's file is new (every read is
    past its end: 0 bytes), the second run's exists (the old data comes back)."""
    rep = _report(name)
    _well_ordered(rep)
    f = _find(rep, "read-modify-write")
    v = f.hit.values
    domain = (2 * RANKS - 1) * HOLES_PIECE  # from the first to the last byte of one call
    assert v["mpiio_reads"] == 0 and v["mpiio_writes"] == RANKS * HOLES_CALLS
    assert v["posix_reads"] == HOLES_CALLS and f.hit.data["collective"]
    if name.endswith("new.darshan"):
        assert v["zero_byte_reads"] == HOLES_CALLS and v["posix_bytes_read"] == 0
    else:
        assert v["zero_byte_reads"] == 0 and v["posix_bytes_read"] == HOLES_CALLS * domain
    i = rep.model.files.paths.index(f.hit.files[0].path)
    assert rep.model.layers.posix.bytes_written[i] == HOLES_CALLS * domain
    # the cost: the slowest rank's reads, within all the ranks' read time
    assert f.cost_s is not None and 0 < f.cost_s <= _posix_time(rep, "read") * (1 + 1e-9)
    assert "romio_ds_write disable" in _hints(f)
    # one node: ROMIO's one aggregator wrote every POSIX byte of the balanced MPI-IO file
    one = _find(rep, "single-posix-writer")
    assert one.hit.values["posix_top_rank_share"] == 1.0
    assert one.hit.values["mpiio_top_rank_share"] == 1 / RANKS
    assert "cb_nodes 4" in _hints(one)
    # the aggregator writes the domains it read: its writes cost more than its reads
    assert _rank(rep, "single-posix-writer") < _rank(rep, "read-modify-write")
    # the 64 exchanges of two-phase I/O on 4 ranks over 2 cores take seconds: MPI-IO time far
    # above POSIX time, reported first (see README.md: it is not a late rank); with a core
    # per rank they take milliseconds and nothing is reported
    if any(_key(g) == "mpiio-time-skew" for g in rep.findings):
        assert _rank(rep, "mpiio-time-skew") == 0
    # already collective, one node: neither "use collective I/O" nor more aggregators per node
    _absent(rep, "mpiio-independent", "collective-buffering", "aggregators-per-node")
    assert "aggregators-per-node" not in dict(rep.not_judged)  # DXT gives the node count
    assert rep.model.job.nodes == 1


def test_ompio_does_not_read_holes_and_romio_hints_need_romio() -> None:
    """The same holes program under Open MPI's OMPIO: no read-modify-write (OMPIO's
    two-phase writes only the pieces); the library is recognised from OMPIO's own files
    (<file>.locktest.<rank>, /tmp/ompi.*) and ROMIO hints come with --mca io romio321."""
    rep = _report("holes-openmpi.darshan")
    _well_ordered(rep)
    lib = mpi_library(rep.model)
    assert (lib.name, lib.io) == ("open-mpi", "ompio")
    _absent(rep, "read-modify-write", "mpiio-independent", "aggregators-per-node")
    _ompio_told(rep)
    one = _find(rep, "single-posix-writer")
    assert one.hit.values["posix_top_rank_share"] == 1.0


# ---- ROMIO data sieving: 4x write amplification -------------------------------------------

def test_romio_data_sieving_writes_every_byte_four_times() -> None:
    rep = _report("sieve-mpich.darshan")
    _well_ordered(rep)
    amp = _find(rep, "write-amplification")
    v = amp.hit.values
    assert v["mpiio_bytes_written"] == RANKS * SIEVE_N * SIEVE_S
    # each rank rewrites the extent from its first to its last block: 4x its data, less the
    # 3 blocks of the other ranks past its last one
    assert v["posix_bytes_written"] == RANKS * (RANKS * SIEVE_N * SIEVE_S - 3 * SIEVE_S)
    assert v["amplification"] == pytest.approx(RANKS, rel=1e-3)
    # the cost: the extra share of the slowest rank's write time
    assert amp.cost_s is not None
    assert 0 < amp.cost_s <= _posix_time(rep, "write") * (1 - 1 / v["amplification"])
    # first or second: its own read-modify-write (the sieving reads) may cost more
    assert _rank(rep, "write-amplification") <= 1 and _rank(rep, "read-modify-write") <= 2
    rmw = _find(rep, "read-modify-write")
    assert rmw.hit.values["mpiio_reads"] == 0 and rmw.hit.values["posix_bytes_read"] > 0
    assert not rmw.hit.data["collective"] and "independent writes" in rmw.hit.summary
    for f in (amp, rmw):
        assert "romio_ds_write disable" in _hints(f)
    # the program reads nothing: the sieving reads are not "read it once and broadcast"
    _absent(rep, "redundant-traffic/read")


def test_data_sieving_is_not_also_redundant_writes() -> None:
    """The program writes each byte once (MPI-IO bytes = the file's extent): the bytes data
    sieving rewrote are write-amplification's, not also redundant traffic telling it to
    "write each region once" (was: both, with the same cost)."""
    rep = _report("sieve-mpich.darshan")
    i = rep.model.files.paths.index(_find(rep, "write-amplification").hit.files[0].path)
    L = rep.model.layers
    assert L.mpiio.bytes_written[i] == L.posix.max_byte["write"][i] + 1
    _absent(rep, "redundant-traffic/write")


# ---- a late rank: collective calls wait ---------------------------------------------------

def test_late_rank_makes_collective_calls_wait() -> None:
    rep = _report("late-openmpi.darshan")
    _well_ordered(rep)
    first = rep.findings[0]
    assert _key(first) == "mpiio-time-skew" and first.severity == "high"
    v = first.hit.values
    assert v["mpiio_slowest_s"] >= 0.95 * SLEEP_S and v["posix_slowest_s"] < 0.25 * SLEEP_S
    assert first.cost_s == pytest.approx(v["mpiio_slowest_s"] - v["posix_slowest_s"], rel=1e-6)
    assert 0.9 * SLEEP_S <= first.cost_s <= _run_time(rep)
    assert "MPI_Barrier" in first.fix.text
    # one cause per file: the waiting ranks are not also stragglers; one node: no aggregators
    _absent(rep, "shared-file-stragglers", "slow-close", "aggregators-per-node")


def test_late_rank_before_the_close_is_waiting_not_a_slow_close() -> None:
    rep = _report("lateclose-openmpi.darshan")
    _well_ordered(rep)
    first = rep.findings[0]
    assert _key(first) == "mpiio-time-skew"
    assert first.hit.values["mpiio_close_s"] >= 0.95 * SLEEP_S
    assert "in MPI_File_close" in first.hit.summary
    assert 0.9 * SLEEP_S <= (first.cost_s or 0) <= _run_time(rep)
    _absent(rep, "slow-close", "shared-file-stragglers")


# ---- a progress log flushed line by line --------------------------------------------------

def test_progress_log_flushed_line_by_line() -> None:
    """No MPI (DARSHAN_ENABLE_NONMPI=1). Darshan 3.5 counts each fileno() as a POSIX open:
    still one open, no frequent-open-close. With the threshold lowered to this machine's
    fast fsync (seconds here, minutes on Lustre) the small file that costs time is first."""
    rep = _report("flushlog.darshan", tiny_file_min_s=FSYNC_MIN_S)
    _well_ordered(rep)
    f = rep.findings[0]
    assert _key(f) == "tiny-file-slow"
    row = f.hit.files[0]
    size = sum(len(f"step {i} done\n") for i in range(FLUSH_LINES))
    assert row.path.endswith("/progress.log") and row.values["opens"] == 1
    assert row.values["syncs_flushes"] == 2 * FLUSH_LINES and row.values["bytes"] == size
    # the cost: the one rank's time on that file (at its slowest layer), within the run
    L = rep.model.layers
    i = rep.model.files.paths.index(row.path)
    assert f.cost_s == pytest.approx(max(float(L.posix.slowest_rank_time_s[i]),
                                         float(L.stdio.slowest_rank_time_s[i])))
    assert f.cost_s is not None and FSYNC_MIN_S <= f.cost_s <= _run_time(rep)
    assert "fflush/fsync" in f.fix.text
    _absent(rep, "frequent-open-close")
    # with the default threshold (60 s) a fast disk's 2,000 fsyncs are no finding
    _absent(_report("flushlog.darshan"), "tiny-file-slow")


# ---- HDF5 fill values ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["fill", "nofill"])
def test_hdf5_fill_values_written_before_the_data(mode: str) -> None:
    """Open MPI's parallel HDF5, 4 ranks x 2^19 doubles: with fill at allocation the file
    receives the fill values (16 MiB) then the data (16 MiB). Darshan's H5D record
    ('<file>:/data' in its H5D module) is linked to the file."""
    rep = _report(f"h5{mode}-openmpi.darshan")
    _well_ordered(rep)
    data = RANKS * (1 << 19) * 8
    L = rep.model.layers
    i = next(k for k, p in enumerate(rep.model.files.paths) if p.endswith(f"/{mode}.h5"))
    assert L.library[i] == "HDF5" and L.library_bytes_written[i] == data
    if mode == "fill":
        assert L.posix.bytes_written[i] >= 2 * data
        f = _find(rep, "fill-mode")
        assert f.hit.files[0].values["data_bytes"] == data
        assert "of datasets" in f.hit.summary and "H5Pset_fill_time" in f.fix.text
        # the cost: the extra half of the POSIX write time on the file
        assert f.cost_s is not None and 0 < f.cost_s <= 0.5 * _posix_time(rep, "write") + 1e-9
    else:
        assert L.posix.bytes_written[i] < data + MiB
        _absent(rep, "fill-mode", "write-amplification")
        # one aggregator wrote the data: the fix for Open MPI's OMPIO in its own terms
        assert _find(rep, "single-posix-writer").hit.values["posix_top_rank_share"] > 0.99
        _ompio_told(rep)


# ---- HDF5 metadata flushed at H5Fclose: a slow close ---------------------------------------

def test_hdf5_close_flushing_the_metadata_cache_is_slow() -> None:
    """40,000 groups with one attribute each in a metadata cache large enough to keep them
    all dirty: H5Fclose writes them (rank 0, a few tiny independent writes per group) and
    takes seconds, in the HDF5 layer (Darshan's H5F close timestamps). No DXT (the trace of
    its 170,000 writes would make the log megabytes)."""
    rep = _report("h5close-openmpi.darshan")
    _well_ordered(rep)
    first = rep.findings[0]
    assert _key(first) == "slow-close" and first.severity == "high"
    assert first.hit.values["layer"] == "HDF5"
    assert first.hit.files[0].path.endswith("/many.h5")
    i = rep.model.files.paths.index(first.hit.files[0].path)
    L = rep.model.layers
    assert L.library[i] == "HDF5" and L.posix.writes[i] >= H5_GROUPS
    assert first.cost_s == pytest.approx(float(L.library_close_s[i]))
    assert Thresholds().slow_close_s <= first.cost_s <= _run_time(rep)
    assert "H5Pset_coll_metadata_write" in first.fix.text


def test_hdf5_close_is_io_time_counted_once() -> None:
    """The job's I/O time counts the HDF5 layer's (H5F open/close): the 4 s H5Fclose is I/O
    (was: only the MPI-IO time under it, "14% of the run is I/O" next to a slow close that
    cost 63% of it), and once: HDF5, MPI-IO and POSIX time of the same file do not add up."""
    rep = _report("h5close-openmpi.darshan")
    m, th = rep.model.metrics, rep.thresholds
    close = _find(rep, "slow-close").cost_s or 0.0
    h5f = rep.model.mods["H5F"]
    mean_h5 = float(h5f.fcol("H5F_F_META_TIME").sum()) / RANKS  # reduced: no slowest rank
    i = rep.model.files.paths.index(_find(rep, "slow-close").hit.files[0].path)
    L = rep.model.layers
    below = float(L.mpiio.slowest_rank_time_s[i] + L.posix.slowest_rank_time_s[i])
    assert m.io_time_s == pytest.approx(mean_h5, rel=1e-6)  # the HDF5 layer, the largest
    assert mean_h5 > below  # ...and not HDF5 + MPI-IO + POSIX
    assert 0.9 * close <= m.io_time_s <= _run_time(rep)
    assert m.io_fraction >= th.io_bound_high and rep.summary.io_bound == "yes"
    assert m.io_time_by_kind_s["meta"] == pytest.approx(float(h5f.fcol("H5F_F_META_TIME").sum()))
    assert _find(rep, "io-bound").severity == "high"
    # and the interfaces say where: HDF5's file calls (no dataset: groups only)
    h5 = m.ifaces["HDF5"]
    assert h5.time_s["meta"] == pytest.approx(float(h5f.fcol("H5F_F_META_TIME").sum()))
    assert h5.total_bytes == 0 and h5.files == 1
    # the cross-layer table shows the HDF5 layer's time next to MPI-IO's and POSIX's
    from iolab.diagnose.report import layer_rows

    row = layer_rows(rep)[0]
    assert row.path.endswith("/many.h5") and row.values["library"] == "HDF5"
    assert row.values["library_s"] == pytest.approx(m.io_time_s, abs=1e-3)
    assert float(L.library_slowest_rank_time_s[i]) == pytest.approx(mean_h5)


def test_pnetcdf_io_time_counted_once_at_its_top_layer() -> None:
    """PnetCDF's put_all time holds MPI-IO's and POSIX's: the job's I/O time is at least the
    MPI-IO layer's (was: MPI-IO only) and never the layers added up (at most the run)."""
    rep = _report("pncput-openmpi.darshan")
    m = rep.model.metrics
    i = next(k for k, p in enumerate(rep.model.files.paths) if p.endswith("/pnc-put.nc"))
    assert m.io_time_s >= float(rep.model.layers.mpiio.slowest_rank_time_s[i])
    assert m.io_time_s <= _run_time(rep) * (1 + 1e-9)


def test_hdf5_collective_metadata_already_set_is_not_advised_again() -> None:
    """The same program with H5Pset_all_coll_metadata_ops + H5Pset_coll_metadata_write: the
    metadata reaches MPI-IO as a few collective writes (no independent call on the file), the
    close is still slow (the flush of 40,000 groups is HDF5's own work), and neither the
    close nor the metadata finding asks for collective metadata again (was: both did)."""
    rep = _report("h5closecoll-openmpi.darshan")
    _well_ordered(rep)
    f = _find(rep, "slow-close")
    assert _rank(rep, "slow-close") == 0 and f.hit.values["layer"] == "HDF5"
    i = rep.model.files.paths.index(f.hit.files[0].path)
    L = rep.model.layers
    assert L.calls.writes["INDEP"][i] == 0 and 0 < L.calls.writes["COLL"][i] < H5_GROUPS / 100
    assert L.posix.writes[i] < H5_GROUPS / 100  # aggregated: a few large writes
    assert Thresholds().slow_close_s <= (f.cost_s or 0) <= _run_time(rep)
    for g in rep.findings:
        assert "H5Pset_coll_metadata_write" not in g.fix.text, _key(g)
        assert "H5Pset_all_coll_metadata_ops" not in g.fix.text, _key(g)
    assert "H5Pset_mdc_config" in f.fix.text
    _absent(rep, "mpiio-independent", "collective-buffering")


def test_hdf5_program_is_not_told_to_call_mpi_io() -> None:
    """HDF5's metadata flush (rank 0, 4 tiny independent writes per group) is reported in
    HDF5's terms (was: "use MPI_File_write_at_all", "MPI_File_iwrite_at_all")."""
    rep = _report("h5close-openmpi.darshan")
    told = [_key(f) for f in rep.findings if "MPI_File_" in f.fix.text]
    assert told == []
    ind = _find(rep, "mpiio-independent/write")
    assert ind.hit.values["indep_writes"] >= H5_GROUPS
    assert "H5Pset_coll_metadata_write" in ind.fix.text
    nb = _maybe(rep, "mpiio-nonblocking")
    assert nb is None or "H5Dwrite_async" in nb.fix.text


# ---- PnetCDF already non-blocking vs blocking collective puts ------------------------------

def test_pnetcdf_iput_is_already_non_blocking() -> None:
    """ncmpi_iput_vara + ncmpi_wait_all reach MPI-IO as one blocking collective write per
    step: the program already does what mpiio-nonblocking advises (was: it was told to use
    ncmpi_iput_vara + ncmpi_wait_all). The wait_all also merges the 4 variables per call."""
    rep = _report("pnciput-openmpi.darshan")
    _well_ordered(rep)
    var = rep.model.mods["PNETCDF_VAR"]
    assert int(var.pos("PNETCDF_VAR_NB_WRITES").sum()) == RANKS * PNC_STEPS * PNC_VARS
    i = next(k for k, p in enumerate(rep.model.files.paths) if p.endswith("/pnc-iput.nc"))
    coll = int(rep.model.layers.calls.writes["COLL"][i])
    assert RANKS * PNC_STEPS <= coll < RANKS * PNC_STEPS * PNC_VARS
    _absent(rep, "mpiio-nonblocking", "tiny-collective-calls", "mpiio-independent")


def test_pnetcdf_blocking_puts_are_many_tiny_collective_calls() -> None:
    """The same steps with ncmpi_put_vara_double_all: 1,200 collective calls of 2 KiB per
    rank (first); non-blocking calls, if advised, in PnetCDF's own terms."""
    rep = _report("pncput-openmpi.darshan")
    _well_ordered(rep)
    first = rep.findings[0]
    # high here on a loaded machine (seconds); info on an idle one (under a second)
    assert _key(first) == "tiny-collective-calls"
    v = first.hit.values
    assert v["collective_calls_per_rank"] == PNC_STEPS * PNC_VARS
    assert v["avg_call_bytes"] <= 256 * 8
    assert 0 < (first.cost_s or 0) <= _run_time(rep)
    nb = _maybe(rep, "mpiio-nonblocking")
    if nb is not None:  # in PnetCDF's terms, and only the direction the job uses
        assert "ncmpi_iput_vara" in nb.fix.text and "ncmpi_wait_all" in nb.fix.text
        assert nb.hit.values["reads"] == 0 and "iget" not in nb.fix.text
    _absent(rep, "mpiio-independent", "aggregators-per-node")


def test_pnetcdf_tiny_collective_calls_fix_in_pnetcdf_terms() -> None:
    """Was: a file view and MPI_File_write_all, to a program that calls PnetCDF; its lever is
    ncmpi_iput_vara + ncmpi_wait_all (pnciput-openmpi.darshan: the finding goes)."""
    f = _find(_report("pncput-openmpi.darshan"), "tiny-collective-calls")
    assert "ncmpi_wait_all" in f.fix.text and "MPI_File_" not in f.fix.text


# ---- many tiny collective calls; the same pieces written independently ---------------------

def test_tiny_collective_calls_already_collective() -> None:
    """1,200 collective calls of 256 B per rank: the calls' synchronisation is the cost (first);
    nothing advises collective I/O (already collective) nor non-blocking reads (the job
    reads nothing)."""
    rep = _report("smallcoll-mpich.darshan")
    _well_ordered(rep)
    first = rep.findings[0]
    # high here (4 ranks busy-polling on 2 cores: seconds); info where it costs under a second
    assert _key(first) == "tiny-collective-calls"
    v = first.hit.values
    assert v["collective_calls"] == RANKS * SMALL_CALLS
    assert v["collective_calls_per_rank"] == SMALL_CALLS and v["avg_call_bytes"] == SMALL_S
    assert first.cost_s == pytest.approx(v["mpiio_slowest_s"] - v["posix_slowest_s"], rel=1e-6)
    assert 0 < first.cost_s <= _run_time(rep)
    _absent(rep, "mpiio-independent", "aggregators-per-node")
    small = _find(rep, "small-requests/write")
    assert small.fix.text.startswith("The MPI-IO calls are already collective")
    assert not any(a.kind == "romio-hints" for a in small.fix.artifacts)
    nb = _maybe(rep, "mpiio-nonblocking")
    if nb is not None:  # no reads: no non-blocking reads
        assert nb.hit.values["reads"] == 0 and "iwrite" in nb.fix.text
        assert "iread" not in nb.fix.text


def test_tiny_collective_calls_are_reported_once() -> None:
    """The calls' 16 s of synchronisation are tiny-collective-calls' alone (was: collective
    buffering HIGH too, claiming the same MPI-IO seconds, though aggregating the pieces of
    calls already collective leaves their synchronisation: only their POSIX time is at
    stake). Findings on the file's POSIX writes explain the same milliseconds once."""
    rep = _report("smallcoll-mpich.darshan")
    tiny = _find(rep, "tiny-collective-calls")
    assert [_key(f) for f in rep.findings if f.severity == "high" and not f.rule.overview] == [
        "tiny-collective-calls"]
    assert tiny.same_time_as == []
    cb = _maybe(rep, "collective-buffering/write")
    if cb is not None:
        i = rep.model.files.paths.index(cb.hit.files[0].path)
        assert (cb.cost_s or 0) <= float(rep.model.layers.posix.slowest_rank_time_s[i]) + 1e-9
    # a finding on the same POSIX writes as a costlier one says so and saves nothing more
    small = _find(rep, "small-requests/write")
    later = [f for f in rep.findings if f.same_time_as]
    assert later and all(f.severity != "high" for f in later)
    for f in later:
        assert f"the same time as {f.same_time_as[0]}" in f.cost_text()
        assert not any(t.startswith(f.rule.id) for t in rep.summary.top_fixes)
    from iolab.diagnose.render_html import render_html
    from iolab.diagnose.report import to_dict

    assert f"the same time as {later[0].same_time_as[0]}" in render_html([rep])
    assert any(d["same_time_as"] for d in to_dict(rep)["findings"])
    if cb is not None:  # the same POSIX writes: one of the two names the other
        assert ["small-requests/write"] in (cb.same_time_as, []) and (
            cb.same_time_as or small.same_time_as == ["collective-buffering/write"])


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.darshan")))
def test_no_two_findings_claim_the_same_seconds(name: str) -> None:
    """Across every log: no finding that adds to the job's savings claims time a costlier one
    already holds (a file's read, write, metadata or waiting time goes to the costliest
    finding claiming it); those that would name it, cost no more and are never HIGH."""
    from iolab.diagnose.report import _owners

    rep = _report(name)
    taken: dict[str, dict[str, str]] = {}
    by_key = {_key(f): f for f in rep.findings}
    for f in rep.findings:
        if f.same_time_as:
            assert f.severity != "high"
            for owner in f.same_time_as:
                assert (by_key[owner].cost_s or 0) >= (f.cost_s or 0)
            continue
        if f.rule.overview or f.rule.severity == "info" or not (f.cost_s or 0) > 0:
            continue
        for p, k in f.hit.claimed():
            assert not _owners(taken, p, k), (_key(f), p, k, taken.get(p))
            taken.setdefault(p, {})[k] = _key(f)


def test_small_independent_writes_one_node() -> None:
    """The same 256 B pieces with independent calls: use collective I/O (with its hint);
    collective buffering on one node without per-node aggregators, and no cb_buffer_size
    (ROMIO's default never restated, no stripe known)."""
    rep = _report("smallindep-mpich.darshan")
    _well_ordered(rep)
    ind = _find(rep, "mpiio-independent/write")
    assert ind.hit.values["indep_writes"] == RANKS * SMALL_CALLS
    assert ind.hit.values["coll_writes"] == 0
    assert "romio_cb_write enable" in _hints(ind)
    assert 0 < (ind.cost_s or 0) <= _run_time(rep)
    cb = _find(rep, "collective-buffering/write")
    assert cb.hit.values["mpiio_avg_bytes"] == SMALL_S == cb.hit.values["posix_avg_bytes"]
    hints = _hints(cb)
    assert "romio_cb_write enable" in hints
    assert "cb_config_list" not in hints and "cb_buffer_size" not in hints
    assert "switch the independent calls to collective" in cb.fix.text
    small = _find(rep, "small-requests/write")
    assert "already collective" not in small.fix.text
    nb = _maybe(rep, "mpiio-nonblocking")
    assert nb is None or "iread" not in nb.fix.text
    _absent(rep, "tiny-collective-calls", "aggregators-per-node")


# ---- every kept log ----------------------------------------------------------------------

ALL = sorted(p.name for p in LOGS.glob("*.darshan"))


@pytest.mark.parametrize("name", ALL)
def test_every_log_is_small_documented_and_its_artifacts_valid(name: str) -> None:
    assert (LOGS / name).stat().st_size < 200 * KiB
    assert f"| {name} |" in (LOGS / "README.md").read_text()
    assert load_darshan_log(LOGS / name).metadata["lib_ver"] == "3.5.0"  # the runtime's
    _well_ordered(_report(name))


# ---- everyday habits of MPI programs (progs/posix_habits.c, MPICH) ----------------------

DATA = "/tmp/iolab-d35/"  # make_logs.sh's data folder, as the logs record it
REOPEN_STEPS = 50000  # logreopen: 50,000 fopen("a") + fprintf + fclose per rank
CSV_LINES = 200000  # csv: rank 0 fprintf's 200,000 lines
CONFIG_BYTES = 2048  # config: every rank reads the 2 KiB namelist
PERRANK_BLOCKS = 16  # perrank: rank r writes (r + 1) * 16 blocks of 1 MiB
INPUT_BYTES, RANK0_READ = 1 << 30, 8 * MiB  # rank0read: 1 GiB read in 8 MiB reads by rank 0
PACKED_N, PACKED_S = 2000, 4096  # packed: 2000 records of 4 KiB per rank, buffer + 4
BLOCK_N, BLOCK_S, COMPUTE_S = 256, MiB, 0.002  # blockread: 256 x 1 MiB, 2 ms after each


def _counter(rep: Report, module: str, name: str, rank: int | None = None) -> float:
    """A Darshan counter summed over the records of the program's data files (of one rank):
    the raw log, not a rule's arithmetic."""
    md = rep.model.mods[module]
    paths = [rep.model.files.paths[i] for i in md.file_index]
    mine = np.array([p.startswith(DATA) for p in paths], dtype=bool)
    if rank is not None:
        mine &= md.ranks == rank
    return float(md.fcol(name)[mine].sum())


def _rank_max(rep: Report, module: str, name: str) -> float:
    return max(_counter(rep, module, name, r) for r in range(RANKS))


def _snippets(f: Finding) -> set[str]:
    return {a.name for a in f.fix.artifacts}


def test_open_append_close_logging_costs_metadata_time() -> None:
    """Every rank opens its own log, appends one line and closes it, 50,000 times: the
    metadata time (fopen + fclose, which flushes the line) of the busiest rank comes first,
    and is the time of the reopening too ("the same time as"); the lines' formatting is
    write time, formatted-output's own, not taken for the same seconds; nothing to buffer
    between an open and its close (no small-serial-io)."""
    rep = _report("reopen-mpich.darshan")
    _well_ordered(rep)
    meta_max = _rank_max(rep, "STDIO", "STDIO_F_META_TIME")
    md = _find(rep, "metadata-time")
    assert _rank(rep, "metadata-time") == 0
    assert md.cost_s == pytest.approx(meta_max, rel=1e-6)
    assert 0 < meta_max <= _run_time(rep)
    assert md.hit.values["meta_fraction"] >= Thresholds().metadata_share
    opens = _find(rep, "frequent-open-close")
    assert opens.hit.values["opens"] == RANKS * REOPEN_STEPS
    assert opens.hit.values["max_opens_per_rank"] == REOPEN_STEPS
    assert opens.hit.values["files"] == RANKS
    assert opens.cost_s == pytest.approx(meta_max, rel=1e-6)
    assert opens.same_time_as == ["metadata-time"]
    for f in (md, opens):
        assert "fewer_opens.c" in _snippets(f)
    text = _find(rep, "formatted-output")
    assert text.hit.values["stdio_writes"] == RANKS * REOPEN_STEPS
    assert text.same_time_as == []  # write time, not the metadata time above
    assert text.cost_s == pytest.approx(_rank_max(rep, "STDIO", "STDIO_F_WRITE_TIME"))
    _absent(rep, "small-serial-io")


def test_csv_written_line_by_line_is_formatted_output() -> None:
    rep = _report("csv-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "formatted-output")
    assert _rank(rep, "formatted-output") == 0
    lines = "".join(f"{i},{0.001 * i:.6f},{1.0 / (i + 1):.4f}\n" for i in range(CSV_LINES))
    assert f.hit.values == {"files": 1, "stdio_writes": CSV_LINES,
                            "stdio_bytes_written": len(lines)}
    assert f.hit.files[0].path == DATA + "results.csv"
    assert f.cost_s == pytest.approx(_counter(rep, "STDIO", "STDIO_F_WRITE_TIME", 0))
    assert "binary_output.c" in _snippets(f)
    # one stream, kept open: a larger buffer does help, for the same seconds
    serial = _find(rep, "small-serial-io/write")
    assert serial.same_time_as == ["formatted-output"]


def test_small_namelist_read_by_every_rank() -> None:
    rep = _report("config-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "small-shared-input")
    assert _rank(rep, "small-shared-input") == 0
    assert f.hit.values == {"files": 1, "max_ranks": RANKS, "bytes_read": RANKS * CONFIG_BYTES}
    assert f.hit.files[0].path == DATA + "config.nml"
    # its cost: the slowest rank's time on the file (Darshan reduced the shared file's
    # records to one; no writes: all of it is reads, opens and closes), under a millisecond
    assert _counter(rep, "STDIO", "STDIO_F_WRITE_TIME") == 0
    assert f.cost_s == pytest.approx(_counter(rep, "STDIO", "STDIO_F_SLOWEST_RANK_TIME"))
    assert 0 < (f.cost_s or 0) < 1e-3
    assert f.severity == "info" and "read_once_bcast.c" in _snippets(f)


def test_uneven_per_rank_files() -> None:
    """Rank r writes (r + 1) x 16 MiB to its own file: rank 3 moves 4x rank 0's bytes, and
    the job waits for the busiest rank (the cost: its time on its file above the ranks' mean,
    what balancing would save)."""
    rep = _report("perrank-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "per-rank-imbalance")
    assert _rank(rep, "per-rank-imbalance") == 0
    v = f.hit.values
    assert (v["max_rank"], v["min_rank"]) == (RANKS - 1, 0)
    assert v["max_bytes"] == RANKS * PERRANK_BLOCKS * MiB
    assert v["min_bytes"] == PERRANK_BLOCKS * MiB
    assert v["imbalance"] == pytest.approx(1 - 1 / RANKS)

    def posix_t(r: int) -> float:
        return sum(_counter(rep, "POSIX", f"POSIX_F_{k}_TIME", r) for k in ("READ", "WRITE",
                                                                              "META"))
    # balanced, each rank would take the mean time: the busiest rank's time above the mean
    times = [posix_t(r) for r in range(RANKS)]
    assert f.cost_s == pytest.approx(max(times) - sum(times) / RANKS, abs=1e-6)
    assert 0 < (f.cost_s or 0) < posix_t(RANKS - 1)


def test_rank_zero_reads_the_whole_input_alone() -> None:
    """Rank 0 reads a 1 GiB input in 8 MiB reads while three ranks wait in a barrier: a
    single I/O stream first (its cost: rank 0's time on the file), and a large file read once
    sequentially: a direct-I/O candidate (a tenth of that read time)."""
    rep = _report("rank0read-mpich.darshan")
    _well_ordered(rep)
    one = _find(rep, "single-io-stream")
    assert _rank(rep, "single-io-stream") == 0
    assert one.hit.values["rank"] == 0 and one.hit.values["share"] == 1.0
    assert one.hit.values["bytes"] == INPUT_BYTES
    rank0 = sum(_counter(rep, "POSIX", f"POSIX_F_{k}_TIME", 0) for k in ("READ", "META"))
    assert one.cost_s == pytest.approx(rank0, rel=1e-3)
    slurm = next(a for a in one.fix.artifacts if a.name == "slurm.sbatch").content
    assert "posix_habits.mpich /tmp/iolab-d35 rank0read" in slurm
    direct = _find(rep, "direct-io/read")
    assert direct.hit.values["bytes_read"] == INPUT_BYTES
    assert direct.hit.files[0].values["avg_request_bytes"] == RANK0_READ
    assert direct.cost_s == pytest.approx(0.1 * _counter(rep, "POSIX", "POSIX_F_READ_TIME", 0),
                                          rel=1e-3)
    assert "direct_io.c" in _snippets(direct)


def test_records_written_from_after_a_length_prefix() -> None:
    """Every record is written from 4 bytes into a malloc'ed buffer: all 8000 POSIX writes
    use memory off Darshan's 8-byte alignment (the file offsets are 4 KiB-aligned: no
    misaligned-file); the cost: a tenth of the write time (the extra copy)."""
    rep = _report("packed-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "misaligned-memory")
    v = f.hit.values
    assert v["mem_not_aligned"] == v["posix_ops"] == RANKS * PACKED_N
    assert v["mem_alignment_bytes"] == 8
    slowest_write = _rank_max(rep, "POSIX", "POSIX_F_WRITE_TIME")
    assert f.cost_s == pytest.approx(0.1 * slowest_write, rel=1e-3)
    # the 4 KiB writes themselves cost ten times more: small-requests comes first
    assert _rank(rep, "small-requests/write") < _rank(rep, "misaligned-memory")
    assert "direct_io.c" in _snippets(f)
    _absent(rep, "misaligned-file")


def test_blocking_reads_with_computation_between_them() -> None:
    """256 blocking MPI_File_read_at of 1 MiB per rank, 2 ms of work after each: overlap
    hides at most the reads' time (less than the 0.5 s of work here): the fix is the
    non-blocking twin of the calls the program makes."""
    rep = _report("blockread-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "mpiio-nonblocking")
    assert _rank(rep, "mpiio-nonblocking") == 0
    v = f.hit.values
    assert v["blocking_ops"] == v["reads"] == RANKS * BLOCK_N and v["writes"] == 0
    read_sum = _counter(rep, "MPI-IO", "MPIIO_F_READ_TIME")
    assert 0 < (f.cost_s or 0) <= read_sum
    # the reads took less than the 256 x 2 ms of work: all of their time can be hidden
    assert (f.cost_s or 0) < BLOCK_N * COMPUTE_S
    assert "MPI_File_iread_at" in f.fix.text and "nonblocking_io.c" in _snippets(f)
    assert rep.model.layers.mpiio.bytes_read.sum() == RANKS * BLOCK_N * BLOCK_S


def _alignment_cost_by_rank(tr, rows: np.ndarray, align: int = 4096) -> float:
    """A plain reference for what starting off the alignment costs, request by request: a
    request up to 1 KiB all of its time; a larger misaligned one the share of its pages that
    alignment would save: the extra page it touches, and its end pages when another rank's
    request touches them too. The slowest rank's sum."""
    ends: dict[int, set[int]] = {}
    for k in np.nonzero(rows)[0]:
        o, n = int(tr.offset[k]), int(tr.length[k])
        for page in {o // align, (o + n - 1) // align}:
            ends.setdefault(page, set()).add(int(tr.rank[k]))
    per_rank = [0.0] * RANKS
    for k in np.nonzero(rows)[0]:
        o, n, r = int(tr.offset[k]), int(tr.length[k]), int(tr.rank[k])
        t = float(tr.end[k] - tr.start[k])
        if n <= 1024:
            per_rank[r] += t
        elif o % align:
            first, last = o // align, (o + n - 1) // align
            touched = last - first + 1
            extra = touched - -(-n // align)
            shared = sum(1 for p in {first, last} if ends[p] - {r})
            per_rank[r] += t * min((extra + shared) / touched, 1.0)
    return max(per_rank)


@pytest.mark.parametrize("mode", ["fill", "nofill"])
def test_hdf5_metadata_requests_cost_their_traced_time(mode: str) -> None:
    """With DXT the cost of hdf5-metadata-alignment is what its requests cost: the metadata
    requests (up to 1 KiB) all of their traced time, well under a millisecond; the data
    writes that start off the 4 KiB alignment after the 2 KiB superblock only the pages
    alignment would save (one extra page, and the first page, which ranks 1-3's metadata
    writes share), not all of their time as the count's share claimed (7/8 of 166 ms). The
    real cost comes first: fill values (fill), OMPIO's one POSIX writer (nofill)."""
    rep = _report(f"h5{mode}-openmpi.darshan")
    f = _find(rep, "hdf5-metadata-alignment")
    v = f.hit.values
    assert v["cost_from"] == "trace"
    tr = rep.model.trace
    assert tr is not None
    i = rep.model.files.paths.index(f.hit.files[0].path)
    rows = (tr.module == 0) & (tr.file_index == i)  # the file's POSIX requests, from DXT
    assert int(rows.sum()) == v["posix_ops"]
    dur = tr.end - tr.start
    tiny = rows & (tr.length <= 1024)
    off = rows & (tr.offset % 4096 != 0)  # ext4 here: Darshan's 4 KiB file alignment
    assert int(tiny.sum()) == v["posix_ops_under_1k"] and int(off.sum()) == v["file_not_aligned"]
    slowest_tiny = max(float(dur[tiny & (tr.rank == r)].sum()) for r in range(RANKS))
    assert v["metadata_requests_time_s"] == pytest.approx(slowest_tiny, abs=1e-6)
    assert v["metadata_requests_time_s"] < 1e-3
    assert f.cost_s == pytest.approx(_alignment_cost_by_rank(tr, rows), abs=1e-6)
    slowest_off = max(float(dur[off & (tr.rank == r)].sum()) for r in range(RANKS))
    assert (f.cost_s or 0) < 0.05 * slowest_off  # the data writes' time is not its cost
    first = "fill-mode" if mode == "fill" else "single-posix-writer"
    assert _rank(rep, first) < _rank(rep, "hdf5-metadata-alignment")


def test_misaligned_file_costs_the_extra_units_of_a_lone_writer() -> None:
    """pncput-openmpi: PnetCDF's pieces start off the 4 KiB alignment, all written by OMPIO's
    one aggregator: no other rank shares their pages, so misalignment costs the extra page
    each request touches: its traced time times (pages touched - pages needed) / touched."""
    rep = _report("pncput-openmpi.darshan")
    f = _find(rep, "misaligned-file")
    tr = rep.model.trace
    assert tr is not None
    i = rep.model.files.paths.index(f.hit.files[0].path)
    mine = (tr.module == 0) & (tr.file_index == i)
    assert len(set(tr.rank[mine].tolist())) == 1  # one POSIX writer
    off = mine & (tr.offset % 4096 != 0)
    assert int(off.sum()) == f.hit.values["file_not_aligned"]
    want = 0.0
    for o, n, t0, t1 in zip(tr.offset[off], tr.length[off], tr.start[off], tr.end[off]):
        touched = (o + n - 1) // 4096 - o // 4096 + 1
        want += (t1 - t0) * (touched - -(-n // 4096)) / touched
    assert f.cost_s == pytest.approx(want, abs=1e-6)
    assert 0 < (f.cost_s or 0) < 0.5 * float((tr.end - tr.start)[off].sum())


def test_misaligned_records_sharing_pages_cost_all_their_time() -> None:
    """4 ranks pwrite 1000 records of 6000 B each, interleaved in one file: almost every
    record starts off a 4 KiB page and shares its end pages with its neighbours' records
    (other ranks): misalignment costs nearly all of their time (contention), the opposite
    of the lone writer above."""
    rep = _report("interleaved-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "misaligned-file")
    n, s = 1000, 6000
    assert f.hit.values["posix_ops"] == RANKS * n
    # record k = i * 4 + r starts at k * 6000: off the page unless k * 6000 % 4096 == 0
    assert f.hit.values["file_not_aligned"] == sum(1 for k in range(RANKS * n)
                                                   if k * s % 4096)
    tr = rep.model.trace
    assert tr is not None
    i = rep.model.files.paths.index(DATA + "shared.dat")
    rows = (tr.module == 0) & (tr.file_index == i)
    assert f.cost_s == pytest.approx(_alignment_cost_by_rank(tr, rows), abs=1e-6)
    off = rows & (tr.offset % 4096 != 0)
    dur = tr.end - tr.start
    slowest_off = max(float(dur[off & (tr.rank == r)].sum()) for r in range(RANKS))
    assert 0.9 * slowest_off <= (f.cost_s or 0) <= slowest_off + 1e-9


def test_direct_io_write_case_on_a_small_node() -> None:
    """The write case of direct-io needs more written per node than 40% of its memory: the
    per-rank files' 160 MiB on one node (DXT names it) judged for a 256 MiB node
    (--node-memory 256M), the real log standing in for a real node's gigabytes."""
    th = Thresholds()
    th.node_memory_bytes = 256 * MiB
    rep = diagnose(build_model([load_darshan_log(LOGS / "perrank-mpich.darshan")]), th)
    _well_ordered(rep)
    f = _find(rep, "direct-io/write")
    v = f.hit.values
    written = sum((r + 1) * PERRANK_BLOCKS * MiB for r in range(RANKS))
    assert (v["bytes_written_per_node"], v["nodes"], v["judged"]) == (written, 1, "measured")
    assert f.cost_s == pytest.approx(0.1 * _rank_max(rep, "POSIX", "POSIX_F_WRITE_TIME"),
                                     rel=1e-3)
    assert "direct_io.c" in _snippets(f)
    _absent(_report("perrank-mpich.darshan"), "direct-io")  # a node of 16 GiB or more: no


STEP_FILES, STEP_S = 64, 1 << 20  # stepfiles: 64 output steps of a 1 MiB file per rank


def test_a_new_file_per_rank_at_every_step_is_file_per_process() -> None:
    """At each of 64 output steps every rank writes its own new 1 MiB file: 256 files, each
    opened by one rank, from all 4 ranks (time-series output as a file per process per step).
    The cost: their metadata time on the slowest rank (create, open, close), under a second
    here (INFO); the fix: one shared file or a file per group of ranks."""
    rep = _report("stepfiles-mpich.darshan")
    _well_ordered(rep)
    f = _find(rep, "file-per-process")
    v = f.hit.values
    assert (v["per_rank_files"], v["ranks_with_own_files"], v["nprocs"], v["shared_files"]) \
        == (STEP_FILES * RANKS, RANKS, RANKS, 0)
    posix = rep.model.mods["POSIX"]
    assert int(posix.col("POSIX_BYTES_WRITTEN").sum()) == STEP_FILES * RANKS * STEP_S
    assert int(posix.col("POSIX_OPENS").sum()) == STEP_FILES * RANKS
    assert 0 < (f.cost_s or 0) <= _rank_max(rep, "POSIX", "POSIX_F_META_TIME") + 1e-9
    assert f.severity == "info"  # well under a second
    assert "collective_io.c" in _snippets(f)


BLOCKS_CALLS = 64  # blocks2nodes: 64 collective writes of 1 MiB per rank, 8 ranks on 2 nodes


def test_collective_exchange_on_two_nodes_is_no_late_rank() -> None:
    """8 MPICH ranks on two (emulated) nodes, 4 a node, write interleaved 1 MiB blocks with 64
    collective calls each: every rank spends about 4 s in MPI-IO, the aggregators' POSIX
    writes 0.4 s. The time is the two-phase exchange, not a late rank, and the pieces are
    large: the first fix is collective buffering off (measured on the same two nodes: 4.4 s
    -> 1.0 s; cb_config_list *:2 gave 4.1 s), aggregators per node come second."""
    rep = _report("blocks2nodes-mpich.darshan")
    _well_ordered(rep)
    assert (rep.model.job.nprocs, rep.model.job.nodes) == (2 * RANKS, 2)
    skew = _find(rep, "mpiio-time-skew")
    assert _rank(rep, "mpiio-time-skew") == 0
    v = skew.hit.values
    assert v["mpiio_fastest_s"] >= 0.5 * v["mpiio_slowest_s"] > 0  # every rank alike
    assert skew.hit.data["together"] and "no late rank" in skew.hit.summary
    assert skew.hit.data["piece"] == MiB
    assert 0 < (skew.cost_s or 0) <= v["mpiio_slowest_s"] - v["posix_slowest_s"] + 1e-6
    hints = _hints(skew)
    assert "romio_cb_write disable" in hints and "late rank" not in skew.fix.text
    ompio = next(a for a in skew.fix.artifacts if a.name.endswith(".ompio.env")).content
    assert "OMPI_MCA_fcoll=individual" in ompio
    agg = _find(rep, "aggregators-per-node")
    assert _rank(rep, "aggregators-per-node") == 1
    a = agg.hit.values
    assert (a["nodes"], a["ranks_per_node"], a["collective_ops"]) == (2, RANKS,
                                                                     2 * RANKS * BLOCKS_CALLS)


def test_a_late_rank_is_still_named_as_such() -> None:
    """late-openmpi: rank 0 sleeps 2 s before the one collective write; the others wait for
    it, so the fastest rank (rank 0) spent far less than the slowest in MPI-IO."""
    rep = _report("late-openmpi.darshan")
    skew = _find(rep, "mpiio-time-skew")
    assert not skew.hit.data["together"] and "late rank" in skew.hit.summary
    assert skew.hit.values["mpiio_fastest_s"] < 0.5 * skew.hit.values["mpiio_slowest_s"]
