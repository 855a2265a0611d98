"""How settings are written for the library that reads them: the one writer of each syntax.

- a ROMIO hints file: ``key value`` lines (ROMIO_HINTS names the file);
- Cray MPICH's ``MPICH_MPIIO_HINTS``: ``pattern:key=value:...``, one entry per file pattern,
  comma-separated, so no value may hold ``:`` or ``,``;
- Open MPI OMPIO: ``export OMPI_MCA_<name>=value``, from the ROMIO hints each parameter stands
  for (the catalogue's ``ompio_from``);
- Lustre: ``lfs setstripe`` with the flags of the catalogue's ``lfs`` rows.

diagnose's fix files, tune's trials and winner files and ``iolab bench --stripe-*`` all call
these, diagnose and tune from the same data: the :class:`~iolab.settings.change.SettingChange`
rows a fix or a winner sets (:func:`changes`, then :func:`hints_file_of`, :func:`cray_line`,
:func:`mca_lines`, :func:`romio_env_lines`, :func:`lfs_changes` then :func:`lfs_words_of`,
which writes :func:`lfs_setstripe`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Union

from iolab.settings.catalogue import (
    DOMAINS,
    ROMIO_SWITCH,
    OmpioFrom,
    Setting,
    mca_env,
    ompio_parameters,
    parse,
    setting,
)
from iolab.settings.change import SettingChange

# A value on a command line: a number, or a word the caller has already made shell-safe
# (diagnose's scripts pass "1M" and '"$c"').
Arg = Union[int, str]


def _lfs_flag(row_name: str) -> str:
    row = setting(row_name)
    if row is None or not row.flag:
        raise KeyError(f"the catalogue has no lfs row {row_name}")
    return row.flag


def _size_word(size: Arg) -> str:
    """A stripe size as lfs takes it: a number of bytes as ``4M`` / ``64K`` (lfs_size), a word
    the caller made (``1M``, ``"$s"``) as it is."""
    if isinstance(size, int) or size.isdigit():
        return lfs_size(int(size))
    return size


def lfs_setstripe(target: str, count: Arg | None = None, size: Arg | None = None,
                  components: Sequence[tuple[Arg, Arg | None, Arg | None]] = ()
                  ) -> list[str]:
    """The words of ``lfs setstripe`` giving ``target`` (a file before it is written, or a
    folder whose new files inherit it) ``count`` stripes of ``size`` bytes; a progressive
    layout as ``components`` of (end, count, size), each written ``-E END -c N -S SIZE``
    (end -1: to the end of the file), before the plain count and size if any."""
    def layout(c: Arg | None, s: Arg | None) -> list[str]:
        return ([_lfs_flag("lfs.stripe_count"), str(c)] if c is not None else []) + (
            [_lfs_flag("lfs.stripe_size"), _size_word(s)] if s is not None else [])
    args: list[str] = []
    for end, c, s in components:
        args += [_lfs_flag("lfs.component_end"), str(end), *layout(c, s)]
    return ["lfs", "setstripe", *args, *layout(count, size), target]


# The catalogue's Lustre layout rows, as a fix or a winner carries them (library "lfs").
LFS_COUNT, LFS_SIZE, LFS_END = "lfs.stripe_count", "lfs.stripe_size", "lfs.component_end"


def lfs_changes(count: int | None, size: int | None,
                components: Sequence[tuple[int, int | None, int | None]] = (),
                paths: tuple[str, ...] = (), file: str = "") -> tuple[SettingChange, ...]:
    """A Lustre layout as settings of the catalogue's ``lfs`` rows (library "lfs"), in the
    order :func:`lfs_setstripe` writes them: a plain count and size, or each PFL component
    (end, count, size) as its end then its count and size (``lfs`` reads a count after an
    end as that component's, so a layout is one or the other). Sizes in bytes. ValueError
    when a value is outside its row's domain (a stripe size not a multiple of 64 KiB...)."""
    if components and (count is not None or size is not None):
        raise ValueError("a Lustre layout is a plain count and size or PFL components")
    pairs: list[tuple[str, int]] = []
    for end, c, s in components:
        pairs += [(LFS_END, end), *([(LFS_COUNT, c)] if c is not None else []),
                  *([(LFS_SIZE, s)] if s is not None else [])]
    pairs += [*([(LFS_COUNT, count)] if count is not None else []),
              *([(LFS_SIZE, size)] if size is not None else [])]
    out = []
    for name, value in pairs:
        row = setting(name)
        if row is None or parse(row, str(value)) is None:
            raise ValueError(f"{name} {value}: not {DOMAINS[row.domain] if row else 'a row'}")
        out.append(SettingChange(name, str(value), "lfs", paths, file))
    return tuple(out)


def lfs_words_of(settings: Iterable[SettingChange], target: str,
                 count_word: str | None = None) -> list[str]:
    """The ``lfs setstripe`` words (:func:`lfs_setstripe`) of the ``lfs`` settings, in the
    order :func:`lfs_changes` gives them: a count or size after a component's end is that
    component's (as ``lfs`` reads its flags), before any end the plain layout's.
    ``count_word``: a shell word written for the plain count (a variable the script sets
    when it runs, e.g. from ``lfs df``)."""
    plain: dict[str, Arg] = {}
    components: list[dict[str, Arg]] = []
    for s in settings:
        if s.library != "lfs" or s.name not in (LFS_COUNT, LFS_SIZE, LFS_END):
            continue
        if s.name == LFS_END:
            components.append({LFS_END: s.value})
        else:
            (components[-1] if components else plain)[s.name] = s.value
    if count_word is not None and LFS_COUNT in plain:
        plain[LFS_COUNT] = count_word
    return lfs_setstripe(target, plain.get(LFS_COUNT), plain.get(LFS_SIZE),
                         [(c[LFS_END], c.get(LFS_COUNT), c.get(LFS_SIZE)) for c in components])


# Characters MPICH_MPIIO_HINTS uses as separators: a value holding one cannot be carried.
_CRAY_SEPARATORS = set(":,")


def hints_file(hints: Mapping[str, str]) -> str:
    """The body of a ROMIO hints file (hints the catalogue knows for Cray MPICH only, or for
    OMPIO, stay out: ROMIO would ignore them)."""
    return "".join(f"{k} {v}\n" for k, v in hints.items()
                   if (row := setting(k)) is None or "romio" in row.libraries)


def cray_hints(hints: Mapping[str, str], nodes: int | None, nprocs: int | None = None
               ) -> tuple[dict[str, str], list[str]]:
    """The hints as MPICH_MPIIO_HINTS can carry them: ``:`` separates its fields, so
    ``cb_config_list *:N`` becomes ``cb_nodes`` (N per node times the nodes, at most the
    ranks; ``*:*``: every rank) when that count is known, else it is left to MPI_Info_set
    (a note says so); any other value with ``:`` or ``,`` is left out the same way."""
    out = {k: v for k, v in hints.items()
           if k != "cb_config_list" and not set(v) & _CRAY_SEPARATORS}
    notes = [f"# {k} {v}: set it with MPI_Info_set (its ':' or ',' cannot be written in "
             "MPICH_MPIIO_HINTS)" for k, v in hints.items()
             if k != "cb_config_list" and set(v) & _CRAY_SEPARATORS]
    if "cb_config_list" in hints:
        config = hints["cb_config_list"]
        per = config.partition(":")[2]
        count: int | None = None
        if per.isdigit() and nodes:
            count = min(int(per) * nodes, nprocs) if nprocs else int(per) * nodes
        elif per == "*" and nprocs:
            count = nprocs
        if count is not None and "cb_nodes" not in out:
            out["cb_nodes"] = str(count)
            how = f"{per} per node x {nodes} node(s)" if per.isdigit() else "every rank"
            notes.append(f"# cb_config_list {config} as cb_nodes ({how}): its ':' cannot be "
                         "written here")
        else:
            notes.append(f"# cb_config_list {config}: set it with MPI_Info_set (its ':' cannot "
                         "be written in MPICH_MPIIO_HINTS)")
    return out, notes


def mpich_mpiio_hints(hints: Mapping[str, str], patterns: Sequence[str] = ("*",),
                      nodes: int | None = None, nprocs: int | None = None
                      ) -> tuple[str, list[str]]:
    """The value of Cray MPICH's ``MPICH_MPIIO_HINTS`` for ``hints`` (``pattern:key=value:
    ...``, one entry per file pattern, comma-separated; cray_hints for what ``:`` rules
    out), and the notes that say what was changed; "" when no hint can be carried. Hints
    Cray MPICH does not have (none today: every ROMIO hint is also Cray's) stay out."""
    cray, notes = cray_carried(hints, nodes, nprocs)
    if not cray:
        return "", notes
    kv = ":".join(f"{k}={v}" for k, v in cray.items())
    return ",".join(f"{p}:{kv}" for p in patterns), notes


def cray_carried(hints: Mapping[str, str], nodes: int | None, nprocs: int | None = None
                 ) -> tuple[dict[str, str], list[str]]:
    """The hints MPICH_MPIIO_HINTS carries (:func:`cray_hints`, less those Cray MPICH does
    not have), and the notes."""
    cray, notes = cray_hints(hints, nodes, nprocs)
    return {k: v for k, v in cray.items()
            if (row := setting(k)) is None or "cray" in row.libraries}, notes


def ompio_exports(hints: Mapping[str, str], nodes: int | None, nprocs: int
                  ) -> tuple[list[str], list[str]]:
    """OMPIO's MCA equivalents of ROMIO hints (``export`` lines and comments), and the hints
    it has no equivalent for (:func:`ompio_settings` says which parameters they set)."""
    lines, _, none = ompio_settings(hints, nodes, nprocs)
    return lines, none


def ompio_settings(hints: Mapping[str, str], nodes: int | None, nprocs: int
                   ) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """OMPIO's MCA equivalents of ROMIO hints: the lines (``export`` lines and comments),
    the (MCA parameter, value) pairs the exports set, and the hints it has no equivalent
    for.

    One export per variable: cb_nodes and cb_config_list both set the aggregator count (the
    count cb_nodes names is kept), romio_cb_write and romio_cb_read both disable fcoll; a
    file that exported the same variable twice was a repeated line at best, two values at
    worst."""
    stands_for: dict[str, tuple[Setting, OmpioFrom]] = {
        f.romio: (row, f) for row in ompio_parameters() for f in row.ompio_from}
    none: list[str] = []
    lines: list[str] = []
    pairs: list[tuple[str, str]] = []
    exported: set[str] = set()
    order = ("cb_nodes",)  # the explicit count before the per-node one
    for key, v in sorted(hints.items(), key=lambda kv: kv[0] not in order):
        got = _ompio_line(*stands_for[key], key, v, nodes, nprocs) if key in stands_for \
            else None
        if got is None:
            none.append(f"{key}={v}")
            continue
        line, value = got
        if value is None:
            if line not in lines:
                lines.append(line)
            continue
        name = stands_for[key][0].name
        if name not in exported:
            exported.add(name)
            lines.append(line)
            pairs.append((name, value))
    return lines, pairs, none


def _ompio_line(row: Setting, how: OmpioFrom, key: str, v: str, nodes: int | None,
                nprocs: int) -> tuple[str, str | None] | None:
    """The line for ROMIO's ``key=v`` in OMPIO's terms and the value it exports (None for a
    comment), None when it has no equivalent."""
    comment = f"  # {how.comment}" if how.comment else ""
    if how.per_node:
        per = v.partition(":")[2]
        if not nodes or not (per.isdigit() or per == "*"):
            return None
        n = nprocs if per == "*" else min(int(per) * nodes, nprocs)
        what = "every rank" if per == "*" else f"{per} per node x {nodes} node(s)"
        return f"export {mca_env(row)}={n}  # {what}", str(n)
    if how.values or how.notes:
        if v in how.values:
            return f"export {mca_env(row)}={how.values[v]}{comment}", how.values[v]
        if v in how.notes:
            return f"# {key}={v}: {how.notes[v]}", None
        return None
    return f"export {mca_env(row)}={v}{comment}", v


# The value of the ROMIO switch: "not OMPIO" leaves ROMIO, whatever the version calls it
# (romio314 in Open MPI 3.x, romio321 in 4.x, romio341 in 5.x); a log does not say which
# version ran.
ROMIO_SWITCH_VALUE = "^ompio"
ROMIO_SWITCH_NOTE = ("Open MPI: use ROMIO, which reads ROMIO_HINTS (OMPIO ignores it); "
                     "= mpirun --mca io ^ompio, on any version (ROMIO's component is romio321 "
                     "in 4.x, romio341 in 5.x)")


def romio_switch_line(comment: str = ROMIO_SWITCH_NOTE) -> str:
    """The export that makes Open MPI use ROMIO (which reads ROMIO_HINTS) instead of OMPIO."""
    row = setting(ROMIO_SWITCH)
    name = mca_env(row) if row else "OMPI_MCA_io"
    return f"export {name}={ROMIO_SWITCH_VALUE}  # {comment}"


# ---- renderings of SettingChange data (diagnose's fix files and tune's winner files) --------

def changes(values: Mapping[str, str], library: str, scope: tuple[str, ...] = (),
            file: str = "") -> tuple[SettingChange, ...]:
    """``values`` (name -> value) as settings in ``library``'s syntax, carried by ``file``."""
    return tuple(SettingChange(k, v, library, scope, file) for k, v in values.items())


def _of(settings: Iterable[SettingChange], library: str) -> dict[str, str]:
    return {s.name: s.value for s in settings if s.library == library}


def hints_file_of(settings: Iterable[SettingChange]) -> str:
    """The ROMIO hints file that sets the ``romio`` settings (:func:`hints_file`)."""
    return hints_file(_of(settings, "romio"))


def cray_line(settings: Iterable[SettingChange], patterns: Sequence[str] = ("*",)) -> str:
    """``export MPICH_MPIIO_HINTS=...`` for the ``cray`` settings (already what the variable
    can carry: :func:`cray_carried`), "" when there are none."""
    cray = _of(settings, "cray")
    if not cray:
        return ""
    kv = ":".join(f"{k}={v}" for k, v in cray.items())
    return f"export MPICH_MPIIO_HINTS={shlex.quote(','.join(f'{p}:{kv}' for p in patterns))}"


def mca_export(name: str, value: str, comment: str = "") -> str:
    """``export OMPI_MCA_<name>=<value>`` (the catalogue's variable for a row it knows)."""
    row = setting(name)
    env = mca_env(row) if row is not None else f"OMPI_MCA_{name}"
    return f"export {env}={shlex.quote(value)}" + (f"  # {comment}" if comment else "")


def mca_lines(settings: Iterable[SettingChange]) -> list[str]:
    """The ``export`` lines of the ``ompio`` settings other than the ROMIO switch (which
    :func:`romio_env_lines` writes beside ROMIO_HINTS)."""
    return [mca_export(k, v) for k, v in _of(settings, "ompio").items() if k != ROMIO_SWITCH]


def romio_env_lines(settings: Iterable[SettingChange], hints_path: str, io: str | None
                    ) -> list[str]:
    """ROMIO_HINTS naming the hints file (``hints_path``, as the shell reads it), after the
    ROMIO switch when the settings carry it (Open MPI's OMPIO ran: it ignores the file); a
    commented switch when the MPI-IO implementation is not known (``io`` "unknown" or
    None): the hints and the switch they need are in one file."""
    if ROMIO_SWITCH in _of(settings, "ompio"):
        switch = [romio_switch_line()]
    elif io in ("unknown", None):
        switch = ["# Open MPI with OMPIO: uncomment", "# " + romio_switch_line()]
    else:
        switch = []
    return [*switch, f"export ROMIO_HINTS={hints_path}"]


def lfs_size(size: int) -> str:
    """A stripe size as ``lfs setstripe -S`` takes it: ``4M``, ``64K``, else bytes."""
    if size % (1 << 20) == 0:
        return f"{size >> 20}M"
    return f"{size >> 10}K" if size % (1 << 10) == 0 else str(size)
