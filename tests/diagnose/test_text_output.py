"""The terminal report read by a human through a pipe.

Expected / was: piped output (`iolab diagnose LOG | cat`) is wrapped at 100 columns (or
$COLUMNS) at word boundaries, every continued line indented under its paragraph / lines were
broken mid-sentence and continued at column 0. The top fixes list three items when three
findings with fixes exist / it listed 2 for posix_write_1M_x_64B (3 HIGH findings: the
io-bound advice was left out).
"""

from __future__ import annotations

import io
import re
import subprocess
import sys

import corpus
import pytest
from diagnose_logs import GENERATED, REAL_LOGS

from iolab.diagnose.config import Thresholds
from iolab.diagnose.render_text import render_text
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")

SMALL_LOG = GENERATED / "posix_write_1M_x_64B.darshan"
corpus.require()
# 2,000,000 fwrite() of 512 B in a 1.8 s run: findings that cost more than a second.
STDIO_LOG = GENERATED / "stdio_fwrite_2M_x_512B.darshan"
MPI_DXT = next(p for p in REAL_LOGS if "mpi_io_test_with_dxt" in str(p))


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def _check_layout(text: str, width: int) -> None:
    lines = _lines(text)
    assert max(len(ln) for ln in lines) <= width
    for prev, line in zip(lines, lines[1:]):
        # a line that continues a paragraph starts indented, deeper than a finding's head
        if line and not line.startswith(" ") and prev.strip():
            assert line.split()[0] in ("HIGH", "WARN", "INFO", "Summary:", "not", "thresholds:",
                                       "No", "iolab"), line


def test_piped_output_wraps_with_hanging_indent() -> None:
    run = subprocess.run([sys.executable, "-m", "iolab", "diagnose", "-v", str(SMALL_LOG)],
                         capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)})
    assert run.returncode == 0, run.stderr
    _check_layout(run.stdout, 100)
    lines = _lines(run.stdout)
    # 0.92 s of small writes: never HIGH in a 1.1 s run; within severity_margin of the 1 s
    # INFO line, so WARN (a run at 1.05 s the next day keeps the same severity)
    head = next(i for i, ln in enumerate(lines) if ln.startswith("WARN small-requests"))
    assert lines[head + 1].startswith("     1000000 of 1000000 POSIX writes")
    assert lines[head + 3].startswith("     costs 920.7 ms")
    assert lines[head + 2].startswith("       several ranks")  # the wrapped tail, indented
    assert "\x1b[" not in run.stdout  # no colour codes in a pipe


