#!/bin/bash
# Remake the Darshan 3.5 logs of this folder (see README.md): compile the programs of
# ../progs and run each scenario under Darshan's runtime with DXT tracing on.
#
#   DARSHAN_OPENMPI=<prefix of darshan-runtime built with mpicc.openmpi>
#   DARSHAN_MPICH=<prefix of darshan-runtime built with mpicc.mpich>
#   tests/diagnose/darshan35/make_logs.sh [scenario...]
#
# Darshan itself is not built here (build 3.5.0 yourself: --with-log-path-by-env=DARSHAN_LOGDIR
# --with-jobid-env=NONE --with-hdf5=<parallel HDF5 of that MPI>). Data files go to
# /tmp/iolab-d35 (a fixed path: the tests read the file names recorded in the logs).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PROGS=$HERE/../progs
OMPI=${DARSHAN_OPENMPI:?set DARSHAN_OPENMPI to the Darshan runtime prefix for Open MPI}
MPICH=${DARSHAN_MPICH:?set DARSHAN_MPICH to the Darshan runtime prefix for MPICH}
RUN=/tmp/iolab-d35
BIN=$RUN/bin
mkdir -p "$BIN"
H5INC=/usr/include/hdf5/openmpi
H5LIB=/usr/lib/x86_64-linux-gnu/hdf5/openmpi

build() {
    mpicc.mpich -O2 -Wall -o "$BIN/mpi_patterns.mpich" "$PROGS/mpi_patterns.c"
    mpicc.openmpi -O2 -Wall -o "$BIN/mpi_patterns.openmpi" "$PROGS/mpi_patterns.c"
    mpicc.mpich -O2 -Wall -o "$BIN/mpi_small_calls.mpich" "$PROGS/mpi_small_calls.c"
    mpicc.openmpi -O2 -I"$H5INC" -o "$BIN/h5_fill" "$PROGS/h5_fill.c" -L"$H5LIB" -lhdf5
    mpicc.openmpi -O2 -Wall -o "$BIN/pnc_steps" "$PROGS/pnc_steps.c" -lpnetcdf
    mpicc.openmpi -O2 -Wall -I"$H5INC" -o "$BIN/h5_many_groups" "$PROGS/h5_many_groups.c" \
        -L"$H5LIB" -lhdf5
    cc -O2 -Wall -o "$BIN/flush_log" "$PROGS/flush_log.c"
    mpicc.mpich -O2 -Wall -o "$BIN/posix_habits.mpich" "$PROGS/posix_habits.c"
}

# mpich LOG [VAR=value...] -- PROGRAM ARGS: 4 ranks, MPICH's hydra (forwards the environment)
mpich() {
    local log=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    rm -f "$HERE/$log"
    env "${envs[@]}" DXT_ENABLE_IO_TRACE=1 DARSHAN_LOGFILE="$HERE/$log" \
        LD_PRELOAD="$MPICH/lib/libdarshan.so" mpiexec.mpich -n 4 "$@"
}

# openmpi LOG -- PROGRAM ARGS: 4 ranks, Open MPI's mpirun (oversubscribed on small machines);
# DXT=0 in the environment: no DXT trace (a log that would be too large with it)
openmpi() {
    local log=$1; shift 2
    rm -f "$HERE/$log"
    local dxt=()
    [ "${DXT:-1}" = 0 ] || dxt=(-x DXT_ENABLE_IO_TRACE=1)
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun.openmpi -np 4 --oversubscribe "${dxt[@]}" \
        -x DARSHAN_LOGFILE="$HERE/$log" -x LD_PRELOAD="$OMPI/lib/libdarshan.so" "$@"
}

