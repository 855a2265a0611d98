"""The proxy workload of ``iolab tune --from-log``: the ``iolab bench`` options that repeat the
pattern of the file that cost the job the most I/O time, at the layer the program called.

- HDF5 / PnetCDF files: an HDF5 / PnetCDF workload with the program's *call* sizes and
  selections, read from the library's own records (H5D, PNETCDF_VAR), never from the POSIX
  requests under them: bytes per H5Dwrite / ncmpi_put call, the selection of the most common
  access (contiguous; a strided hyperslab or vars call: one call through a strided
  selection, ``--file-view``; a box of two or more dimensions: the subarray layout), and
  collective, independent or non-blocking as recorded.
- MPI-IO files: the MPI-IO calls' size, collective or independent.
- Other files: the POSIX (or STDIO) requests.

The proxy is a :class:`~iolab.tune.workload.Workload` (typed ``iolab bench`` options), which
the tune then changes knob by knob. A read-dominated file gets a read proxy: the engine's
write phase first writes the input (evicted from the page cache before the read), and the
tune scores the read phase
(:attr:`Proxy.target`). The scale is the machine's at hand: fewer ranks (``max_ranks``) and
fewer bytes per rank (``max_rank_bytes``) than a production job, since a tune runs the proxy
tens of times. Each line of :attr:`Proxy.description` says which counters gave what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from iolab.errors import UsageError
from iolab.tune.workload import EngineValue, Workload

if TYPE_CHECKING:
    from iolab.model.job import Model
    from iolab.model.tables import ModuleData

MIN_TRANSFER = 1
MAX_TRANSFER = 64 << 20
MAX_CALLS_PER_RANK = 65536  # a trial stays a few seconds even for 64-byte writes
ENGINE_ELEMS = (1, 2, 4, 8)  # element sizes the engine's N-D arrays take (--elem)


@dataclass
class Proxy:
    workload: Workload
    description: list[str]
    target: str = "write"  # the phase the tune scores; "read": the write phase only prepares

    @property
    def api(self) -> str:
        return self.workload.api


@dataclass
class LibraryCalls:
    """One direction of a file's HDF5 / PnetCDF calls, from the library's records."""

    module: str  # H5D or PNETCDF_VAR
    calls: int
    nbytes: int
    elem: int  # bytes per element of the most common access's dataset / variable
    lengths: list[int]  # elements per dimension of the most common access, slowest first
    strides: list[int]  # its strides (0: none recorded)
    strided_calls: int  # vars calls (PnetCDF)
    irregular: int  # HDF5 irregular hyperslab and point selections
    collective: bool
    nonblocking: bool
    said: list[str] = field(default_factory=list)  # which counters gave what

    @property
    def call_bytes(self) -> int:
        return int(round(self.nbytes / self.calls)) if self.calls else self.nbytes


def _pow2(n: float) -> int:
    """The power of two nearest to n, within the engine-friendly range."""
    if n <= MIN_TRANSFER:
        return MIN_TRANSFER
    return int(min(MAX_TRANSFER, 2 ** round(np.log2(n))))


def _costliest_file(model: Model) -> int | None:
    lay = model.layers
    app = model.files.is_app()
    time = np.maximum.reduce([lay.posix.slowest_rank_time_s, lay.mpiio.slowest_rank_time_s,
                              lay.stdio.slowest_rank_time_s,
                              lay.library_slowest_rank_time_s])
    moved = lay.posix.bytes + lay.mpiio.bytes + lay.stdio.bytes
    score = np.where(app & (moved > 0), time + moved * 1e-15, -1.0)  # bytes break ties
    if score.size == 0 or score.max() < 0:
        return None
    return int(score.argmax())


def _sum(md: ModuleData, rows: np.ndarray, *names: str) -> int:
    return int(sum(md.pos(n)[rows].sum() for n in names))


def _access1(md: ModuleData, prefix: str, rows: np.ndarray, moved: np.ndarray
             ) -> tuple[list[int], list[int]]:
    """The most common access of the record that moved the most: lengths and strides per
    dimension, slowest first. Darshan stores H5D's first dimension in D5 and PnetCDF's in D1
    (iolab_counters.def)."""
    r = int(rows[np.argmax(moved[rows])])
    dims = range(5, 0, -1) if prefix == "H5D" else range(1, 6)
    lengths = [int(md.pos(f"{prefix}_ACCESS1_LENGTH_D{d}")[r]) for d in dims]
    strides = [int(md.pos(f"{prefix}_ACCESS1_STRIDE_D{d}")[r]) for d in dims]
    keep = [k for k, n in enumerate(lengths) if n > 0]
    return [lengths[k] for k in keep], [strides[k] for k in keep]


def library_calls(model: Model, i: int, direction: str) -> LibraryCalls | None:
    """The HDF5 / PnetCDF calls on file ``i`` in ``direction``; None without such records."""
    lib = str(model.layers.library[i])
    mod, prefix = ("H5D", "H5D") if lib == "HDF5" else ("PNETCDF_VAR", "PNETCDF_VAR")
    md = model.mods.get(mod)
    if not lib or md is None or len(md) == 0:
        return None
    rows = np.nonzero(md.file_index == i)[0]
    w = direction == "write"
    nbytes = _sum(md, rows, f"{prefix}_BYTES_{'WRITTEN' if w else 'READ'}")
    if lib == "HDF5":
        calls = _sum(md, rows, "H5D_WRITES" if w else "H5D_READS")
        coll = _sum(md, rows, "H5D_USE_MPIIO_COLLECTIVE") > 0
        nb, strided = False, 0
        irregular = _sum(md, rows, "H5D_IRREGULAR_HYPERSLAB_SELECTS", "H5D_POINT_SELECTS")
        elem_name = "H5D_DATATYPE_SIZE"
        said = [f"{calls} H5D_{'WRITES' if w else 'READS'} moving {nbytes} B "
                f"(H5D_BYTES_{'WRITTEN' if w else 'READ'})",
                "collective: H5D_USE_MPIIO_COLLECTIVE" if coll
                else "independent: H5D_USE_MPIIO_COLLECTIVE is 0"]
    else:
        kinds = {k: _sum(md, rows, f"PNETCDF_VAR_{k}_{'WRITES' if w else 'READS'}")
                 for k in ("INDEP", "COLL", "NB")}
        calls = sum(kinds.values())
        nb = kinds["NB"] > 0
        pf = model.mods.get("PNETCDF_FILE")
        if nb and pf is not None and len(pf):
            frows = np.nonzero(pf.file_index == i)[0]
            coll = (_sum(pf, frows, "PNETCDF_FILE_COLL_WAITS")
                    >= _sum(pf, frows, "PNETCDF_FILE_INDEP_WAITS"))
        else:
            coll = kinds["COLL"] >= kinds["INDEP"] and kinds["COLL"] > 0
        strided = _sum(md, rows, *(f"PNETCDF_VAR_{p}_VARS" for p in (
            ("PUT", "IPUT", "BPUT") if w else ("GET", "IGET"))))
        irregular = 0
        elem_name = "PNETCDF_VAR_DATATYPE_SIZE"
        said = [f"{calls} PnetCDF {'writes' if w else 'reads'} (PNETCDF_VAR_INDEP/COLL/NB: "
                f"{kinds['INDEP']}/{kinds['COLL']}/{kinds['NB']}) moving {nbytes} B",
                ("non-blocking, completed " if nb else "")
                + ("collectively" if coll else "independently")
                + (" (PNETCDF_FILE_COLL/INDEP_WAITS)" if nb else "")]
    if calls <= 0 or nbytes <= 0:
        return None
    moved = md.pos(f"{prefix}_BYTES_{'WRITTEN' if w else 'READ'}")
    lengths, strides = _access1(md, prefix, rows, moved)
    elem = max(1, int(md.pos(elem_name)[rows[np.argmax(moved[rows])]]))
    return LibraryCalls(mod, calls, nbytes, elem, lengths, strides, strided, irregular,
                        coll, nb, said)


def _selection(c: LibraryCalls, file_ranks: int) -> tuple[str, int]:
    """("contiguous" | "strided" | "subarray", bytes per piece of a strided selection).

    Strided: a vars call (PnetCDF), or a 1-D access whose stride is neither 1 nor its length
    (IOR passes stride = length for a contiguous block): ranks interleaving pieces of b
    elements have stride ranks x b, so a piece is the stride over the file's ranks.
    Subarray: a box with two or more dimensions of more than one element."""
    long_dims = [n for n in c.lengths if n > 1]
    if len(long_dims) >= 2:
        return "subarray", 0
    stride = next((s for n, s in zip(c.lengths, c.strides) if n > 1), 0)
    length = long_dims[0] if long_dims else 1
    if c.strided_calls or (stride > 1 and stride != length):
        piece = max(1, stride // max(file_ranks, 1)) if stride > 1 else 1
        if piece < length:
            return "strided", piece * c.elem
    return "contiguous", 0


def _direction(written: float, read: float) -> tuple[str, bool]:
    """The direction the proxy scores, and whether the job did both in earnest."""
    both = bool(read and written and min(read, written) > 0.1 * max(read, written))
    return ("write" if written >= read else "read"), both


def build_proxy(model: Model, max_ranks: int = 4, max_rank_bytes: int = 64 << 20) -> Proxy:
    """The bench options that repeat the costliest file's pattern (see the module doc);
    a UsageError with the reason when the log has no pattern to repeat."""
    i = _costliest_file(model)
    if i is None:
        raise UsageError("the log has no application file with data moved: there is no I/O "
                         "pattern to build a workload from")
    lay = model.layers
    lib = str(lay.library[i])
    file_ranks = int(model.files.nranks[i]) or 1
    shared = file_ranks > 1
    ranks = max(1, min(max_ranks, model.job.nprocs if shared else file_ranks))
    if lib in ("HDF5", "PnetCDF"):  # the library's calls, where its records hold them
        libw = library_calls(model, i, "write")
        libr = library_calls(model, i, "read")
        direction, both = _direction(libw.nbytes if libw else 0, libr.nbytes if libr else 0)
        calls = libw if direction == "write" else libr
        if calls is not None:
            return _library_proxy(model, i, "hdf5" if lib == "HDF5" else "pnetcdf", calls,
                                  direction, both, file_ranks, ranks, max_rank_bytes)
    api = "mpiio" if bool(lay.mpiio.present[i]) else "posix"
    return _layer_proxy(model, i, api, file_ranks, ranks, max_rank_bytes,
                        model.files.paths[i])


def _phases(direction: str, both: bool) -> tuple[dict[str, EngineValue], str, list[str]]:
    """The phase options, the phase the tune scores and what the description says: a read
    proxy runs the write phase first (it writes the input), evicted before the read."""
    if direction == "write" and not both:
        return {"write": True}, "write", []
    if direction == "write":
        return {}, "write", ["the job also read: both phases run, the write is scored"]
    return ({"evict": True}, "read",
            ["a read proxy: the engine's write phase writes the input first, the page cache "
             "is emptied (--evict), the read phase is scored"])


def _library_proxy(model: Model, i: int, api: str, c: LibraryCalls, direction: str,
                   both: bool, file_ranks: int, ranks: int, max_rank_bytes: int) -> Proxy:
    path = model.files.paths[i]
    kind, piece = _selection(c, file_ranks) if c.irregular < c.calls else ("contiguous", 0)
    call = max(c.elem, c.call_bytes)
    calls_per_rank = max(1, c.calls // file_ranks)
    phases, target, note = _phases(direction, both)
    args: dict[str, EngineValue] = {"api": api}
    if kind == "subarray":
        args.update(_subarray_args(c, ranks, calls_per_rank, max_rank_bytes))
        shape = ("a box of " + "x".join(str(n) for n in c.lengths) + " elements per call "
                 f"({c.module}_ACCESS1_LENGTH_D*), boxes stacked along the first dimension "
                 "(the variable's extents are not in the counters)")
    elif kind == "strided":
        call = min(call, max(piece, max_rank_bytes // piece * piece))
        call = max(piece, call // piece * piece)
        args.update({"layout": "strided", "file-view": True, "transfer": str(piece),
                     "block": str(call)})
        shape = (f"a strided selection of {call // piece} pieces of {piece} B per call "
                 f"({c.module}_ACCESS1_LENGTH/STRIDE"
                 + (", PNETCDF_VAR_*_VARS" if c.strided_calls else "") + "): one call per rank "
                 "through the same selection (--file-view)")
    else:
        call = min(call, MAX_TRANSFER)
        n = max(1, min(calls_per_rank, MAX_CALLS_PER_RANK, max_rank_bytes // call))
        layout = "fpp" if file_ranks == 1 else ("strided" if calls_per_rank > 1 and
                                                 ranks > 1 else "segmented")
        args.update({"layout": layout, "transfer": str(call), "block": str(call * n)})
        shape = (f"contiguous selections of {call} B per call ({c.module} bytes / calls; "
                 f"most common access {c.module}_ACCESS1: "
                 + "x".join(str(n) for n in c.lengths or [0]) + " elements of "
                 f"{c.elem} B)" + (", irregular selections counted as contiguous"
                                   if c.irregular else ""))
    args.update(phases)
    if c.collective:
        args["collective"] = True
    if c.nonblocking and api == "pnetcdf":
        args["pnetcdf.nonblocking"] = True
    desc = [f"proxy of {path}: {'HDF5' if api == 'hdf5' else 'PnetCDF'} "
            f"{direction}s at the library's layer, "
            f"{'shared by ' + str(file_ranks) + ' ranks' if file_ranks > 1 else 'one rank'}",
            "from " + "; ".join(c.said),
            shape,
            f"scaled to {ranks} rank(s) (the job: {model.job.nprocs} ranks, "
            f"{c.nbytes // file_ranks} B per rank on that file)", *note]
    if api == "hdf5" and not bool(model.layers.library_uses_mpiio[i]):
        desc.append("the job's HDF5 did not use the MPI-IO driver (H5F_USE_MPIIO 0); the "
                    "engine's HDF5 always does, here one rank per file as the job")
    return Proxy(Workload(args, launch={"np": ranks}), desc, target)


def _subarray_args(c: LibraryCalls, ranks: int, calls_per_rank: int,
                   max_rank_bytes: int) -> dict[str, EngineValue]:
    """A box of the recorded lengths per rank and call; the ranks' boxes stacked along the
    first dimension; one record per call (--steps), as many as fit the byte budget."""
    dims = [n for n in c.lengths if n > 0][-4:]  # the engine's arrays have 1-4 dimensions
    elem = c.elem if c.elem in ENGINE_ELEMS else 1
    if elem != c.elem:  # a type the engine has not (a compound): its bytes
        dims[-1] *= c.elem
    box = int(np.prod(dims)) * elem
    while box > MAX_TRANSFER and dims[0] > 1:  # the call's size kept up to the engine's max
        dims[0] = max(1, dims[0] // 2)
        box = int(np.prod(dims)) * elem
    steps = max(1, min(calls_per_rank, MAX_CALLS_PER_RANK, max_rank_bytes // max(box, 1)))
    grid = [dims[0] * ranks, *dims[1:]]
    pgrid = [ranks] + [1] * (len(dims) - 1)
    return {"layout": "subarray", "grid": "x".join(map(str, grid)),
            "pgrid": "x".join(map(str, pgrid)), "elem": str(elem), "steps": str(steps)}


def _layer_proxy(model: Model, i: int, api: str, file_ranks: int, ranks: int,
                 max_rank_bytes: int, path: str) -> Proxy:
    """MPI-IO, POSIX or STDIO: the calls of that layer (bytes / calls per direction)."""
    lay = model.layers
    layer = lay.mpiio if api != "posix" else (lay.posix if lay.posix.present[i] else lay.stdio)
    written, read = float(layer.bytes_written[i]), float(layer.bytes_read[i])
    direction, both = _direction(written, read)
    nbytes = written if direction == "write" else read
    calls = float((layer.writes if direction == "write" else layer.reads)[i])
    transfer = _pow2(nbytes / calls if calls else nbytes)
    shared = file_ranks > 1
    per_rank = nbytes / file_ranks
    block = int(max(transfer, min(max_rank_bytes, per_rank, transfer * MAX_CALLS_PER_RANK))
                // transfer * transfer)
    layout = "fpp"
    if shared:
        layout = "strided" if api != "posix" and transfer < per_rank else "segmented"
    phases, target, note = _phases(direction, both)
    args: dict[str, EngineValue] = {"api": api, "layout": layout, "transfer": str(transfer),
                                    "block": str(block), **phases}
    coll = lay.calls.of(direction).get("COLL")
    collective = api != "posix" and coll is not None and float(coll[i]) > 0
    if collective:
        args["collective"] = True
    module = {"mpiio": "MPIIO", "posix": "POSIX" if lay.posix.present[i] else "STDIO"}.get(
        api, "MPIIO")
    lib = str(lay.library[i])
    why_layer = (f" (the {lib} library's calls are not in the log: the requests below "
                 "them)" if lib else "")
    desc = [f"proxy of {path}: {api.upper() if api != 'posix' else module}{why_layer}, "
            f"{'shared by ' + str(file_ranks) + ' ranks' if shared else 'one file per rank'}, "
            f"{direction}s of ~{transfer} B per call"
            f"{', collective' if collective else ''}",
            f"from {int(calls)} {module} {direction}s moving {int(nbytes)} B "
            f"({module}_BYTES_{'WRITTEN' if direction == 'write' else 'READ'})"
            + (f", {module}_COLL_{'WRITES' if direction == 'write' else 'READS'}"
               if collective else ""),
            f"scaled to {ranks} rank(s) x {block} B (the job: {model.job.nprocs} ranks, "
            f"{int(per_rank)} B per rank on that file)", *note]
    return Proxy(Workload(args, launch={"np": ranks}), desc, target)


def proxy_or_reason(model: Model, max_ranks: int = 4, max_rank_bytes: int = 64 << 20
                    ) -> Proxy | str:
    """The proxy, or the one line saying why the log has none."""
    try:
        return build_proxy(model, max_ranks, max_rank_bytes)
    except UsageError as exc:
        return str(exc)
