"""IO500's phases, in its order, each as the IOR or mdtest line IO500 runs, made into engine
options by :mod:`iolab.ior.mapping` and :mod:`iolab.mdtest.mapping` (never a copy of them).

IO500's own lines carry options that only steer IOR's and mdtest's bookkeeping, or that the
engine does not have; :data:`IOR_NOT_PASSED` and :data:`MDTEST_NOT_PASSED` list each with
what iolab does instead, and every phase's ``exe`` line in result.txt is IO500's, beside the
line iolab ran. What IO500 passes through files between phases (the stonewall status file:
how far the write got) iolab passes from the write's result to the read's options.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from iolab.errors import UsageError
from iolab.io500.config import Io500Config
from iolab.ior import mapping as ior_mapping
from iolab.ior.parse import parse_command_line as parse_ior
from iolab.mdtest import mapping as md_mapping
from iolab.mdtest.parse import parse_command_line as parse_mdtest
from iolab.runs.engine_doc import from_json

HARD_XFER = 47008  # ior-hard: IO500's fixed transfer and block
HARD_FILE = 3901  # mdtest-hard: IO500's fixed file size

IOR_NOT_PASSED = {
    "--dataPacketType": "the engine writes its own pattern (checked with -R)",
    "-g": "the engine has a barrier before each phase, not between open, I/O and close",
    "-G": "the engine's pattern has no time stamp signature",
    "stoneWallingStatusFile": "the write's stonewall count goes to the read from its result",
    "saveRankPerformanceDetailsCSV": "each rank's figures are in the stored run "
                                     "(iolab results show ID)",
    "-Q 2": "ior-rnd4K-easy-read: -C shifts the reads by one node's ranks, not two",
    "-s=10000000": "ior-rnd4K-easy-read: as many 4 KiB reads per rank as ior-easy wrote "
                   "4 KiB pieces, cut by the stonewall as IOR's 10000000 segments are",
}
MDTEST_NOT_PASSED = {
    "--dataPacketType": "the engine writes its own pattern",
    "-C/-T/-E/-r": "one engine step each (--md-step create|stat|read|remove)",
    "-W": "--stonewall on the create step (stop, wear out to the furthest rank)",
    "-x": "the create's count goes to the later steps from its result",
    "-t": "no effect on the calls (mdtest 4's unique-dir access makes none)",
    "-L -P -G": "no effect with one directory (-L), on the report (-P), on the calls (-G)",
    "--saveRankPerformanceDetails": "each rank's figures are in the stored run",
}
# IO500's phases that iolab cannot run yet (only run in --mode=extended): why, nearest.
NOT_IN_IOLAB = {
    "mdworkbench-create": "md-workbench is not in iolab's engine",
    "mdworkbench-bench": "md-workbench is not in iolab's engine",
    "mdworkbench-delete": "md-workbench is not in iolab's engine",
}
RND4K = 4096  # ior-rnd4K-easy-read: IO500's random reads of 4 KiB in ior-easy's files


@dataclass(frozen=True)
class Phase:
    name: str
    kind: str  # ior | mdtest | find | timestamp | missing
    group: str | None = None  # BW | MD | None (no score)
    optional: bool = False  # IO500's extended phases
    stonewall: bool = False  # a write phase held to the stonewall time

    @property
    def unit(self) -> str:
        return "GiB/s" if self.name.startswith("i") else "kIOPS"


PHASES = (
    Phase("ior-easy-write", "ior", "BW", stonewall=True),
    Phase("mdtest-easy-write", "mdtest", "MD", stonewall=True),
    Phase("mdworkbench-create", "missing", None, optional=True),
    Phase("timestamp", "timestamp"),
    Phase("find-easy", "find", "MD", optional=True),
    Phase("ior-hard-write", "ior", "BW", stonewall=True),
    Phase("mdtest-hard-write", "mdtest", "MD", stonewall=True),
    Phase("find", "find", "MD"),
    Phase("find-hard", "find", "MD", optional=True),
    Phase("mdworkbench-bench", "missing", "MD", optional=True),
    Phase("ior-easy-read", "ior", "BW"),
    Phase("mdtest-easy-stat", "mdtest", "MD"),
    Phase("ior-hard-read", "ior", "BW"),
    Phase("mdtest-hard-stat", "mdtest", "MD"),
    Phase("mdworkbench-delete", "missing", None, optional=True),
    Phase("mdtest-easy-delete", "mdtest", "MD"),
    Phase("mdtest-hard-read", "mdtest", "MD"),
    Phase("mdtest-hard-delete", "mdtest", "MD"),
    # IO500 02091cf runs it in standard mode too, unscored, after the last scored phase
    Phase("ior-rnd4K-easy-read", "ior", None),
)


def enabled(cfg: Io500Config, phase: Phase, extended: bool) -> bool:
    """IO500 runs a phase when the mode includes it and neither it nor its family's section
    says run = FALSE."""
    if phase.optional and not extended:
        return False
    family = "-".join(phase.name.split("-")[:2])
    sections = [phase.name] + ([family] if family in ("ior-easy", "ior-hard", "mdtest-easy",
                                                      "mdtest-hard") else [])
    if phase.name == "ior-rnd4K-easy-read":
        sections.append("ior-easy")  # it reads ior-easy's files (IO500: d.run == 0)
    if phase.kind == "timestamp":
        return True
    return all(cfg.flag(s, "run") is not False for s in sections)


@dataclass
class Settings:
    """The run's resolved folders and rules."""

    datadir: str
    resdir: str
    stonewall: int
    ranks: int
    nodes: int | None
    api: str
    written: dict[str, int] = field(default_factory=dict)  # family -> transfers/files per rank


