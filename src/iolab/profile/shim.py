"""Which MPI-IO shim (libiolab-trace-mpi*.so) a program needs: the one built against the MPI
library the program actually loads.

A Fortran or C++ MPI program links binding libraries (``libmpi_usempif08``, ``libmpi_mpifh``,
``libmpi_cxx``, ``libmpichfort``, ``libmpichcxx``...) and often not ``libmpi`` itself (the
linker's ``--as-needed`` drops it): the MPI library is found in the whole dependency tree, as
the dynamic loader resolves it (``ldd`` asks the loader), never in the program's own
DT_NEEDED alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from iolab import paths
from iolab.errors import UsageError

# The MPI library itself, not its language bindings: libmpi.so.40 (Open MPI, Intel MPI),
# libmpich.so.12 (MPICH, MVAPICH), libmpi_cray.so / libmpich_intel.so (vendor builds).
_CORE_MPI = re.compile(r"^lib(?:mpi|mpich)(?:_(?:cray|intel\w*|gnu\w*|nvidia\w*|ibm))?\.so(?:\.|$)")
# The HDF5 C library itself (Debian's per-MPI names, a site's plain one), not its Fortran,
# C++ or high-level companions.
_HDF5 = re.compile(r"^libhdf5(?:_openmpi|_mpich|_serial)?\.so(?:\.|$)")
_PNETCDF = re.compile(r"^libpnetcdf\.so(?:\.|$)")
_LDD_LINE = re.compile(r"^\s*(\S+)(?:\s+=>\s+(\S+))?\s+\(0x[0-9a-f]+\)\s*$")

# The MPI-IO shims: one per MPI library build (./setup: build/default with mpicc, build/mpich
# with mpicc.mpich when the default is not MPICH). The flavour says which one --mpi picks.
SHIMS: dict[str, str] = {"default": "trace-mpi", "mpich": "trace-mpi-mpich"}
# The I/O library layers: one shim per build too (libiolab-trace-hdf5.so, ...-hdf5-mpich.so).
LAYER_SHIMS: dict[str, tuple[re.Pattern[str], tuple[str, ...], str]] = {
    "HDF5": (_HDF5, ("trace-hdf5", "trace-hdf5-mpich"), "H5F/H5D"),
    "PnetCDF": (_PNETCDF, ("trace-pnetcdf", "trace-pnetcdf-mpich"), "PNETCDF_FILE/VAR"),
}
# Text each I/O library's own code carries (HDF5's version banner, the variable PnetCDF reads
# its hints from): in a program's own file, with no shared library of that name, the library
# is linked in statically (Debian's h5pcc links libhdf5.a by default), where no layer can
# interpose on its calls.
STATIC_MARKS: dict[str, bytes] = {"HDF5": b"HDF5 library version: ",
                                  "PnetCDF": b"PNETCDF_HINTS"}


def loaded_libraries(program: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every shared library the loader maps for program, soname -> resolved path (the whole
    tree, ``ldd``). Empty for a script, a static program, or when it cannot be asked."""
    path = shutil.which(program) or program
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return {}
    except OSError:
        return {}
    if shutil.which("ldd") is None:
        return {n: n for n in _needed_readelf(path)}
    env = dict(os.environ if environ is None else environ)
    env.pop("LD_PRELOAD", None)  # what the program loads, not what is preloaded
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=20,
                             env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    libs: dict[str, str] = {}
    for line in out.stdout.splitlines():
        m = _LDD_LINE.match(line)
        if m and m.group(2) != "not":
            libs[Path(m.group(1)).name] = m.group(2) or m.group(1)
    return libs


def is_static(program: str, environ: Mapping[str, str] | None = None) -> bool:
    """True for an ELF program with no program interpreter (static, or static-pie): the
    dynamic loader never runs in it, so LD_PRELOAD cannot reach it."""
    path = shutil.which(program, path=(environ or os.environ).get("PATH")) or program
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
                return False
            bits64 = head[4] == 2
            order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
            if int.from_bytes(head[16:18], order) not in (2, 3):  # ET_EXEC, ET_DYN
                return False
            phoff = int.from_bytes(head[32:40] if bits64 else head[28:32], order)
            phentsize = int.from_bytes(head[54:56] if bits64 else head[42:44], order)
            phnum = int.from_bytes(head[56:58] if bits64 else head[44:46], order)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return False
    if phentsize == 0:
        return False
    types = {int.from_bytes(table[i:i + 4], order) for i in range(0, len(table), phentsize)}
    return 3 not in types  # no PT_INTERP


def _needed_readelf(path: str) -> list[str]:
    """The program's own DT_NEEDED (no loader to ask: the best that can be done)."""
    if shutil.which("readelf") is None:
        return []
    try:
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return [ln.split("[", 1)[1].rstrip("]") for ln in out.stdout.splitlines() if "(NEEDED)" in ln]


def _library(program: str, pattern: re.Pattern[str],
             environ: Mapping[str, str] | None = None) -> str | None:
    for soname, where in sorted(loaded_libraries(program, environ).items()):
        if pattern.match(soname):
            return os.path.realpath(where) if os.path.isabs(where) else soname
    return None


