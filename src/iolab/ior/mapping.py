"""One IOR test as iolab-bench engine options, with IOR's meaning, or one line saying why not.

What each IOR option becomes is in :mod:`iolab.ior.table`; this module applies it: IOR's
defaults (``-t 256k -b 1m -s 1``, POSIX, one shared file unless ``-F``), its hint sources
(``IOR_HINT__MPI__key=value`` in the environment and in ``--mpiio.hintsFileName``), and the
refusals, checked before anything runs or is stored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from iolab.errors import UsageError
from iolab.ior import stonewall_file, table
from iolab.ior.parse import IorTest

_HINT_PREFIX = "IOR_HINT__"
_MPI_APIS = ("mpiio", "hdf5", "pnetcdf")


def refusal(opt: table.IorOption, test: IorTest) -> UsageError:
    said = test.spelled.get(opt.key, opt.spelling)
    return UsageError(f"IOR {said} ({opt.key}): {opt.note}; nearest in iolab: {opt.nearest}")


def engine_api(test: IorTest) -> str:
    """iolab's backend for IOR's ``-a``, or the refusal naming the nearest one."""
    api = str(test.params["api"])
    name = api.upper()
    if name in table.APIS:
        return table.APIS[name]
    missing = {k.upper(): v for k, v in table.MISSING_APIS.items()}
    if name in missing:
        raise UsageError(f"IOR -a {api}: iolab has no {api} backend; nearest in iolab: "
                         f"{missing[name]}")
    raise UsageError(f"IOR -a {api}: not an IOR 4 API; IOR 4 has "
                     f"{'|'.join([*table.APIS, *table.MISSING_APIS])}")


def engine_args(test: IorTest, ranks: int, nodes: int | None,
                environ: Mapping[str, str] | None = None) -> list[str]:
    """The engine options (``iolab bench`` spellings) that run ``test`` on ``ranks`` ranks.
    ``nodes`` is not needed any more: the engine finds IOR's node shifts (-C -Q, -Z) from
    where its ranks run."""
    p = test.params
    keys = table.by_key()
    for key, value in p.items():
        opt = keys[key.lower()]
        if opt.how == "refused" and value != opt.default:
            raise refusal(opt, test)
    api = engine_api(test)
    if p["setTimeStampSignature"]:
        said = test.spelled.get("setTimeStampSignature", "-G")
        said = said if "=" in said else f"{said} {p['setTimeStampSignature']}"
        test.notes.append(f"{said}: IOR's time stamp sets only its data's bytes; iolab writes "
                          "its own pattern (with -W or -R), the same in every run")
    fpp = bool(p["filePerProc"])
    args = ["--api", api, "--layout", "fpp" if fpp else "segmented",
            *(["--fpp-digits", "8"] if fpp else []),  # IOR's names: PATH.00000000
            "--transfer", str(p["transferSize"]), "--block", str(p["blockSize"]),
            "--segments", str(p["segmentCount"]), "--reps", str(p["repetitions"]),
            "--path", str(p["testFileName"])]
    _check_sizes(test)
    if p["writeFile"]:
        args.append("--write")
    if p["readFile"] or p["checkRead"]:
        args.append("--read")
    args += _switches(test, ranks)
    args += _module_args(test, api)
    if api in _MPI_APIS:
        for hint in ior_hints(test, api, os.environ if environ is None else environ):
            args += ["--hint", hint]
    return args


def _check_sizes(test: IorTest) -> None:
    p = test.params
    t, b, s = p["transferSize"], p["blockSize"], p["segmentCount"]
    for key, value in (("transferSize", t), ("blockSize", b), ("segmentCount", s)):
        if value <= 0:
            raise UsageError(f"IOR {test.spelled.get(key, key)} {value}: must be positive")
    if b % t:
        raise UsageError(f"IOR -b {b} -t {t}: the block size must be a multiple of the "
                         "transfer size (IOR refuses it too)")
    if p["repetitions"] < 1:
        raise UsageError(f"IOR -i {p['repetitions']}: repetitions must be at least 1")


def _switches(test: IorTest, ranks: int) -> list[str]:
    p = test.params
    args: list[str] = []
    simple = {"collective": "--collective", "keepFile": "--keep", "fsync": "--fsync",
              "fsyncPerWrite": "--fsync-per-write", "checkRead": "--verify",
              "useExistingTestFile": "--use-existing", "multiFile": "--file-per-rep",
              "intraTestBarriers": "--step-barriers"}
    args.append("--remove-each-rep")  # IOR removes the files before each write and after
    args += [flag for key, flag in simple.items() if p[key]]
    if p["checkWrite"]:
        args += ["--check-write"] + ([] if p["checkRead"] else ["--verify"])
    if p["interTestDelay"] > 0:
        args += ["--phase-delay", str(p["interTestDelay"])]
    if p["maxTimeDuration"] > 0:
        args += ["--max-time", str(60 * p["maxTimeDuration"])]
    if p["uniqueDir"] and p["filePerProc"]:
        args.append("--unique-dir")
    args += _reorder_args(test)
    args += _random_args(test)
    if p["stoneWallingWearOut"] and p["deadlineForStonewalling"] <= 0:
        raise UsageError("IOR -O stoneWallingWearOut=1 without -D: IOR refuses it too (the "
                         "wear-out follows a stonewall deadline); add -D SECONDS")
    stonewall_file.check(test)
    if p["deadlineForStonewalling"] > 0:
        args += ["--stonewall", str(p["deadlineForStonewalling"])]
        if not p["stoneWallingWearOut"]:  # IOR: each rank stops at the deadline
            args.append("--stonewall-stop")
    if p["numTasks"] not in (-1, 0, ranks):
        raise UsageError(f"IOR -N {p['numTasks']}: only {ranks} rank(s) are launched and "
                         "the engine runs on all of them; nearest in iolab: iolab ior --np "
                         f"{p['numTasks']}")
    return args


def _reorder_args(test: IorTest) -> list[str]:
    """IOR's -C/-Z/-X/-Q: whose data each rank reads, drawn as IOR draws it."""
    p = test.params
    c, z, q = int(p["reorderTasks"]), int(p["reorderTasksRandom"]), int(p["taskPerNodeOffset"])
    if c and z:
        raise UsageError("IOR -C with -Z: IOR refuses both constant and random reordering; "
                         "choose one")
    if z and p["randomOffset"] and not p["filePerProc"]:
        raise UsageError("IOR -Z with -z on one shared file: IOR refuses it; add -F or drop "
                         "one of them")
    if q < 0:
        raise UsageError(f"IOR -Q {q}: give 0 or more nodes")
    if c:  # -C -Q 1 on one node: the shift is a whole node, each rank's own data (as IOR)
        return ["--reorder", "--reorder-nodes", str(q)]
    if z:
        return ["--reorder-random", str(min(z, 2)), "--reorder-seed",
                str(p["reorderTasksRandomSeed"]), "--reorder-nodes", str(q)]
    return []


