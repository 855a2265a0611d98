"""`iolab hints DIR`: every effective hint of a real MPI-IO file, with ROMIO (MPICH) the
requested keys flagged as in effect, CHANGED or UNKNOWN; with Open MPI the hints marked as
unverifiable and OMPIO's MCA parameters shown instead (an OMPI_MCA_ setting seen with its
source); malformed values refused before anything runs; nothing left in DIR."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import Engine, _env

from iolab.hints import report


def iolab_hints(*argv: str, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", "hints", *argv], capture_output=True,
                          text=True, env={**_env(), **(env or {})}, timeout=120)


def test_romio_flags_changed_and_unknown(mpich_engine: Engine, scratch: Path):
    p = iolab_hints(str(scratch), "--mpi", "mpich", "--np", "2", "--json",
                    "--hint", "cb_buffer_size=1048576", "--hint", "cb_nodes=8",
                    "--hint", "iolab_no_such_hint=1")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["verifiable"] is True and d["mpiio_implementation"] == "romio"
    rows = {r["key"]: r for r in d["hints"]}
    assert rows["cb_buffer_size"]["status"] == report.IN_EFFECT
    # ROMIO caps cb_nodes at the number of hosts (one here)
    assert rows["cb_nodes"]["status"] == report.CHANGED
    assert rows["cb_nodes"]["effective"] == "1"
    assert rows["iolab_no_such_hint"]["status"] == report.UNKNOWN
    assert rows["romio_cb_write"]["status"] == report.DEFAULT
    assert list(scratch.iterdir()) == []


def test_text_table(mpich_engine: Engine, scratch: Path, tmp_path: Path):
    hf = tmp_path / "hints"
    hf.write_text("romio_cb_write enable\n")
    p = iolab_hints(str(scratch), "--mpi", "mpich", "-U", str(hf))
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("romio_cb_write"))
    assert "enable" in line and "in effect (from the hints file)" in line


def test_open_mpi_shows_ompio_parameters(engine: Engine, scratch: Path):
    p = iolab_hints(str(scratch), "--json", "--hint", "cb_buffer_size=1048576",
                    env={"OMPI_MCA_io_ompio_bytes_per_agg": "1048576"})
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["verifiable"] is False
    (row,) = d["hints"]
    assert row["status"] == report.UNVERIFIED and row["effective"] is None
    params = {x["name"]: x for x in d["ompio_params"]}
    assert params["io_ompio_bytes_per_agg"] == {"name": "io_ompio_bytes_per_agg",
                                                "value": "1048576", "source": "environment"}
    text = iolab_hints(str(scratch)).stdout
    assert "cannot be verified here" in text and "io_ompio_bytes_per_agg" in text


def test_bad_input(engine: Engine, scratch: Path):
    p = iolab_hints(str(scratch), "--hint", "cb_buffer_size=abc")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "iolab hints: hint cb_buffer_size=abc (from the command line): cb_buffer_size takes a "
        "whole number (bytes or a count, no suffix); the library would take it silently and "
        "measure something else"]
    p = iolab_hints(str(scratch / "nope"))
    assert p.returncode == 2 and "is not a directory" in p.stderr
    assert list(scratch.iterdir()) == []


def test_ompi_info_parsing():
    text = ("mca:io:ompio:param:io_ompio_bytes_per_agg:value:33554432\n"
            "mca:io:ompio:param:io_ompio_bytes_per_agg:source:default\n"
            "mca:io:ompio:param:io_ompio_priority:value:30\n"
            "mca:fcoll:vulcan:param:fcoll_vulcan_write_chunksize:value:-1\n"
            "mca:io:ompio:version:\"mca:2.1.0\"\n")
    assert report.parse_ompi_info(text) == [
        report.McaParam("io_ompio_bytes_per_agg", "33554432", "default"),
        report.McaParam("fcoll_vulcan_write_chunksize", "-1", "?")]


def test_table_header_words_are_apart(mpich_engine: Engine, scratch: Path):
    """expected ``hint  requested  effective  status`` / was ``requestedeffectivestatus``
    when every value was shorter than its column's name."""
    p = iolab_hints(str(scratch), "--mpi", "mpich", "--hint", "cb_nodes=1")
    assert p.returncode == 0, p.stderr
    header = next(ln for ln in p.stdout.splitlines() if ln.startswith("hint "))
    assert header.split() == ["hint", "requested", "effective", "status"], header
    row = next(ln for ln in p.stdout.splitlines() if ln.startswith("cb_nodes "))
    # each value starts under its column's name
    assert row.index("1 ") == header.index("requested"), (header, row)
    assert row.index("in effect") == header.index("status"), (header, row)


def test_quiet_shows_only_the_hints_asked_for(mpich_engine: Engine, scratch: Path):
    """expected -q: the header and the requested hints only / was: no -q in iolab hints."""
    p = iolab_hints(str(scratch), "--mpi", "mpich", "-q", "--hint", "cb_nodes=1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 3 and lines[2].startswith("cb_nodes "), p.stdout
    assert report.DEFAULT not in p.stdout


def test_verbose_shows_the_command(mpich_engine: Engine, scratch: Path):
    p = iolab_hints(str(scratch), "--mpi", "mpich", "-v", "--hint", "cb_nodes=1")
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("iolab hints: running ") and "iolab-bench" in p.stderr


def test_open_mpi_advice_names_no_option_hints_lacks(engine: Engine, scratch: Path):
    """expected the MCA advice as an environment variable / was ``--mca``, an option
    iolab hints does not have."""
    p = iolab_hints(str(scratch), "--hint", "cb_nodes=1")
    assert p.returncode == 0, p.stderr
    if "MPI-IO ompio" not in p.stdout.splitlines()[0]:
        pytest.skip("the default build's MPI-IO is not OMPIO")
    assert "--mca" not in p.stdout and "OMPI_MCA_<name>=VALUE" in p.stdout