scenario() {
    local d=$RUN
    case $1 in
    holes-mpich)  # ROMIO collective writes with holes, cb forced on; the second run's file exists
        echo "romio_cb_write enable" > "$RUN/romio_hints"
        rm -f "$d/holes.dat"
        mpich holes-mpich-new.darshan ROMIO_HINTS="$RUN/romio_hints" -- \
            "$BIN/mpi_patterns.mpich" "$d/holes.dat" holes 64 65536
        mpich holes-mpich-old.darshan ROMIO_HINTS="$RUN/romio_hints" -- \
            "$BIN/mpi_patterns.mpich" "$d/holes.dat" holes 64 65536 ;;
    holes-openmpi)  # the same program under Open MPI's OMPIO (ROMIO hints do not apply)
        rm -f "$d/holes-ompio.dat"
        openmpi holes-openmpi.darshan -- "$BIN/mpi_patterns.openmpi" "$d/holes-ompio.dat" \
            holes 64 65536 ;;
    late-openmpi)  # rank 0 sleeps 2 s before one collective write
        rm -f "$d/late.dat"
        openmpi late-openmpi.darshan -- "$BIN/mpi_patterns.openmpi" "$d/late.dat" late 2000 \
            1048576 ;;
    lateclose-openmpi)  # rank 0 sleeps 2 s before the collective MPI_File_close
        rm -f "$d/lateclose.dat"
        openmpi lateclose-openmpi.darshan -- "$BIN/mpi_patterns.openmpi" "$d/lateclose.dat" \
            lateclose 2000 1048576 ;;
    sieve-mpich)  # independent strided writes through a file view: ROMIO data sieving
        rm -f "$d/sieve.dat"
        mpich sieve-mpich.darshan -- "$BIN/mpi_patterns.mpich" "$d/sieve.dat" sieve 4096 1024 ;;
    h5fill-openmpi)  # parallel HDF5, fill values written at allocation
        rm -f "$d/fill.h5"
        openmpi h5fill-openmpi.darshan -- "$BIN/h5_fill" "$d/fill.h5" 524288 fill ;;
    h5nofill-openmpi)  # the same with H5D_FILL_TIME_NEVER
        rm -f "$d/nofill.h5"
        openmpi h5nofill-openmpi.darshan -- "$BIN/h5_fill" "$d/nofill.h5" 524288 nofill ;;
    h5close-openmpi)  # 40,000 groups in a 64 MiB metadata cache: H5Fclose flushes them all
        rm -f "$d/many.h5"
        DXT=0 openmpi h5close-openmpi.darshan -- "$BIN/h5_many_groups" "$d/many.h5" 40000 64 ;;
    h5closecoll-openmpi)  # the same with collective metadata reads and writes already set
        rm -f "$d/many-coll.h5"
        DXT=0 openmpi h5closecoll-openmpi.darshan -- "$BIN/h5_many_groups" "$d/many-coll.h5" \
            40000 64 coll ;;
    pnciput-openmpi)  # PnetCDF, 300 steps of 4 iput + one wait_all: already non-blocking
        rm -f "$d/pnc-iput.nc"
        openmpi pnciput-openmpi.darshan -- "$BIN/pnc_steps" "$d/pnc-iput.nc" 300 4 256 iput ;;
    pncput-openmpi)  # the same steps with blocking collective puts
        rm -f "$d/pnc-put.nc"
        openmpi pncput-openmpi.darshan -- "$BIN/pnc_steps" "$d/pnc-put.nc" 300 4 256 put_all ;;
    flushlog)  # one process, no MPI: 2,000 lines each fflush'd and fsync'd
        rm -f "$d/progress.log" "$HERE/flushlog.darshan"
        DARSHAN_ENABLE_NONMPI=1 DXT_ENABLE_IO_TRACE=1 DARSHAN_LOGFILE="$HERE/flushlog.darshan" \
            LD_PRELOAD="$MPICH/lib/libdarshan.so" "$BIN/flush_log" "$d/progress.log" 2000 ;;
    smallcoll-mpich)  # 1,200 tiny collective writes per rank, contiguous, no reads
        rm -f "$d/smallcoll.dat"
        mpich smallcoll-mpich.darshan -- "$BIN/mpi_small_calls.mpich" "$d/smallcoll.dat" coll \
            1200 256 ;;
    smallindep-mpich)  # the same blocks written with independent calls
        rm -f "$d/smallindep.dat"
        mpich smallindep-mpich.darshan -- "$BIN/mpi_small_calls.mpich" "$d/smallindep.dat" \
            indep 1200 256 ;;
    reopen-mpich)  # every rank opens, appends one line to and closes its log, 50,000 times
        rm -f "$d"/rank?.log
        mpich reopen-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" logreopen 50000 0 ;;
    csv-mpich)  # rank 0 writes 200,000 formatted lines with fprintf
        rm -f "$d/results.csv"
        mpich csv-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" csv 200000 0 ;;
    config-mpich)  # every rank reads the same 2 KiB namelist
        seq -f " param_%g = 1.5" 1 200 | head -c 2048 > "$d/config.nml"
        mpich config-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" config 64 1024 ;;
    perrank-mpich)  # rank r writes (r + 1) * 16 MiB to its own file, then fsync
        rm -f "$d"/part.?
        mpich perrank-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" perrank 16 1048576 ;;
    rank0read-mpich)  # rank 0 reads a 1 GiB input in 8 MiB reads, 3 ranks wait
        [ -s "$d/input.bin" ] || dd if=/dev/urandom of="$d/input.bin" bs=1M count=1024 status=none
        mpich rank0read-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" rank0read 128 8388608 ;;
    packed-mpich)  # 2000 records of 4 KiB per rank written from after a 4-byte prefix
        rm -f "$d"/rec.?
        mpich packed-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" packed 2000 4096 ;;
    blockread-mpich)  # 256 blocking 1 MiB MPI_File_read_at per rank, 2 ms of work after each
        [ -s "$d/input.bin" ] || dd if=/dev/urandom of="$d/input.bin" bs=1M count=1024 status=none
        mpich blockread-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" blockread 256 1048576 ;;
    interleaved-mpich)  # 1000 records of 6000 B per rank interleaved in one shared file
        rm -f "$d/shared.dat"
        mpich interleaved-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" interleaved 1000 6000 ;;
    stepfiles-mpich)  # 64 output steps, each rank writes its own new 1 MiB file per step
        rm -f "$d"/step*.?
        mpich stepfiles-mpich.darshan -- "$BIN/posix_habits.mpich" "$d" stepfiles 64 1048576 ;;
    blocks2nodes-mpich)  # 8 ranks on the two emulated nodes of tests/slurm_twonode.sh
        # (export its SLURM_CONF first), 64 collective 1 MiB writes each, interleaved
        rm -f "$d/blocks.dat" "$HERE/blocks2nodes-mpich.darshan"
        salloc -N 2 --ntasks-per-node 4 -t 5 srun --mpi=pmi2 \
            --export=ALL,DXT_ENABLE_IO_TRACE=1,DARSHAN_LOGFILE="$HERE/blocks2nodes-mpich.darshan",LD_PRELOAD="$MPICH/lib/libdarshan.so" \
            "$BIN/mpi_patterns.mpich" "$d/blocks.dat" blocks 64 1048576 ;;
    *) echo "unknown scenario $1" >&2; exit 2 ;;
    esac
}

build
if [ $# -eq 0 ]; then
    set -- holes-mpich holes-openmpi late-openmpi lateclose-openmpi sieve-mpich h5fill-openmpi \
        h5nofill-openmpi h5close-openmpi h5closecoll-openmpi pnciput-openmpi \
        pncput-openmpi flushlog smallcoll-mpich smallindep-mpich reopen-mpich csv-mpich \
        config-mpich perrank-mpich rank0read-mpich packed-mpich blockread-mpich interleaved-mpich \
        stepfiles-mpich
fi
for s in "$@"; do
    scenario "$s"
done
chmod 644 "$HERE"/*.darshan  # Darshan writes its logs read-only for the owner
