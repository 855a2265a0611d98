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
    """Open MPI's OMPIO ignores ROMIO hints: every fix with a ROMIO hints file says so, and
    carries the switch to ROMIO in the .env that names the file; MCA parameters, when OMPIO
    has some, in an .ompio.env that exports them (was: `--mca io romio321` in the text, the
    4.x name only, and .ompio.env files of comments alone)."""
    assert mpi_library(rep.model).io == "ompio"
    with_hints = [f for f in rep.findings
                  if any(a.kind == "romio-hints" for a in f.fix.artifacts)]
    assert with_hints
    for f in with_hints:
        assert "OMPI_MCA_io=^ompio" in f.fix.text
        assert any(a.kind == "env" and "export OMPI_MCA_io=^ompio" in a.content
                   for a in f.fix.artifacts)
        assert all("export OMPI_MCA_" in a.content for a in f.fix.artifacts
                   if a.kind == "ompio-mca")


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
    # romio_ds_write does not act inside collective buffering: not offered (not on Lustre)
    assert not any(a.kind == "romio-hints" for a in f.fix.artifacts)
    assert "romio_ds_write does not act inside collective" in f.fix.text
    # one node: ROMIO's one aggregator wrote every POSIX byte of the balanced MPI-IO file
    one = _find(rep, "single-posix-writer")
    assert one.hit.values["posix_top_rank_share"] == 1.0
    assert one.hit.values["mpiio_top_rank_share"] == 1 / RANKS
    assert "cb_nodes 4" in _hints(one)
    # the aggregator writes the domains it read: its writes cost more than its reads
    assert (one.gross_s or 0) > (f.gross_s or 0)
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
    (<file>.locktest.<rank>, /tmp/ompi.*) and ROMIO hints come with the switch to ROMIO."""
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
    assert first.gross_s == pytest.approx(float(L.library_close_s[i]))
    # owned: the close's time within the job's I/O time (the library layer's pool included)
    assert Thresholds().slow_close_s <= first.cost_s <= rep.model.metrics.io_time_s + 1e-9
    assert first.cost_s >= 0.95 * first.gross_s
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
    assert (f.cost_s or 0) >= 0.95 * (f.gross_s or 0)
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
    for f in later:  # all of its seconds taken, or only the rest counted
        assert (f"the same time as {f.same_time_as[0]}" in f.cost_text()
                or f"beyond the time of {f.same_time_as[0]}" in f.cost_text())
        if (f.cost_s or 0) <= 0:
            assert not any(t.startswith(f.rule.id) for t in rep.summary.top_fixes)
    from iolab.diagnose.render_html import render_html
    from iolab.diagnose.report import to_dict

    assert later[0].cost_text() in render_html([rep]).replace("&#x27;", "'")
    assert any(d["same_time_as"] for d in to_dict(rep)["findings"])
    if cb is not None:  # the same POSIX writes: one of the two names the other
        assert ("small-requests/write" in cb.same_time_as
                or "collective-buffering/write" in small.same_time_as)


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.darshan")))
def test_no_two_findings_claim_the_same_seconds(name: str) -> None:
    """Across every log, every second counted once: what the findings own of a file's read,
    write or metadata time is at most that time; together they own at most the slowest
    rank's I/O time; no net cost exceeds its gross; a finding that lost seconds to another
    names it; an experiment owns nothing; a job under 10% I/O has no HIGH."""
    from iolab.diagnose.attribution import time_pools

    rep = _report(name)
    pools = time_pools(rep.model).seconds
    owned: dict[tuple[str, str], float] = {}
    total = 0.0
    for f in rep.findings:
        if f.rule.experiment:
            assert f.cost_s is None and not f.owned
            continue
        if f.net_s is None:
            continue
        assert f.net_s <= (f.gross_s or 0.0) + 1e-9
        assert f.net_s == pytest.approx(sum(s for _, _, s in f.owned), abs=1e-9)
        if f.net_s < (f.gross_s or 0.0) * 0.99 and f.same_time_as:
            assert all(o != _key(f) for o in f.same_time_as)
        for path, op, sec in f.owned:
            owned[(path, op)] = owned.get((path, op), 0.0) + sec
        total += f.net_s
    for key, sec in owned.items():
        assert sec <= pools.get(key, float("inf")) + 1e-6, (key, sec, pools.get(key))
    assert total <= rep.model.metrics.io_time_s + 1e-6
    if rep.model.metrics.io_fraction < 0.10:
        assert all(f.severity != "high" for f in rep.findings)


def test_small_independent_writes_one_node() -> None:
    """The same 256 B pieces with independent calls: use collective I/O (with its hint);
    collective buffering on one node without per-node aggregators, and no cb_buffer_size
    (ROMIO's default never restated, no stripe known)."""
    rep = _report("smallindep-mpich.darshan")
    _well_ordered(rep)
    ind = _find(rep, "mpiio-independent/write")
    assert ind.hit.values["indep_writes"] == RANKS * SMALL_CALLS
    assert ind.hit.values["coll_writes"] == 0
    # the calls are independent and one piece each: no hint can merge them (collective
    # buffering acts inside collective calls, sieving inside one noncontiguous call), so no
    # hints file; the fix is the collective calls themselves, as code
    assert not any(a.kind == "romio-hints" for a in ind.fix.artifacts)
    assert [(c.knob, c.value, c.experiment) for c in ind.fix.code] == [
        ("collective", "true", True)]
    # an experiment (collective or not is measured, not assumed): an estimate, owning nothing
    assert ind.rule.experiment and ind.cost_s is None
    assert 0 < (ind.estimate_s or 0) <= _run_time(rep)
    cb = _find(rep, "collective-buffering/write")
    assert cb.hit.values["mpiio_avg_bytes"] == SMALL_S == cb.hit.values["posix_avg_bytes"]
    # the calls are independent: no hints file for collective buffering (it cannot act on
    # them); the switch to collective calls first, one node: no aggregators per node
    assert not any(a.kind == "romio-hints" for a in cb.fix.artifacts)
    assert "independent calls" in cb.fix.text and "romio_cb_write enable" in cb.fix.text
    assert "cb_config_list" not in cb.fix.text and "cb_buffer_size" not in cb.fix.text
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