def mpi_library(program: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The MPI library the program loads (its resolved real path), or None."""
    return _library(program, _CORE_MPI, environ)


def layer_shims(program: str, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The shims of the I/O libraries the program loads (HDF5, PnetCDF), each the one built
    against the very library the program loads; none for a library no shim was built for
    (said on stderr)."""
    out = []
    for lib, (pattern, names, modules) in LAYER_SHIMS.items():
        mine = _library(program, pattern, environ)
        if mine is None:
            if not is_static(program, environ) and _carries(program, STATIC_MARKS[lib],
                                                              environ):
                print(f"iolab: {program} has {lib} linked in statically (no shared "
                      f"{lib} library among its libraries): {modules} not traced (MPI-IO, "
                      f"POSIX and STDIO are); link {lib} as a shared library to trace it",
                      file=sys.stderr)
            continue
        for name in names:
            cand = find_shim(name)
            if cand is not None and _built_for(cand, pattern, environ) == mine:
                out.append(cand)
                break
        else:
            print(f"iolab profile: {program} uses {Path(mine).name}, and no {lib} layer is "
                  f"built for it: {modules} not traced (MPI-IO, POSIX and STDIO are)",
                  file=sys.stderr)
    return out


def _carries(program: str, mark: bytes, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the program's own ELF file holds ``mark`` (mapped, not read into memory)."""
    import mmap

    path = shutil.which(program, path=(environ or os.environ).get("PATH")) or program
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(mark) >= 0
    except (OSError, ValueError):  # unreadable, or empty
        return False


_LAYER_MARK = re.compile(rb"iolab-layer-library=([^\0]+)\0")


def _built_for(layer: Path, pattern: re.Pattern[str],
               environ: Mapping[str, str] | None = None) -> str | None:
    """The real path of the library a layer is built for: written in the layer by the build
    when the layer reaches its library through dlsym only (no NEEDED entry: the HDF5 layer),
    else the one it links."""
    try:
        m = _LAYER_MARK.search(layer.read_bytes())
    except OSError:
        return None
    if m:
        return os.path.realpath(m.group(1).decode(errors="replace"))
    return _library(str(layer), pattern, environ)


def one_library(layers: list[Path], mpi_shim: Path | None,
                environ: Mapping[str, str] | None = None) -> Path | None:
    """The one library that holds the tracer, mpi_shim and the layers, when the build made
    it beside them for the same MPI library (libiolab-trace-with-mpi*.so: tracer and shim;
    libiolab-trace-mpi-hdf5*.so: and the HDF5 layer): what to preload alone instead of two or
    three, since each preloaded library costs every symbol lookup of the program one more
    object to search (docs/profile.md)."""
    if mpi_shim is None:
        return None
    hdf5 = "libiolab-trace-hdf5"
    if not layers:
        one = mpi_shim.with_name(mpi_shim.name.replace("libiolab-trace-mpi",
                                                       "libiolab-trace-with-mpi"))
    elif len(layers) == 1 and layers[0].name.startswith(hdf5):
        one = layers[0].with_name(layers[0].name.replace(hdf5, "libiolab-trace-mpi-hdf5"))
    else:
        return None
    if not one.is_file() or mpi_library(str(one), environ) != mpi_library(str(mpi_shim), environ):
        return None
    return one


def find_shim(name: str) -> Path | None:
    """libiolab-<name>.so from the same build as the tracer that will be preloaded: with
    IOLAB_LIBDIR (<build>/default/interpose/trace), that folder or the MPICH build beside it
    (<build>/mpich/interpose/trace); else the install or the source tree's build/default
    (paths), else the source tree's build/mpich."""
    fname = f"libiolab-{name}.so"
    env = os.environ.get("IOLAB_LIBDIR")
    if env:
        cands = [Path(env) / fname]
        if len(Path(env).parents) >= 3:
            cands.append(Path(env).parents[2] / "mpich" / "interpose" / "trace" / fname)
        for cand in cands:
            if cand.is_file():
                return cand
    try:
        return paths.interposer_library(name)
    except UsageError:
        pass
    cand = Path(__file__).resolve().parents[3] / "build" / "mpich" / "interpose" / "trace" / fname
    return cand if cand.is_file() else None


def built_shims() -> dict[str, Path]:
    """flavour ("default", "mpich") -> shim, for the shims that are built."""
    return {k: s for k, s in ((k, find_shim(n)) for k, n in SHIMS.items()) if s is not None}


def choose(program: str, mpi_launch: bool, flavour: str,
           environ: Mapping[str, str] | None = None) -> Path | None:
    """The MPI-IO shim for program: the one built against the MPI library it loads. For a
    program that loads none (a script, Python with mpi4py) but is started as MPI ranks
    (mpi_launch), the shim of flavour ("default" or "mpich": --mpi, or the launcher's). None
    for a program that is not MPI, or when no shim matches (said on stderr)."""
    mine = mpi_library(program, environ)
    if mine is None and not mpi_launch:
        return None
    shims = built_shims()
    if mine is not None:
        for shim in shims.values():
            if mpi_library(str(shim), environ) == mine:
                return shim
        print(
            f"iolab profile: {program} uses {Path(mine).name}, and no MPI-IO shim is built for it "
            "(./setup builds one per MPI library): MPI-IO not traced (POSIX and STDIO are)",
            file=sys.stderr,
        )
        return None
    return shims.get("mpich" if flavour == "mpich" else "default") or shims.get("default")
