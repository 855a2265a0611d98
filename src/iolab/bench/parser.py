"""``iolab bench``'s command line on its own: what the bench verb parses, and what sweep,
tune and :mod:`iolab.bench.subrun` check a bench command line against.

Apart from :mod:`iolab.bench.cli` (the verb), so another verb checks a bench command line
without importing a verb module (``iolab sweep`` imports no other verb's ``cli``:
tests/cli/test_vocabulary.py), and ``subrun`` (which the verb imports) needs no import
inside a function to reach it. The engine's options are read on the first parse only.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from iolab import cli_common, launch, paths
from iolab.bench import options
from iolab.errors import UsageError


def bench_parser() -> argparse.ArgumentParser:
    """iolab bench's parser on its own, as ``iolab bench`` parses (its errors are its own
    one line): what sweep and the other verbs check a bench command line against, without
    importing the top-level dispatcher (iolab.cli) that imports every verb."""
    parser = argparse.ArgumentParser(prog="iolab bench")
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "iolab bench [options]   (no engine option: the default job)"
    grp = parser.add_argument_group("launch")
    grp.add_argument("--launcher", choices=launch.LAUNCHERS, default="auto",
                     help="auto (default): srun inside a Slurm allocation, else mpirun")
    grp.add_argument("--np", type=int, metavar="N",
                     help="ranks (default: $SLURM_NTASKS under srun, else 2)")
    grp.add_argument("--nodes", type=int, metavar="N", help="nodes (srun -N)")
    grp.add_argument("--ppn", type=int, metavar="N", help="ranks per node")
    cli_common.add_mpi(grp, "MPI library: the default build (openmpi names it when it is "
                            "Open MPI's), or mpich (iolab-bench-mpich under mpirun.mpich or "
                            "srun --mpi=pmi2: ROMIO with verifiable hints, like Cray MPICH)")
    place = parser.add_argument_group(
        "placement (recorded per rank in environment.placement: CPU set, memory policy, MHz)")
    place.add_argument("--cpu-bind", metavar="UNIT",
                       help="bind each rank: none, cores, threads, sockets, numa (mpirun "
                            "--bind-to / -bind-to, srun --cpu-bind); under srun Slurm's own "
                            "forms too (map_cpu:..., mask_cpu:..., rank)")
    place.add_argument("--cpus-per-rank", type=int, metavar="N",
                       help="CPUs for each rank (srun -c N, Open MPI --map-by ...:PE=N, "
                            "MPICH -bind-to core:N)")
    place.add_argument("--cpu-freq", metavar="FREQ[,FREQ...]",
                       help="Slurm: the CPU frequency (kHz, low, medium, high, highm1); a "
                            "comma list sweeps it, one run per frequency")
    place.add_argument("--core-spec", type=int, metavar="N",
                       help="Slurm core specialization: N cores per node kept for the "
                            "system (salloc/sbatch -S N; fixed when the allocation is made)")
    place.add_argument("--membind", metavar="NODES",
                       help="each rank's memory from these NUMA nodes (numactl --membind)")
    lustre = parser.add_argument_group(
        "Lustre striping (the layout obtained is stored: environment.striping)")
    lustre.add_argument("--stripe-count", type=int, metavar="N",
                        help="OSTs per test file (lfs setstripe -c; -1: all), before the "
                             "files are created; MPI-IO also gets striping_factor")
    lustre.add_argument("--stripe-size", metavar="SIZE",
                        help="stripe size, a multiple of 64 KiB, e.g. 1M (lfs setstripe -S; "
                             "MPI-IO also gets striping_unit)")
    grp.add_argument("--launcher-args", metavar="ARGS",
                     help="extra launcher arguments, split like a shell would; write "
                          "--launcher-args=\"--mca io romio321\" (with '=') when they "
                          "start with '-'")
    out = parser.add_argument_group("output")
    cli_common.add_db(out)
    cli_common.add_format(out)
    out.add_argument("--label", help="a label stored with the run (filter with "
                                     "'iolab results --label')")
    out.add_argument("--dry-run", action="store_true",
                     help="print the launch command(s) and exit; runs nothing")
    cli_common.add_quiet_verbose(
        out, quiet_help="no progress lines (the summary and errors still print)",
        verbose_help="pass the engine's and launcher's messages through as they come")
    _read_engine_options_lazily(parser)
    cli_common.add_examples(parser, [
        ('iolab bench', 'the default job: 2 ranks, a file each, written then read, stored'),
        ('iolab bench --np 4 -t 1m -b 64m --layout segmented',
         '4 ranks, one shared file in 1 MiB transfers (-t/-b are --transfer/--block)'),
        ('iolab bench -a mpiio -c --np 4 -t 4m -b 64m --hint cb_nodes=2 -o ior.dat',
         'collective MPI-IO with a hint; the test file ior.dat here (cd to the file system first)'),
        ('iolab bench --metadata easy --np 2',
         'metadata rates as mdtest measures them: create, stat, read, remove per second'),
        ('iolab bench --np 4 --dry-run', 'print the launch command and the test path; run nothing'),
        ('iolab bench -a null --json', 'the driver without a disk; the summary as JSON'),
    ])
    cli_common.one_line_errors(parser, "iolab bench")


def _read_engine_options_lazily(parser: argparse.ArgumentParser) -> None:
    """Add the engine's options the first time this parser parses.

    ``iolab`` builds only the running verb's parser, but ``build_parser()`` (every verb:
    tests, generated docs) must not run the engine for the others, nor break when it is
    missing. The subparser's ``parse_known_args`` runs only when ``bench`` is the verb
    (``--help`` included).
    """
    original = parser.parse_known_args
    loaded: list[bool] = []

    def parse_known_args(args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        if not loaded:
            loaded.append(True)
            _load_engine_options(parser)
        ns, rest = original(args, namespace)
        ns.bench_argv = list(args or [])
        if rest and getattr(ns, "engine_error", None):
            rest = []  # the real problem (no engine) is reported by run()
        elif rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return ns, rest

    setattr(parser, "parse_known_args", parse_known_args)  # noqa: B010


def _table_engine() -> Path:
    try:
        return paths.engine_binary("default")
    except UsageError:
        return paths.engine_binary("mpich")  # same source, same table


def _load_engine_options(parser: argparse.ArgumentParser) -> None:
    try:
        table = options.load_table(_table_engine())
    except UsageError as exc:
        parser.set_defaults(engine_error=str(exc), engine_table=[])
        parser.epilog = f"Engine options are not available: {exc}\n\n{parser.epilog or ''}"
        return
    options.add_engine_options(parser, table)
    parser.set_defaults(engine_error=None, engine_table=table)
