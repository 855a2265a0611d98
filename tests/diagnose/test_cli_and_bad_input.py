"""The command line: exit codes, --fail-on, --each, --json, --emit-fixes, --config; and bad
input (truncated logs, random bytes, text, a directory, a missing file): one line, exit 2."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import corpus
import pytest
from diagnose_logs import GENERATED, REAL_LOGS

from iolab.cli import main

pytestmark = pytest.mark.usefixtures("darshan_available")
corpus.require()

SMALL_LOG = GENERATED / "posix_write_1M_x_64B.darshan"
CLEAN_LOG = next(p for p in REAL_LOGS if p.name == "mpi-io-test-x86_64-3.4.6.darshan")


def _one_line_exit_2(capsys, *args: str) -> str:
    rc = main(["diagnose", *args])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("iolab diagnose: ")
    return lines[0]


def test_missing_file(capsys) -> None:
    assert "no such file" in _one_line_exit_2(capsys, "/nonexistent/x.darshan")


def test_directory(tmp_path: Path, capsys) -> None:
    assert "is a directory" in _one_line_exit_2(capsys, str(tmp_path))


def test_text_file(tmp_path: Path, capsys) -> None:
    p = tmp_path / "notes.txt"
    p.write_text("this is not a darshan log\n" * 10)
    assert "not a Darshan log" in _one_line_exit_2(capsys, str(p))


def test_random_bytes(tmp_path: Path, capsys) -> None:
    p = tmp_path / "random.darshan"
    p.write_bytes(os.urandom(4096))
    _one_line_exit_2(capsys, str(p))


def test_bzip2_log_is_explained(tmp_path: Path, capsys) -> None:
    data = bytearray(SMALL_LOG.read_bytes())
    data[16] = 1  # header comp_type: DARSHAN_BZIP2_COMP
    p = tmp_path / "bz.darshan"
    p.write_bytes(bytes(data))
    assert "bzip2" in _one_line_exit_2(capsys, str(p))


@pytest.mark.parametrize("log", [SMALL_LOG, GENERATED / "posix_mixed_rw_random_reads_dxt.darshan",
                                 next(p for p in REAL_LOGS if p.name.endswith("3.1.8.darshan"))],
                         ids=lambda p: p.name[:30])
@pytest.mark.parametrize("frac", [0.0, 0.01, 0.05, 0.2, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99])
def test_truncated_log(tmp_path: Path, capsys, log: Path, frac: float) -> None:
    # expected: one line, exit 2 / was: SIGSEGV inside libdarshan-util for some cuts
    data = log.read_bytes()
    p = tmp_path / "cut.darshan"
    p.write_bytes(data[:int(len(data) * frac)])
    # the DXT log's trace runs from byte 2814 to 100018 of 100068: a cut there keeps the
    # counters and is one note (test_dxt_unreadable.py), not a refusal
    if log.name.startswith("posix_mixed_rw_random_reads_dxt") and frac >= 0.05:
        assert main(["diagnose", str(p)]) == 0
        assert "note: DXT trace present but unreadable" in capsys.readouterr().out
        return
    _one_line_exit_2(capsys, str(p))


def test_truncated_by_one_byte(tmp_path: Path, capsys) -> None:
    p = tmp_path / "cut.darshan"
    p.write_bytes(SMALL_LOG.read_bytes()[:-1])
    assert "truncated" in _one_line_exit_2(capsys, str(p))


def test_fail_on(capsys) -> None:
    # 1.6 s of a 1.8 s run in 512 B fwrite()s: HIGH
    assert main(["diagnose", "--fail-on", "high",
                 str(GENERATED / "stdio_fwrite_2M_x_512B.darshan")]) == 1
    # the 64 B writes cost 0.92 s of a 1.1 s run: INFO (under a second), no HIGH
    assert main(["diagnose", "--fail-on", "high", str(SMALL_LOG)]) == 0
    assert main(["diagnose", "--fail-on", "warn", str(CLEAN_LOG)]) == 0
    assert main(["diagnose", str(SMALL_LOG)]) == 0
    capsys.readouterr()


def test_json_schema(capsys) -> None:
    assert main(["diagnose", "--json", "-", str(SMALL_LOG)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1
    assert doc["summary"]["io_bound"] == "yes"
    assert {f["rule_id"] for f in doc["findings"]} >= {"small-requests", "small-serial-io"}
    assert doc["thresholds"]["small_requests_min"] == 1000


def test_each_and_joint(capsys) -> None:
    logs = [str(p) for p in REAL_LOGS if "dlio_logs" in str(p)][:3]
    assert main(["diagnose", "--json", "-", "--each", *logs]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["reports"]) == 3
    assert main(["diagnose", "--json", "-", *logs]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["job"]["nprocs"] == 3 and doc["job"]["logs"] == 3


def test_emit_fixes(tmp_path: Path, capsys) -> None:
    log = GENERATED / "mpiio_4ranks_strided4K_indep.darshan"
    assert main(["diagnose", "--emit-fixes", str(tmp_path), str(log)]) == 0
    capsys.readouterr()
    # the calls are independent: collective buffering's hints cannot act on them, in no
    # finding's folder (expected / was: a romio_cb_write hints file under
    # mpiio-independent-write, which acts only once the calls are collective); the switch to
    # collective calls is code, with Open MPI's switch to ROMIO to measure it under both
    assert not list(tmp_path.glob("*/romio_hints*"))
    cb = tmp_path / "mpiio-independent-write"
    assert "OMPI_MCA_io=^ompio" in (cb / "romio_switch.env").read_text()
    for ext in ("c", "f90", "py"):
        assert (cb / f"collective_io.{ext}").read_text().strip()
    assert "collective-buffering-write/" in (tmp_path / "README.md").read_text()


def test_config_file_then_command_line(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "th.toml"
    cfg.write_text("[thresholds]\nsmall_requests_min = 2000000\nrandom_share = 0.5\n")
    assert main(["diagnose", "--json", "-", "--config", str(cfg), str(SMALL_LOG)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["thresholds"]["small_requests_min"] == 2_000_000
    assert "small-requests" not in {f["rule_id"] for f in doc["findings"]}
    assert main(["diagnose", "--json", "-", "--config", str(cfg), "--set",
                 "small_requests_min=10", str(SMALL_LOG)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["thresholds"]["small_requests_min"] == 10
    assert doc["thresholds"]["random_share"] == 0.5


def test_bad_config(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "th.toml"
    cfg.write_text("nonsense_threshold = 3\n")
    assert "unknown threshold" in _one_line_exit_2(capsys, "--config", str(cfg), str(SMALL_LOG))
    assert "wants a float" in _one_line_exit_2(capsys, "--set", "random_share=abc",
                                               str(SMALL_LOG))


def test_rules_doc_is_generated_and_current() -> None:
    from iolab.diagnose.docs import rules_markdown
    from iolab.diagnose.rules import registry

    doc = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert doc.read_text() == rules_markdown(), "regenerate: python -m iolab.diagnose.docs"
    from iolab.diagnose.examples import EXAMPLES

    assert set(EXAMPLES) == {r.id for r in registry()}  # one example per rule, no stale one
    for r in registry():
        assert r.sources and r.why and r.effect and r.severity in ("high", "warn", "info")
        # where it comes from: a corpus log, a test program or a log a test writes
        assert re.match(r"(darshan-logs/|darshan-generated/|test program tests/|"
                        r"tests/diagnose/darshan35/|written log \(tests/)", EXAMPLES[r.id]), r.id
        # a kept Darshan 3.5 run is in the repository; a written log says what a real one needs
        for kept in re.findall(r"tests/diagnose/darshan35/([\w.-]+\.darshan)", EXAMPLES[r.id]):
            assert (doc.parents[1] / "tests/diagnose/darshan35" / kept).is_file(), kept
        if EXAMPLES[r.id].startswith("written log"):
            assert "written: needs " in EXAMPLES[r.id], r.id


def test_bad_node_counts(capsys) -> None:
    assert "--nodes 0: must be at least 1" in _one_line_exit_2(capsys, "--nodes", "0",
                                                               str(SMALL_LOG))
    assert "--cores-per-node 0" in _one_line_exit_2(capsys, "--cores-per-node", "0",
                                                    str(SMALL_LOG))


def test_bad_profile_is_one_line(tmp_path: Path, capsys) -> None:
    p = tmp_path / "job.iolab"
    p.write_text('{"type": "nonsense"}\n')
    _one_line_exit_2(capsys, str(p))


def test_profile_folder_is_not_a_darshan_directory_error(tmp_path: Path, capsys) -> None:
    # a folder without profile parts is judged as a (wrong) Darshan path: "is a directory"
    assert "is a directory" in _one_line_exit_2(capsys, str(tmp_path))
