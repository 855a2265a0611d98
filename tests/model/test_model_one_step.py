"""The job model is built in one step (issue 30): build_model computes the MPI-IO
implementation, the metrics and the cross-layer columns first and constructs a frozen Model
once, and the derivations type against Columns, not against the module that builds them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import corpus
import pytest

import iolab.model
from iolab.model.columns import Columns
from iolab.model.job import Model, build_model
from iolab.model.mpilib import mpi_library

darshan = pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
from iolab.sources.darshan import load_darshan_log  # noqa: E402

MODEL = Path(iolab.model.__file__).parent


def test_the_model_is_constructed_once_with_what_is_derived_from_it() -> None:
    """Expected: metrics and layers are constructor fields of a frozen Model, and the job
    carries its MPI-IO implementation from construction / was: Model built, then
    job.mpiio_implementation, model.metrics and model.layers assigned afterwards."""
    init = {f.name for f in dataclasses.fields(Model) if f.init}
    assert {"metrics", "layers", "job", "files", "mods"} <= init
    log = corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_coll.darshan"
    if not log.is_file():
        pytest.skip(f"{log} is not in the generated corpus")
    model = build_model([load_darshan_log(log)])
    assert isinstance(model, Columns)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.metrics = model.metrics  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.job.mpiio_implementation = ""  # type: ignore[misc]
    io = mpi_library(model).io
    assert model.job.mpiio_implementation == {"ompio": "OMPIO", "romio": "ROMIO"}.get(io, "")
    assert model.job.nprocs == 4 and model.layers.mpiio.present.any()


@pytest.mark.parametrize("module", ["columns", "metrics", "layers", "trace", "mpilib"])
def test_the_derivations_do_not_import_the_model_builder(module: str) -> None:
    """Expected: what build_model derives from (columns) and the derivations import nothing
    of iolab.model.job, not even for types / was: metrics, layers, trace and mpilib imported
    job.Model under TYPE_CHECKING while job imported them (a five-file cycle)."""
    tree = ast.parse((MODEL / f"{module}.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "iolab.model.job" not in imported