@pytest.mark.parametrize("columns", ["72", "140"])
def test_columns_sets_the_width(monkeypatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    rep = diagnose(build_model([load_darshan_log(MPI_DXT)]), Thresholds())
    buf = io.StringIO()
    render_text(rep, buf, color=False, verbose=True)
    _check_layout(buf.getvalue(), int(columns))
    longest = max(len(ln) for ln in _lines(buf.getvalue()))
    assert longest > int(columns) - 15  # the width is used, not a fixed narrower one


def test_top_fixes_count_each_second_once() -> None:
    """The buffering fix works on the same stream's writes as the STDIO one: the same
    seconds (was: both HIGH, both in the top fixes with "not in addition"): it says so, is
    not HIGH, and the top fixes go to fixes that buy other time (here the generic advice)."""
    rep = diagnose(build_model([load_darshan_log(STDIO_LOG)]), Thresholds())
    assert [f.key for f in rep.findings if f.severity == "high"] == ["stdio-share", "io-bound"]
    tops = rep.summary.top_fixes
    assert [t.split(":")[0] for t in tops] == ["stdio-share", "io-bound"]
    assert "[saves up to 1.6 s (88.5% of the run)]" in tops[0]
    serial = next(f for f in rep.findings if f.key == "small-serial-io/write")
    # graded by what it owns: nothing (was: WARN on seconds stdio-share already counts)
    assert serial.same_time_as == ["stdio-share"] and serial.severity == "info"
    buf = io.StringIO()
    render_text(rep, buf, color=False)
    out = " ".join(buf.getvalue().split())
    assert "1. stdio-share:" in out and "2. io-bound:" in out
    assert "the same time as stdio-share, not in addition" in out


def test_one_line_per_rule_when_both_directions_share_a_fix() -> None:
    th = Thresholds()
    th.cost_info_s = 0.0  # the 0.07 s run's findings cost milliseconds: count them here
    rep = diagnose(build_model([load_darshan_log(
        GENERATED / "posix_mixed_rw_random_reads_dxt.darshan")]), th)
    tops = rep.summary.top_fixes
    assert tops[0].startswith("small-requests (read, write): ")
    # the random reads are the same small reads of the same file: the same seconds, not a
    # second saving (was: a second top fix)
    rnd = next(f for f in rep.findings if f.key == "random-access/read")
    assert rnd.same_time_as == ["small-requests/read"]
    assert len(tops) == 1


def test_severity_in_words_and_colour_only_repeats_it() -> None:
    rep = diagnose(build_model([load_darshan_log(STDIO_LOG)]), Thresholds())
    buf = io.StringIO()
    render_text(rep, buf, color=True, width=100)
    heads = [ln for ln in _lines(buf.getvalue()) if "stdio-share" in ln
             and "STDIO" in ln and ln.lstrip("\x1b[0123456789;m").startswith(("HIGH", "\x1b"))]
    assert len(heads) == 1 and re.match(
        r"\x1b\[[0-9;]*mHIGH ?\x1b\[0m ?stdio-share", heads[0]), heads


def test_timeline_is_in_the_summary() -> None:
    rep = diagnose(build_model([load_darshan_log(MPI_DXT)]), Thresholds())
    buf = io.StringIO()
    render_text(rep, buf, color=False, width=100)
    out = " ".join(buf.getvalue().split())
    assert "timeline from the trace (576 operations, complete): 1 I/O phase" in out
    assert "up to 32 rank(s) at once" in out
    from iolab.diagnose.render_html import render_html

    assert "timeline from the trace (576 operations, complete)" in render_html([rep])
    partial = next(p for p in REAL_LOGS if p.name == "partial_data_dxt.darshan")
    buf = io.StringIO()
    render_text(diagnose(build_model([load_darshan_log(partial)]), Thresholds()), buf,
                color=False, width=100)
    assert "operations, PARTIAL: DXT_POSIX ran out of memory" in " ".join(buf.getvalue().split())


def test_cost_and_cross_layer_table_in_text_and_html() -> None:
    """Each finding shows its cost; the summary shows bytes and the slowest rank's time per
    layer for the files that cost most (MPI-IO over POSIX here)."""
    from iolab.diagnose.render_html import render_html

    rep = diagnose(build_model([load_darshan_log(
        GENERATED / "mpiio_4ranks_strided4K_coll.darshan")]), Thresholds())
    buf = io.StringIO()
    render_text(rep, buf, color=False, width=120)
    out = buf.getvalue()
    lines = _lines(out)
    head = next(i for i, ln in enumerate(lines) if "mpiio_bytes" in ln)
    assert lines[head].split() == ["file", "mpiio_bytes", "mpiio_s", "posix_bytes", "posix_s"]
    row = lines[head + 1].split()
    assert row[0] == "/tmp/dtests/shared_coll.dat" and row[1:3] == ["256", "MiB"]
    assert "stdio_bytes" not in out  # no application file goes through STDIO
    tiny = next(i for i, ln in enumerate(lines) if ln.startswith("HIGH tiny-collective-calls"))
    assert lines[tiny + 3].strip().startswith("costs 1.4 s (87.")
    html = render_html([rep])
    assert "<b>Cost:</b> costs 1.4 s (87." in html
    assert "<th>mpiio_bytes</th><th>mpiio_s</th><th>posix_bytes</th><th>posix_s</th>" in html


def test_io_through_modules_no_rule_reads_is_said() -> None:
    """Expected / was: an IOR run through DAOS's DFS API (corpus) said only "No problem
    found by any rule", as if its I/O had been judged; the text, HTML and JSON now name the
    I/O modules no rule reads (never the non-I/O ones: HEATMAP, APMPI, BG/Q)."""
    from iolab.diagnose.render_html import render_html
    from iolab.diagnose.report import to_dict

    path = next((p for p in REAL_LOGS if p.name.startswith("snyder_ior-DFS")), None)
    if path is None:
        pytest.skip("the corpus's ior_daos DFS log is not here")
    rep = diagnose(build_model([load_darshan_log(path)]), Thresholds())
    assert rep.model.job.unread_io_modules == ["DAOS", "DFS"]
    assert to_dict(rep)["job"]["unread_io_modules"] == ["DAOS", "DFS"]
    buf = io.StringIO()
    render_text(rep, buf, color=False, width=200)
    assert "I/O through DAOS, DFS is in the log but no rule reads it" in buf.getvalue()
    assert "I/O through DAOS, DFS" in render_html([rep])
    other = next(p for p in REAL_LOGS if p.name == "mpi-io-test.darshan")  # APMPI, APXC
    assert build_model([load_darshan_log(other)]).job.unread_io_modules == []
