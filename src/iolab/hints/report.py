"""What ``iolab hints`` shows, computed from the engine's JSON document (``hints`` object)
and, under Open MPI, from ``ompi_info``: one row per hint with what was asked, what the
library uses and what that means. Pure functions; the verb runs the engine."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from iolab.runs.engine_doc import Hints, MeasuredRun

IN_EFFECT = "in effect"
CHANGED = "CHANGED by the library"
UNKNOWN = "UNKNOWN to the library (dropped)"
DEFAULT = "library value"
UNVERIFIED = "cannot verify (the library echoes what it is given)"

# Open MPI frameworks whose MCA parameters decide what OMPIO does with a file, and the
# parameters of theirs that describe the build rather than the behaviour.
OMPIO_FRAMEWORKS = ("io", "fcoll", "fs", "fbtl", "sharedfp")
UNINTERESTING = ("_version", "configure_params", "_verbose", "_priority")
COLUMN_MAX = 40


@dataclass(frozen=True)
class HintRow:
    key: str
    requested: str | None
    effective: str | None
    source: str | None  # "command line" | "hints file" | "ROMIO_HINTS" | None
    status: str


@dataclass(frozen=True)
class McaParam:
    name: str
    value: str
    source: str


def hint_rows(hints: Hints) -> list[HintRow]:
    """Requested hints first (in the order given), then the library's own."""
    requested, sources, effective = hints.requested, hints.sources, hints.effective
    verifiable = bool(hints.verifiable)
    rows = []
    for key, want in requested.items():
        got = effective.get(key)
        if not verifiable:
            status = UNVERIFIED
        elif got is None:
            status = UNKNOWN
        elif got != want:
            status = CHANGED
        else:
            status = IN_EFFECT
        rows.append(HintRow(key, want, got if verifiable else None, sources.get(key), status))
    if verifiable:
        rows += [HintRow(k, None, v, None, DEFAULT) for k, v in sorted(effective.items())
                 if k not in requested]
    return rows


def parse_ompi_info(text: str) -> list[McaParam]:
    """``ompi_info --parsable`` lines ``mca:<fw>:<comp>:param:<name>:value:<v>`` and
    ``...:source:<s>`` into parameters."""
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 6)
        if len(parts) == 7 and parts[0] == "mca" and parts[3] == "param":
            if parts[5] == "value":
                values[parts[4]] = parts[6]
            elif parts[5] == "source":
                sources[parts[4]] = parts[6]
    return [McaParam(n, v, sources.get(n, "?")) for n, v in values.items()
            if not any(skip in n for skip in UNINTERESTING)]


def ompio_params(env: Mapping[str, str] | None = None) -> list[McaParam] | None:
    """The OMPIO-related MCA parameters in effect (None when ompi_info cannot run)."""
    params: list[McaParam] = []
    for fw in OMPIO_FRAMEWORKS:
        try:
            out = subprocess.run(["ompi_info", "--param", fw, "all", "--level", "9",
                                  "--parsable"], capture_output=True, text=True, timeout=60,
                                 env=dict(env) if env is not None else None, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.returncode != 0:
            return None
        params += parse_ompi_info(out.stdout)
    return params


def as_json(run: MeasuredRun, rows: Sequence[HintRow],
            params: Sequence[McaParam] | None) -> dict[str, Any]:
    env = run.environment
    return {"schema_version": 1, "kind": "hints", "path": run.config.get("path"),
            "fs_type": env.fs_type, "mpi_library": env.mpi_library,
            "mpiio_implementation": env.mpiio_implementation,
            "verifiable": bool(run.hints.verifiable),
            "hints": [asdict(r) for r in rows],
            "ompio_params": None if params is None else [asdict(p) for p in params]}


def render_text(run: MeasuredRun, rows: Sequence[HintRow],
                params: Sequence[McaParam] | None, quiet: bool = False) -> str:
    """The table; ``quiet``: only the hints asked for, without the library's own values
    and Open MPI's parameters."""
    env = run.environment
    lib = str(env.mpi_library or "?").splitlines()[0][:70]
    out = [f"MPI-IO hints of a file in {env.fs_path} ({env.fs_type}); "
           f"{lib}, MPI-IO {env.mpiio_implementation}"]
    verifiable = bool(run.hints.verifiable)
    if quiet:
        rows = [r for r in rows if r.requested is not None]
    if rows:  # each column at least as wide as its header, two spaces between columns
        w = max(len("hint"), *(len(r.key) for r in rows)) + 2
        wr = min(COLUMN_MAX, max(len("requested"), *(len(r.requested or "-") for r in rows)) + 2)
        we = min(COLUMN_MAX, max(len("effective"), *(len(r.effective or "-") for r in rows)) + 2)
        out.append(f"{'hint':<{w}}{'requested':<{wr}}{'effective':<{we}}status")
        for r in rows:
            req = _cut(r.requested or "-", wr - 2)
            eff = _cut(r.effective or "-", we - 2)
            out.append(f"{r.key:<{w}}{req:<{wr}}{eff:<{we}}{r.status}"
                       + (f" (from the {r.source})" if r.source else ""))
    if not verifiable and not quiet:
        # iolab hints has no --mca: the environment reaches the ranks whatever launches them
        out.append("Open MPI returns the hints it was given, so they cannot be verified here "
                   "(OMPIO ignores ROMIO's hints); what decides its behaviour are its MCA "
                   "parameters (set one in the environment: OMPI_MCA_<name>=VALUE):")
        if params is None:
            out.append("  (ompi_info could not be run)")
        for p in params or []:
            out.append(f"  {p.name} = {_cut(p.value, COLUMN_MAX) or '-'} ({p.source})")
    return "\n".join(out) + "\n"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
