"""Known answers from real programs run here under the real Darshan 3.5.0 runtime (issue 8):
the everyday habits of MPI programs (progs/posix_habits.c under MPICH, 4 ranks, DXT on) and a
collective job on the two emulated nodes of tests/slurm_twonode.sh (progs/mpi_patterns.c
blocks). How each log was made: darshan35/README.md; the helpers and the other programs'
logs: test_darshan35_logs.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_darshan35_logs import (
    LOGS,
    RANKS,
    MiB,
    _absent,
    _find,
    _hints,
    _rank,
    _report,
    _run_time,
    _well_ordered,
)

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import Report, diagnose
from iolab.diagnose.rules.base import Finding
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")


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
    # the rule counts the busiest rank's metadata time; what it owns net is what the
    # metadata-time finding (the same seconds) did not already take
    assert opens.gross_s == pytest.approx(meta_max, rel=1e-6)
    assert opens.cost_s is not None and opens.cost_s < opens.gross_s
    assert opens.same_time_as == ["metadata-time"]
    for f in (md, opens):
        assert "fewer_opens.c" in _snippets(f)
    text = _find(rep, "formatted-output")
    assert text.hit.values["stdio_writes"] == RANKS * REOPEN_STEPS
    assert text.same_time_as == []  # write time, not the metadata time above
    assert text.gross_s == pytest.approx(_rank_max(rep, "STDIO", "STDIO_F_WRITE_TIME"))
    # the busiest rank's metadata and the busiest rank's writes together exceed the slowest
    # rank's I/O time: what is left of it, beside the metadata time (never counted twice)
    assert md.cost_s + text.cost_s <= rep.model.metrics.io_time_s + 1e-9
    assert text.cost_s == pytest.approx(text.gross_s) or text.beside == ["metadata-time"]
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
    single I/O stream first (its cost: rank 0's time on the file beyond an even share, what
    the three waiting ranks lose; was: an experiment owning no time), and a large file read
    once sequentially: a direct-I/O candidate (a tenth of that read time)."""
    rep = _report("rank0read-mpich.darshan")
    _well_ordered(rep)
    one = _find(rep, "single-io-stream")
    assert _rank(rep, "single-io-stream") == 0
    assert one.hit.values["rank"] == 0 and one.hit.values["share"] == 1.0
    assert one.hit.values["bytes"] == INPUT_BYTES
    rank0 = sum(_counter(rep, "POSIX", f"POSIX_F_{k}_TIME", 0) for k in ("READ", "META"))
    assert not one.rule.experiment and one.hit.values["bytes_read"] == INPUT_BYTES
    assert one.cost_s == pytest.approx(rank0 * (1 - 1 / RANKS), rel=1e-3)  # waste it owns
    assert "reads its own part" in one.fix.text and "MPI_File_read_at_all" in one.fix.text
    assert "lone_reader.c" in {a.name for a in one.fix.artifacts}  # #27: read code
    direct = _find(rep, "direct-io/read")
    assert direct.hit.values["bytes_read"] == INPUT_BYTES
    assert direct.hit.files[0].values["avg_request_bytes"] == RANK0_READ
    assert direct.estimate_s == pytest.approx(0.1 * _counter(rep, "POSIX", "POSIX_F_READ_TIME", 0),
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
    # no counter measures the extra copy: no cost claimed (was: a tenth of the write time)
    assert f.cost_s is None and f.severity == "info"
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
    assert 0 < (f.estimate_s or 0) <= read_sum
    # the reads took less than the 256 x 2 ms of work: all of their time can be hidden
    assert (f.cost_s or 0) < BLOCK_N * COMPUTE_S
    # a read-only job gets the read twin (was: nonblocking_io.c, MPI_File_iwrite_at_all)
    assert "MPI_File_iread_at" in f.fix.text and "nonblocking_io_read.c" in _snippets(f)
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
    assert f.gross_s == pytest.approx(_alignment_cost_by_rank(tr, rows), abs=1e-6)
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
    assert f.gross_s == pytest.approx(want, abs=1e-6)
    assert 0 < (f.gross_s or 0) < 0.5 * float((tr.end - tr.start)[off].sum())


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
    assert f.gross_s == pytest.approx(_alignment_cost_by_rank(tr, rows), abs=1e-6)
    off = rows & (tr.offset % 4096 != 0)
    dur = tr.end - tr.start
    slowest_off = max(float(dur[off & (tr.rank == r)].sum()) for r in range(RANKS))
    assert 0.9 * slowest_off <= (f.gross_s or 0) <= slowest_off + 1e-9
    # the same writes are the small requests' symptom too: counted once
    small = _find(rep, "small-requests/write")
    assert (f.cost_s or 0) + (small.cost_s or 0) == pytest.approx(
        max(f.gross_s or 0, small.gross_s or 0), rel=1e-6)


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
    assert f.estimate_s == pytest.approx(0.1 * _rank_max(rep, "POSIX", "POSIX_F_WRITE_TIME"),
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