def _random_args(test: IorTest) -> list[str]:
    """IOR's -z (-z -z) with its seed and prefill, refused where IOR refuses or fails."""
    p = test.params
    z = int(p["randomOffset"])
    said = test.spelled.get("randomOffset", "-z")
    if z and p["blockSize"] == p["transferSize"] and z == 1:
        raise UsageError(f"IOR {said} with -b equal to -t: IOR shuffles the transfers within "
                         "a block and refuses one transfer per block too; give -b a multiple "
                         "of -t above it")
    if z and p["reorderTasks"] and not p["filePerProc"]:
        raise UsageError(f"IOR {said} with -C on one shared file: IOR refuses random offsets "
                         "with constant reordering there; add -F or drop one of them")
    if p["randomPrefill"] and p["deadlineForStonewalling"] > 0:
        raise UsageError("IOR --randomPrefill with -D: IOR prefills segment by segment inside "
                         "the deadline, the engine before the transfers; drop one of them")
    if z > 1 and p["writeFile"]:
        raise UsageError(f"IOR {said} {said} (random with repetition) with -w: IOR 4.1's write "
                         "draws from a file size it has not set and stops with a division by "
                         "zero; nearest in iolab: -w -z (each offset once), then -r -z -z")
    args: list[str] = []
    if z:
        args.append("--random-repeat" if z > 1 else "--random")
    if p["randomSeed"] != -1:
        args += ["--random-seed", str(p["randomSeed"])]
    if p["randomPrefill"]:
        if not z:
            raise UsageError("IOR --randomPrefill without -z: IOR refuses it too (it fills "
                             "the file before random writes); add -z or drop it")
        args += ["--random-prefill", str(p["randomPrefill"])]
    return args