def _api(cfg: Io500Config, family: str, phase: str, s: Settings) -> str:
    return cfg.get(phase, "API") or cfg.get(family, "API") or s.api


def rnd4k_words(cfg: Io500Config, s: Settings) -> tuple[list[str], list[str]]:
    """(IO500's IOR line, the line iolab runs) for ior-rnd4K-easy-read: IOR -z -z (random
    with repetition) reads of 4 KiB at random 4 KiB-aligned offsets of ior-easy's files
    until the stonewall, then worn out to the furthest rank. IO500 gives -s=10000000 (no end
    but the deadline); iolab gives as many reads per rank as ior-easy wrote 4 KiB pieces per
    rank, which the deadline cuts short on a real run."""
    t = parse_ior(["-t", cfg.get("ior-easy", "transferSize") or "2m"]).tests[0]
    b = parse_ior(["-b", cfg.get("ior-easy", "blockSize") or "1m"]).tests[0]
    done = s.written.get("ior-easy")
    per_rank = done * int(t.params["transferSize"]) if done is not None \
        else int(b.params["blockSize"])
    easy = [*(["-u"] if cfg.flag("ior-easy", "uniqueDir") else []),
            *(["-F"] if cfg.flag("ior-easy", "filePerProc") else [])]
    api = _api(cfg, "ior-easy", "ior-rnd4K-easy-read", s)
    deadline = ["-D", str(s.stonewall), "-O", "stoneWallingWearOut=1"] if s.stonewall else []
    fpp = cfg.flag("ior-easy", "filePerProc")  # IOR refuses -z with -C on a shared file
    words = [*(["-C"] if fpp else []), "-k", "-o", f"{s.datadir}/ior-easy/ior_file_easy",
             *easy, "-r", *deadline,
             "-z", "-z", "-a", api, "-t", str(RND4K), "-b", str(RND4K), "-s",
             str(max(1, per_rank // RND4K))]
    # IO500 02091cf's line (phase_ior_rnd4k_easy_read.c: ior_easy_add_params(argv, 0))
    io500 = ["ior", f"--dataPacketType={cfg.get('global', 'dataPacketType')}", "-g", "-G",
             "<hash>", "-k", "-e", "-o", f"{s.datadir}/ior-easy/ior_file_easy", *easy, "-r",
             "-D", str(s.stonewall), "-z", "-z", "-a", api, "-O",
             f"saveRankPerformanceDetailsCSV={s.resdir}/ior-rnd4K-easy-read.csv",
             "-t=4096", "-b=4096", "-s=10000000", "-O", "stoneWallingWearOut=1",
             *(["-C", "-Q", "2"] if fpp else [])]
    return io500, words


def ior_words(cfg: Io500Config, phase: str, s: Settings) -> tuple[list[str], list[str]]:
    """(IO500's IOR line, the line iolab runs) for an ior-easy/ior-hard phase."""
    if phase == "ior-rnd4K-easy-read":
        return rnd4k_words(cfg, s)
    family = phase.rsplit("-", 1)[0]
    easy = family == "ior-easy"
    stonewall_file = f"stoneWallingStatusFile={s.resdir}/{family}.stonewall"
    if easy:
        t, b = cfg.get("ior-easy", "transferSize") or "", cfg.get("ior-easy", "blockSize") or ""
        words = ["-C", "-Q", "1", "-k", "-e", "-o", f"{s.datadir}/ior-easy/ior_file_easy",
                 "-t", t, "-b", b]
        words += ["-u"] if cfg.flag("ior-easy", "uniqueDir") else []
        words += ["-F"] if cfg.flag("ior-easy", "filePerProc") else []
    else:
        words = ["-C", "-Q", "1", "-k", "-e", "-o", f"{s.datadir}/ior-hard/file",
                 "-t", str(HARD_XFER), "-b", str(HARD_XFER), "-s",
                 str(cfg.number("ior-hard", "segmentCount"))]
        collective = cfg.flag(phase, "collective")
        if collective if collective is not None else cfg.flag("ior-hard", "collective"):
            words.append("-c")
    if phase.endswith("-write"):
        words += ["-w", "-D", str(s.stonewall), "-O", "stoneWallingWearOut=1"]
    else:
        words += ["-r", "-R"]
        words = _read_what_was_written(words, family, easy, s)
    words += ["-a", _api(cfg, family, phase, s)]
    io500 = ["ior", f"--dataPacketType={cfg.get('global', 'dataPacketType')}", "-g", "-G",
             "<hash>", *words, "-O", stonewall_file, "-O",
             f"saveRankPerformanceDetailsCSV={s.resdir}/{phase}.csv"]
    return io500, words


def _read_what_was_written(words: list[str], family: str, easy: bool, s: Settings
                           ) -> list[str]:
    """IO500's reads read what the stonewalled write left (IOR reads its status file): the
    block (easy) or the segments (hard) the write's furthest rank reached."""
    done = s.written.get(family)
    if done is None:
        return words
    key = "-b" if easy else "-s"
    i = words.index(key)
    value = str(done)
    if easy:  # the block: the transfers done, each -t bytes (IOR's spelling, e.g. 2m)
        t = words[words.index("-t") + 1]
        value = str(done * int(parse_ior(["-t", t]).tests[0].params["transferSize"]))
    return [*words[:i + 1], value, *words[i + 2:]]


def mdtest_words(cfg: Io500Config, phase: str, s: Settings) -> tuple[list[str], list[str]]:
    """(IO500's mdtest line, the whole-run mdtest line iolab maps; the step is added by
    :func:`engine_args`)."""
    family = phase.rsplit("-", 1)[0]
    easy = family == "mdtest-easy"
    n = cfg.get(family, "n") or "0"
    step = phase.rsplit("-", 1)[1]
    letter = {"write": "-C", "stat": "-T", "read": "-E", "delete": "-r"}[step]
    api = _api(cfg, family, phase, s)
    if easy:
        words = ["-n", n, "-u", "-F", "-N", "1", "-d", f"{s.datadir}/mdtest-easy", "-a", api]
        io500 = ["mdtest", "-n", n, "-u", "-L", "-F", "-P", "-G", "<hash>", "-N", "1", "-d",
                 f"{s.datadir}/mdtest-easy", "-x", f"{s.resdir}/mdtest-easy.stonewall"]
    else:
        size = str(HARD_FILE)
        words = ["-n", n, "-w", size, "-e", size, "-F", "-N", "1", "-d",
                 f"{s.datadir}/mdtest-hard", "-a", api]
        io500 = ["mdtest", "-n", n, "-t", "-w", size, "-e", size, "-P", "-G=<hash>", "-N",
                 "1", "-F", "-d", f"{s.datadir}/mdtest-hard", "-x",
                 f"{s.resdir}/mdtest-hard.stonewall"]
    io500.append(letter)
    if step == "write":
        io500 += ["-Y", "-W", str(s.stonewall)]
    if step == "write":
        words.append("-Y")  # IO500's sync after the create, inside its time (--md-sync)
    if step == "read":
        io500.append("-X")
        words.append("-X")
    io500 += [f"--saveRankPerformanceDetails={s.resdir}/{phase}.csv", "-a", api]
    return io500, words


def engine_args(cfg: Io500Config, phase: Phase, s: Settings) -> tuple[list[str], list[str]]:
    """(IO500's line, the ``iolab bench`` options of the phase), or the UsageError naming
    the phase and what iolab cannot do in it."""
    try:
        if phase.kind == "ior":
            io500, words = ior_words(cfg, phase.name, s)
            test = parse_ior(words).tests[0]
            args = ior_mapping.engine_args(test, s.ranks, s.nodes)
            # the pattern the read's -R checks is written only when asked for
            return io500, args + (["--verify"] if phase.name.endswith("-write") else [])
        io500, words = mdtest_words(cfg, phase.name, s)
        return io500, _mdtest_args(phase.name, words, s)
    except UsageError as exc:
        raise UsageError(f"[{phase.name}] {exc}") from None


def _mdtest_args(name: str, words: list[str], s: Settings) -> list[str]:
    family, step = name.rsplit("-", 1)
    run = md_mapping.plan(parse_mdtest(words).test, s.ranks)
    verify = step in ("write", "read")  # the pattern is written at creation, checked on read
    args = run.engine_args(verify)
    engine_step = {"write": "create", "delete": "remove"}.get(step, step)
    args += ["--md-step", engine_step]
    if step == "write" and s.stonewall > 0:
        args += ["--stonewall", str(s.stonewall)]
    elif step != "write" and family in s.written:
        args[args.index("--md-files") + 1] = str(s.written[family])
    return args


def written_count(doc: dict[str, Any]) -> int | None:
    """Transfers (IOR) or files (mdtest) per rank that a stonewalled write left: its
    furthest rank's count, which every rank wore out to."""
    for ph in from_json(doc).phases():
        if ph.op in ("write", "create") and ph.stonewall:
            return int(ph.stonewall["xfers_max"])
    return None


def phase_dir(s: Settings, name: str) -> str:
    return os.path.join(s.datadir, "-".join(name.split("-")[:2]))
