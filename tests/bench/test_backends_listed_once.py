"""The backends are listed once in Python (iolab.backends), and that list is the engine's
(``iolab-bench --list-options``: its api choices, from engine/src/backends.def)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import iolab
from iolab import backends, paths
from iolab.bench import options
from iolab.errors import UsageError


def test_the_python_list_is_the_engines() -> None:
    try:
        table = options.load_table(paths.engine_binary())
    except UsageError:
        pytest.skip("the engine is not built (./setup)")
    built = set(options.built_apis(table))
    assert built and built <= set(backends.LABELS)
    # every backend the engine can be built with (backends.def) has a label
    listed = (Path(iolab.__file__).parents[2] / "engine" / "src" / "backends.def")
    if listed.is_file():
        names = {line.split("(")[1].split(")")[0] for line in listed.read_text().splitlines()
                 if line.startswith("IOLAB_BACKEND(")}
        assert names == set(backends.LABELS)
    assert set(backends.OVER_MPIIO) <= set(backends.LABELS)


def test_no_other_hand_list_of_the_mpiio_backends() -> None:
    """expected: one tuple of the backends over MPI-IO / was: four hand lists (bench's
    striping hints, bench's probe of the MPI-IO implementation, tune's objective, the page's
    labels), free to drift apart."""
    src = Path(iolab.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "backends.py" or path.parts[-2] == "ior":  # IOR's own API names
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                # ... but a list of every I/O layer (stdio too, which is no backend) is
                # another thing: settings.change.LAYERS, the layers a code change is at
                if {"mpiio", "hdf5", "pnetcdf"} <= words and "stdio" not in words:
                    found.append(f"{path.relative_to(src)}:{node.lineno}")
    assert not found, found
