"""``iolab tune --from-log``: the proxy repeats the log's costliest pattern, and diagnose's
predicted fixes are judged by the measurement (on real Darshan logs of real programs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import corpus
import pytest

from iolab.model.job import build_model
from iolab.sources import load_source
from iolab.tune.fromlog import judge
from iolab.tune.proxy import build_proxy

corpus.require(real=False)
pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
LOGS = corpus.GENERATED_DIR


def proxy_of(name: str, **kw: int):  # type: ignore[no-untyped-def]
    return build_proxy(build_model([load_source(LOGS / name)]), **kw)


@pytest.mark.parametrize("name, api, layout, collective", [
    ("mpiio_4ranks_strided4K_indep.darshan", "mpiio", "strided", False),
    ("mpiio_4ranks_strided4K_coll.darshan", "mpiio", "strided", True),
    ("posix_write_1M_x_64B.darshan", "posix", "fpp", False),
])
def test_the_proxy_repeats_the_costliest_pattern(name: str, api: str, layout: str,
                                                 collective: bool) -> None:
    p = proxy_of(name)
    assert p.workload.engine["api"] == api and p.workload.engine["layout"] == layout
    assert p.workload.collective == collective
    # these programs only write
    assert "write" in p.workload.engine and "read" not in p.workload.engine
    transfer, block = int(p.workload.engine["transfer"]), int(p.workload.engine["block"])
    assert transfer == (4096 if api == "mpiio" else 64)  # the log's bytes per call
    assert block % transfer == 0 and block // transfer <= 65536
    assert int(str(p.workload.ranks)) <= 4


def test_the_proxy_is_scaled_by_the_user() -> None:
    p = proxy_of("mpiio_4ranks_strided4K_coll.darshan", max_ranks=2, max_rank_bytes=1 << 20)
    assert str(p.workload.ranks) == "2" and int(p.workload.engine["block"]) == 1 << 20


def test_predictions_are_judged_by_the_proven_winner() -> None:
    preds = [{"rule": "r", "title": "t", "knob": k, "value": v}
             for k, v in (("collective", "true"), ("cb_nodes", "2"), ("transfer", "4194304"),
                          ("romio_cb_write", "enable"))]
    notes = ["romio_cb_write: not tuned, Open MPI's OMPIO ignores ROMIO hints"]
    tuned = {"collective", "cb_nodes", "transfer"}
    got = {j["knob"]: j for j in judge(preds, {"collective": "true", "cb_nodes": "4"}, True,
                                       tuned, notes)}
    assert got["collective"]["confirmed"]
    assert not got["cb_nodes"]["confirmed"] and "sets 4 instead" in got["cb_nodes"]["why"]
    assert not got["transfer"]["confirmed"] and "default" in got["transfer"]["why"]
    assert got["romio_cb_write"]["why"] == "not measured here: not tuned, Open MPI's OMPIO " \
                                           "ignores ROMIO hints"
    noise = judge(preds[:1], {"collective": "true"}, False, tuned, [])
    assert not noise[0]["confirmed"] and "no significant gain" in noise[0]["why"]


def test_from_log_end_to_end(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "iolab", "tune", "--db", str(tmp_path / "r.db"), "--from-log",
         str(LOGS / "mpiio_4ranks_strided4K_indep.darshan"), "--proxy-ranks", "2",
         "--proxy-bytes", "256k", "--trials", "3", "--confirm", "2", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["objective"]["from_log"]["bench_args"][:2] == ["--api", "mpiio"]
    assert "proxy of" in out.stderr
    preds = doc["predictions"]
    assert preds and all({"knob", "value", "confirmed", "why", "rule"} <= set(p) for p in preds)
    assert any(p["knob"] == "collective" and p["value"] == "true" for p in preds)


def test_from_log_with_an_option_for_a_command_is_refused(tmp_path: Path) -> None:
    """A command after '--' is proven on (tests/tune/test_proof_on_command.py); an option
    there is a mistake, refused in one line."""
    out = subprocess.run(
        [sys.executable, "-m", "iolab", "tune", "--from-log",
         str(LOGS / "mpiio_4ranks_strided4K_indep.darshan"), "--", "--trials", "3"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "unknown option '--trials'" in out.stderr


def test_collective_metadata_predicted_for_an_hdf5_job_only() -> None:
    """diagnose's HDF5 metadata fix (a snippet with H5Pset_coll_metadata_write) becomes the
    prediction hdf5.coll-metadata=true, tuned on the HDF5 proxy; a proxy of another
    interface never gets an HDF5 knob."""
    from iolab.tune.fromlog import from_log

    proxy, preds = from_log(str(LOGS / "hdf5_4ranks_collective_hyperslab.darshan"), 4, 64 << 20)
    assert proxy.api == "hdf5"
    assert ("hdf5.coll-metadata", "true") in {(p.knob, p.value) for p in preds}
    for name in ("mpiio_4ranks_strided4K_coll.darshan", "posix_write_1M_x_64B.darshan"):
        _, others = from_log(str(LOGS / name), 4, 64 << 20)
        assert not any(p.knob.startswith("hdf5.") for p in others)
