"""One example per rule for docs/rules.md: where it fired, the evidence, its cost and fix.

Each example is taken from a real run: a log of the corpus (``darshan-logs/``,
``darshan-generated/``: real programs under Darshan), a test program compiled and run under
``iolab profile`` by the tests (``tests/diagnose/progs/``), or, where neither has the
pattern, a log a test writes with libdarshan-util (marked "written log", with what a real
example needs that this 2-core machine without Lustre lacks). Real Darshan 3.5 runs of the
test programs are kept in ``tests/diagnose/darshan35/``. The numbers are the ones ``iolab
diagnose`` printed; the tests that produce them keep them true.
"""

from __future__ import annotations

_G = "darshan-generated/"
_D35 = "tests/diagnose/darshan35/"  # real Darshan 3.5 runs of tests/diagnose/progs
_H = "progs/posix_habits.c"
_MPIIO_COLL = _G + "mpiio_4ranks_strided4K_coll.darshan (4 ranks, 1.55 s)"
_MPIIO_INDEP = _G + "mpiio_4ranks_strided4K_indep.darshan (4 ranks, 0.40 s)"
_DLIO = ("darshan-logs/dlio_logs/snyder_python3_id3116902-2110483_...darshan (1 process of "
         "a DLIO training job, 135 s)")