def _module_args(test: IorTest, api: str) -> list[str]:
    """IOR's --module.* options; like IOR, those of another backend than -a's do nothing."""
    p = test.params
    args: list[str] = []
    if api == "posix" and p["posix.odirect"]:
        args += ["--posix.mode", "direct"]
    if api == "mpiio":  # IOR's MPIIO create empties the file it opened: MPI_File_set_size(0)
        args.append("--mpiio.set-size-zero")
    if api == "null":  # IOR's DUMMY delays, microseconds (its sync's is never waited)
        for key, flag in (("dummy.delay-xfer", "--null.delay-us"),
                          ("dummy.delay-create", "--null.delay-create-us"),
                          ("dummy.delay-close", "--null.delay-close-us")):
            if p[key]:
                if p[key] < 0:
                    raise UsageError(f"IOR {test.spelled.get(key, '--' + key)}: give "
                                     "microseconds, 0 or more")
                args += [flag, str(p[key])]
        if p["dummy.delay-only-rank0"]:
            args.append("--null.delay-rank0-only")
    if api == "hdf5":
        if p["randomOffset"]:
            raise UsageError("IOR -a HDF5 with -z: IOR refuses random offsets with HDF5; "
                             "nearest in iolab: -a MPIIO with the same line")
        if p["deadlineForStonewalling"] > 0 and p["segmentCount"] > 1:
            raise UsageError("IOR -a HDF5 -D with -s above 1: every rank creates the "
                             "segments' datasets in order, which ranks stopping at a deadline "
                             "break; nearest in iolab: -s 1 with -b covering the segments, or "
                             "-a MPIIO")
        args.append("--hdf5.segment-datasets")  # IOR's Dataset-0000.NNNN per segment
        if p["hdf5.setAlignment"] > 1:
            args += ["--hdf5.align", str(p["hdf5.setAlignment"])]
        if p["hdf5.collectiveMetadata"]:
            args.append("--hdf5.coll-metadata")
    return args


def ior_hints(test: IorTest, api: str, environ: Mapping[str, str]) -> list[str]:
    """MPI-IO hints as IOR sets them: ``IOR_HINT__MPI__key=value`` from the environment,
    then from the backend's hints file (lines starting ``IOR_HINT``)."""
    lines = [f"{k}={v}" for k, v in sorted(environ.items()) if k.startswith(_HINT_PREFIX)]
    module = {"mpiio": "mpiio", "hdf5": "hdf5", "pnetcdf": "ncmpi"}[api]
    name = str(test.params.get(f"{module}.hintsFileName") or "")
    if name:
        try:
            text = Path(name).read_text(errors="replace")
        except OSError as exc:
            raise UsageError(f"IOR --{module}.hintsFileName={name}: cannot read it "
                             f"({exc.strerror})") from None
        lines += [ln.strip() for ln in text.splitlines() if ln.startswith(_HINT_PREFIX)]
    return [_one_hint(line, name or "the environment") for line in lines]


def _one_hint(line: str, where: str) -> str:
    setting, _, value = line.replace("\t", " ").partition("=")
    setting = setting.strip()
    layer, sep, key = setting[len(_HINT_PREFIX):].partition("__")
    if layer != "MPI" or not sep or not key:
        raise UsageError(f"{where}: {setting}: only IOR_HINT__MPI__key=value hints are "
                         "applied (GPFS hints are not in iolab); nearest in iolab: "
                         "iolab hints (MPI-IO hints)")
    value = value.strip().split()[0] if value.strip() else ""
    if not value:
        raise UsageError(f"{where}: {setting} has no value; write {setting}=VALUE")
    return f"{key}={value}"

