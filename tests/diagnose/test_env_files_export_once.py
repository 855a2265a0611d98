"""Each shell file of ``--emit-fixes`` exports a variable once.

Expected: one ``export OMPI_MCA_io_ompio_num_aggregators=`` in the aggregators fix's
``.ompio.env`` of an Open MPI job whose node count is known / was: two (cb_nodes gave one,
cb_config_list the other: ``=4`` and ``=4  # 4 per node x 1 node(s)``), and with two values
on other jobs; romio_cb_write and romio_cb_read disabled together also exported
OMPI_MCA_fcoll twice. Real Darshan 3.5 logs of real programs (the generated corpus).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import corpus
import pytest
from diagnose_logs import GENERATED, GENERATED_LOGS, log_id

EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=", re.M)


def _emit(log: Path, outdir: Path, nodes: int) -> list[Path]:
    run = subprocess.run([sys.executable, "-m", "iolab", "diagnose", str(log), "--nodes",
                          str(nodes), "--emit-fixes", str(outdir)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr  # 1: --fail-on is not given; findings exit 0
    return [p for p in outdir.rglob("*") if p.is_file() and p.suffix in (".env", ".sh")]


def _repeated(path: Path) -> list[str]:
    return [v for v, n in Counter(EXPORT.findall(path.read_text())).items() if n > 1]


@pytest.mark.parametrize("nodes", [1, 2])
def test_aggregator_count_is_exported_once(tmp_path: Path, nodes: int) -> None:
    log = GENERATED / "hdf5_4ranks_collective_hyperslab.darshan"
    if not log.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    files = _emit(log, tmp_path / "fixes", nodes)
    ompio = [p for p in files if p.name == "romio_hints_aggregators.ompio.env"]
    assert ompio, [str(p) for p in files]  # the finding this guards is still made
    text = ompio[0].read_text()
    assert len(re.findall(r"^export OMPI_MCA_io_ompio_num_aggregators=", text, re.M)) == 1, text
    assert {str(p): _repeated(p) for p in files if _repeated(p)} == {}


@corpus.needs_generated_logs
@pytest.mark.parametrize("log", GENERATED_LOGS, ids=log_id)
def test_no_emitted_shell_file_exports_a_variable_twice(tmp_path: Path, log: Path) -> None:
    files = _emit(log, tmp_path / "fixes", 1)
    assert {str(p.relative_to(tmp_path)): _repeated(p) for p in files if _repeated(p)} == {}