EXAMPLES: dict[str, str] = {
    "io-bound": (
        f"{_MPIIO_COLL}: \"I/O took 99.4% of the run (1.54 s of 1.55 s, slowest rank)\"; "
        "cost 1.5 s (99.4%); fix: the findings listed with it (tiny-collective-calls first), "
        "then core specialisation and affinity (`slurm.sbatch`)."),
    "metadata-time": (
        f"{_D35}reopen-mpich.darshan (Darshan 3.5, {_H}, 4 MPICH ranks, 1.08 s: each rank "
        "fopen(\"a\")s its log, appends one line and fcloses it, 50,000 times): \"metadata "
        "(open/stat/close/sync) took 0.85 s on the busiest rank, 3.14 s summed over ranks "
        "(84.8% of the I/O time)\"; cost 845.7 ms (78.5%, INFO: under a second; first); "
        "fix: open each file once, fewer files per directory (`fewer_opens.c/.f90/.py`)."),
    "stdio-share": (
        f"{_G}stdio_fwrite_2M_x_512B.darshan (1 process, 1.80 s): \"STDIO moved 976.6 MiB, "
        "100.0% of the application's bytes\"; cost 1.6 s (88.5%); fix: bulk data through "
        "POSIX/MPI-IO/HDF5 in large requests, or large stream buffers (`buffering.env`)."),
    "read-write-balance": (
        f"{_G}hdf5_4ranks_collective_hyperslab.darshan: \"write-intensive: read 0 B, wrote "
        "256.0 MiB\"; information only (no cost): tune the writes first."),
    "formatted-output": (
        f"{_D35}csv-mpich.darshan (Darshan 3.5, {_H}, rank 0 fprintf's 200,000 lines of "
        "results.csv, 0.30 s): \"1 file(s) written with 200000 small STDIO writes "
        "(average 24 B): formatted text output\"; cost 255.0 ms (84.5%, its STDIO write "
        "time; small-serial-io names the same seconds); fix: binary output "
        "(`binary_output.c/.f90/.py`)."),
    "small-requests": (
        f"{_MPIIO_COLL}: \"16384 of 16384 POSIX writes (100.0%) are below 128 KiB\"; cost "
        "179.5 ms (11.6%); fix (the calls are already collective, so not \"use collective "
        "I/O\"): make each collective call carry more data through a file view."),
    "small-serial-io": (
        f"{_G}posix_write_1M_x_64B.darshan (1 process, 1.11 s): \"1000000 small sequential "
        "writes (average 64 B) from one process\"; cost 920.7 ms (82.8%); fix: run under "
        "`iolab buffer -- ./posix_write ...` or IOBUF (`buffering.env`), or setvbuf."),
    "misaligned-file": (
        f"{_D35}pncput-openmpi.darshan (Darshan 3.5, progs/pnc_steps.c, PnetCDF put_all of "
        "1.9 KiB pieces, 4 Open MPI ranks, 2.37 s): \"1500 of 1501 POSIX requests (99.9%) "
        "start off the 4096-byte file alignment\"; cost 5.2 ms (0.2%: OMPIO's one "
        "aggregator writes them alone, so each costs the extra page it touches, from DXT; "
        "the same seconds as small-requests/write; interleaved-mpich.darshan, 4 ranks' "
        "6000 B records sharing pages: 52.3 ms, nearly all of their time); "
        "fix: start requests on 4 KiB boundaries (striping_unit for MPI-IO files, pad "
        "records and per-rank blocks)."),
    "misaligned-memory": (
        f"{_D35}packed-mpich.darshan (Darshan 3.5, {_H}, 4 MPICH ranks each writing 2000 "
        "4 KiB records from 4 bytes into a malloc'ed buffer, after a length prefix): "
        "\"8000 of 8000 POSIX requests (100.0%) use buffers not aligned to 8 bytes\"; cost "
        "3.4 ms (a tenth of the write time, times the share; after small-requests, whose "
        "4 KiB writes cost ten times more); fix: posix_memalign'ed buffers (`direct_io.c`)."),
    "redundant-traffic": (
        f"{_DLIO}: \"8.4 GiB of 10.5 GiB read (80.5%) moved the same bytes again\"; cost "
        "4.0 s (2.9%, WARN: the job is not I/O bound); fix (one process: nobody to broadcast "
        "to): keep the data in memory, or in a node-local cache when it does not fit."),
    "random-access": (
        f"{_G}posix_mixed_rw_random_reads.darshan: \"about 9920 of 12000 POSIX reads (82.7%) "
        "are random\"; cost 11.7 ms (17.1%, INFO: under a second); fix: sort or batch the "
        "offsets, read larger blocks (with DXT the shares are measured, not estimated)."),
    "file-per-process": (
        f"{_D35}stepfiles-mpich.darshan (4 ranks, each writing its own new 1 MiB file at every "
        "one of 64 output steps): \"256 application files each opened by one rank, from 4 of 4 "
        "ranks: file per process at scale\"; cost 17.6 ms (22.5% of a 0.08 s run: their "
        "create/open/close time, INFO under a second); fix: one shared file with collective "
        "MPI-IO or subset aggregation (`collective_io.c`). The same rule on a written "
        "512-rank log (tests/diagnose/test_written_logs.py): 512 files from 512 of 512 ranks."),
    "files-per-directory": (
        "darshan-logs/partial_data_stdio/partial_data_stdio.darshan: \"1 directory with at "
        "least 1000 files; the largest holds 1022\"; cost 36.2 ms (0.2%); fix: spread files "
        "over sub-directories (on Lustre also a one-stripe directory for small files; this "
        "one is in /home, so no stripe advice)."),
    "frequent-open-close": (
        f"{_D35}reopen-mpich.darshan (the same run as metadata-time's): \"200000 opens on 4 "
        "file(s), up to 50000 per rank on one file\"; cost 845.7 ms (78.5%, the metadata "
        "time of those files: the same seconds as metadata-time); fix: open once, keep the "
        "handle (`fewer_opens.c`)."),
    "small-shared-input": (
        f"{_D35}config-mpich.darshan (Darshan 3.5, {_H}, 4 MPICH ranks each fread the same "
        "2 KiB namelist): \"1 small input file(s) read by up to 4 ranks each (8 KiB read in "
        "total)\" (config.nml); cost 18 us (the slowest rank's time on it, INFO); fix: "
        "read on one rank and MPI_Bcast (`read_once_bcast.c`)."),
    "shared-file-stragglers": (
        "darshan-logs/apmpi_apxc/mpi-io-test.darshan (4 ranks, 2.0 s): \"1 shared file(s) "
        "with a straggler rank; worst: rank 1 took 1.02 s, rank 3 0.25 s (75.1% apart)\"; "
        "cost 763.6 ms (38.2%); fix: every rank already moves 32 MiB, so not \"equal "
        "shares\": the slow rank waited on the file system; stripe-aligned ranges or "
        "collective calls."),
    "per-rank-imbalance": (
        f"{_D35}perrank-mpich.darshan (Darshan 3.5, {_H}, 4 MPICH ranks, rank r writes "
        "(r + 1) x 16 MiB to its own file, then fsync): \"bytes in per-rank files differ by "
        "75.0% between ranks: rank 3 moved 64 MiB, rank 0 16 MiB\"; cost 27.1 ms (18.6%, "
        "the busiest rank's time above the ranks' mean); fix: balance the decomposition "
        "or let a few aggregators write for all."),
    "read-modify-write": (
        "test program tests/diagnose/progs/mpi_patterns.c (4 ranks, MPICH's ROMIO, "
        "collective writes with holes, under `iolab profile`): \"64 POSIX reads (28 MiB) inside 1 "
        "file(s) the program only writes through MPI-IO (collective writes)\"; cost 7.8 ms; "
        "fix: contiguous, stripe-aligned collective blocks, `romio_ds_write disable` "
        "(`romio_hints_no_rmw.txt/.env`)."),
    "write-amplification": (
        "test program tests/diagnose/progs/mpi_patterns.c (4 ranks, MPICH's ROMIO, "
        "independent strided writes with data sieving, under `iolab profile`): \"64.0 MiB "
        "reached POSIX for 16 MiB written through MPI-IO (4.00x)\"; cost 8.4 ms (the extra "
        "share of the POSIX write time); fix: `romio_ds_write disable` "
        "(`romio_hints_no_sieving.txt/.env`)."),
    "single-posix-writer": (
        f"{_G}hdf5_4ranks_collective_hyperslab.darshan: \"one rank wrote 100% of the POSIX "
        "bytes of /tmp/dtests/h5_par.h5 while 4 ranks shared its MPI-IO writes evenly\"; "
        "cost 114.7 ms (36.6%); fix: the cause named (Open MPI's OMPIO, which ran it, "
        "picked one aggregator), 4 writers as its MCA parameter "
        "(`OMPI_MCA_io_ompio_num_aggregators=4`), or `cb_nodes 4` with ROMIO."),
    "mpiio-time-skew": (
        "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_...darshan (32 ranks, 14 s): "
        "\"the slowest rank spent 9.4 s in MPI-IO calls on .../test.out but the slowest "
        "POSIX rank only 2.7 s: the independent calls wait\"; cost 6.7 s (47.9%, HIGH, "
        "first); fix: collective calls, or a barrier to find a late rank; not data sieving's "
        "locks, since POSIX moved exactly the MPI-IO bytes (no sieving). Collective calls "
        f"with no late rank: {_D35}blocks2nodes-mpich.darshan (8 ranks on 2 nodes, every rank "
        "about 4.1 s in MPI-IO, POSIX 0.42 s): the exchange itself; 1 MiB pieces, so "
        "`romio_cb_write disable` (measured there: 4.4 s -> 1.0 s)."),
    "tiny-collective-calls": (
        f"{_MPIIO_COLL}: \"65536 collective MPI-IO calls of 4 KiB on average on 1 file(s)\"; "
        "cost 1.4 s (87.8%, HIGH, first); fix: one collective call through a file view, or "
        "gather in memory first (`collective_io.c`)."),
    "slow-close": (
        f"{_D35}h5close-openmpi.darshan (Darshan 3.5, progs/h5_many_groups.c, 40,000 "
        "HDF5 groups in a 64 MiB metadata cache, 4 Open MPI ranks, 6.68 s): \"closing "
        "/tmp/iolab-d35/many.h5 took 4.2 s (HDF5 close)\"; cost 4.2 s (63.2%, HIGH, "
        "first); fix: collective metadata writes, larger aligned metadata blocks, no "
        "H5Fflush in loops (`hdf5_collective_metadata.c`)."),
    "tiny-file-slow": (
        "test program tests/diagnose/progs/flush_log.c (1 process, a progress line flushed "
        "and synced after each step): \"progress.log holds 28.2 KiB but cost one rank 8.8 s "
        "(2000 operations, 1 opens, 4000 syncs/flushes)\"; cost 8.8 s (99.6%, HIGH); fix: "
        "drop the per-line fflush/fsync, keep the file open."),
    "stripe-shared-file": (
        "written log (tests/diagnose/test_cross_layer_rules.py, 512 ranks on 16 nodes, an "
        "8 GiB checkpoint on one OST; written: needs Lustre): \"1 file(s) of at least 1 GiB "
        "written by 8+ ranks sit on one OST\"; cost 90.0 s (45%, HIGH); fix: "
        "`stripe_count_8.lfs.sh`, 8 stripes (8 by size, NERSC's 1-10 GB row; 16 aggregators "
        "do not lower it; above the 1 OST the log proves, the script takes the smaller of 8 "
        "and what `lfs df` lists)."),
    "stripe-huge-file": (
        "written log (tests/diagnose/test_stripe_count.py; written: needs Lustre and a 100 GB "
        "file): a 200 GB file on one OST, \"1 file(s) larger than 100 GB on a single OST\"; "
        "cost 60.0 s (10%); fix: `stripe_count_72.lfs.sh` (72 by size, NERSC's 100-1000 GB "
        "row, whatever the writers: KAUST, such files must be striped)."),
    "stripe-small-files": (
        f"{_DLIO}: \"14 file(s) smaller than 1 GiB, used by one process, striped over "
        "several OSTs\" (training inputs of 126-225 MB on 160 OSTs); cost 1.5 s (1.1%: "
        "their open/close/stat time, where extra stripes cost); fix: one stripe "
        "(`stripe_count_1.lfs.sh`, KAUST: small files on single OSTs), or create the data "
        "set in a one-stripe directory."),
    "stripe-size-mismatch": (
        "written log (tests/diagnose/test_rules_synthetic.py, 64 ranks; written: needs "
        "Lustre): \"1 file(s) accessed in pieces that do not divide into the stripe: e.g. "
        "1.5 MiB requests on 1 MiB stripes\"; fix: a 1.5 MiB stripe keeping the file's 4 "
        "stripes (`stripe_size.lfs.sh`), striping_unit for MPI-IO."),
    "direct-io": (
        f"{_D35}rank0read-mpich.darshan (Darshan 3.5, {_H}, rank 0 reads a 1 GiB input in "
        "8 MiB reads): \"1 large file(s) read once, sequentially, in large requests "
        "(1 GiB)\"; cost 62.6 ms (9.5%, a tenth of the read time: INFO); fix: "
        "O_DIRECT/MPIO_DIRECT_*/H5Pset_fapl_direct to measure against buffered I/O "
        "(`direct_io.c`). The write case: perrank-mpich.darshan diagnosed with "
        "`--node-memory 256M` (a small node standing in for more data than a real node's "
        "memory): \"160 MiB written per node, more than 40.0% of the 256 MiB node "
        "memory\"; cost 12.3 ms (a tenth of the write time)."),
    "oversubscribed-node": (
        "test program tests/tune/progs/h5_slab.c strided-write under `iolab profile --np 4 "
        "--mpi mpich` on this "
        "2-CPU machine (tests/diagnose/test_oversubscribed_advice.py): \"4 ranks ran on 2 "
        "CPUs of vm: ranks take turns on the cores, and every collective call waits for the "
        "descheduled ones\"; cost unknown from the counters (its transfers are independent: "
        "no collective wait to count; it never owns seconds: a late rank leaves the same "
        "trace); fix: at most 2 ranks a node, then measure the advice "
        "again - its collective-buffering finding (collective transfers) is an experiment "
        "here, saying why. A Darshan log records no CPUs: not judged, --cores-per-node."),
    "single-io-stream": (
        f"{_D35}rank0read-mpich.darshan (the same run, 4 MPICH ranks, 0.66 s; three ranks "
        "wait in a barrier): \"rank 0 read 100.0% of the job's 1 GiB ... in 626.5 ms of I/O "
        "while the 3 other ranks moved almost nothing: they wait for it\"; cost 469.9 ms "
        "(71.4%, rank 0's I/O time beyond an even share; first); fix: every rank reads its "
        "own part (MPI_File_read_at_all, parallel HDF5, PnetCDF), `lone_reader.c`. A real "
        "64-rank MPICH run of progs/pathologies.c gather (rank 0 gathers 64 KiB from every "
        "rank and writes each 4 MiB step alone; test_real_pathologies_64.py) and a written "
        "65,536-rank Theta log (rank 0 writes 512 GiB in 1,502 s; test_large_jobs.py: 25.0 "
        "min, 75.1% of the run, HIGH and first, with a stripe count for the file) show the "
        "write case."),
    "io-stream-per-node": (
        "written log (tests/diagnose/test_nodes_and_traces.py, 16 ranks on 2 nodes, ranks 0 "
        "and 8 each write 2 GiB to their own file, the others 1 MiB; written: needs the "
        "rank-to-node map of a multi-node run and more than 1 GiB moved): \"2 of 2 node(s) do "
        "their I/O through one process: e.g. on nodeA rank 0 moved 99.7% of the node's "
        "2.0 GiB (8 rank(s) on the node)\"; may save up to 1.0 s (the busiest of those "
        "processes' I/O time); fix: several processes per node with collective MPI-IO or "
        "subset aggregation, and core binding (`slurm.sbatch`)."),
    "mpiio-independent": (
        f"{_MPIIO_INDEP}: \"65536 of 65536 MPI-IO writes (100.0%) on shared files are "
        "independent, averaging 4 KiB\"; cost 369.8 ms (93.4%); fix: the collective calls "
        "(an experiment, to be proven with iolab tune --from-log), with ROMIO's hints and the "
        "switch to ROMIO in one `romio_hints_collective.env`, since Open MPI's OMPIO ran it "
        "and has no parameter for romio_cb_write."),
    "collective-buffering": (
        f"{_MPIIO_INDEP}: \"65536 small MPI-IO writes on 1 shared file(s) reach POSIX "
        "unmerged: 4 KiB per MPI-IO call, 4 KiB per POSIX call\"; cost 369.8 ms; fix: "
        "collective buffering after switching to collective calls (never restating ROMIO's "
        "defaults such as cb_buffer_size 16777216)."),
    "mpiio-nonblocking": (
        f"{_D35}blockread-mpich.darshan (Darshan 3.5, {_H}, 4 MPICH ranks each reading its "
        "quarter of a 1 GiB file in 256 blocking 1 MiB MPI_File_read_at calls, 2 ms of "
        "work after each, 0.78 s): \"1024 blocking MPI-IO calls and no non-blocking ones "
        "while I/O takes 24.4% of the run\"; cost 83.6 ms (10.7%: the smaller of the reads' "
        "time and the work to hide them behind; first); fix: MPI_File_iread_at (the twin "
        "of the calls the job makes) before the computation, MPI_Wait after. Not for tiny "
        "calls (the corpus's 4 KiB and 1-byte calls): overlap hides none of their per-call "
        "cost."),
    "aggregators-per-node": (
        f"{_D35}blocks2nodes-mpich.darshan (8 MPICH ranks on the two emulated nodes of "
        "tests/slurm_twonode.sh, 64 collective 1 MiB writes each): \"512 collective MPI-IO "
        "calls with 4 ranks per node on 2 node(s), aggregators: the default\"; cost 1.9 s "
        "(HIGH, second); fix: `cb_config_list *:2`, `cb_nodes 4` (CSC: 2.86x on BTIO), never "
        "for a single-node job. Measured on those two nodes it gave 4.1 s against 4.3 s: "
        "the first finding there, the exchange itself (mpiio-time-skew, no late rank), is "
        "what collective buffering off fixes (1.0 s)."),
    "hdf5-metadata-alignment": (
        f"{_G}hdf5_4ranks_collective_hyperslab.darshan: \"HDF5 over MPI-IO: 7 of 23 POSIX "
        "requests under 1 KiB (metadata) and 21 misaligned\"; cost 139.6 ms (44.6%); fix: "
        "collective metadata and H5Pset_alignment (`hdf5_collective_metadata.c`); not "
        "collective data writes, which the job already makes."),
    "fill-mode": (
        "test program tests/diagnose/progs/h5_fill.c (4 ranks, HDF5 dataset with fill "
        "values, under `iolab profile`): \"32.0 MiB written for 16 MiB of datasets (fill "
        "values written first)\"; cost 23.0 ms; fix: H5Pset_fill_time(H5D_FILL_TIME_NEVER) "
        "or ncmpi_set_fill(NC_NOFILL) (`fill_mode.c`)."),
}
