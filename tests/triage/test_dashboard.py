"""``iolab triage --html``: the dashboard of a generated centre (six weeks, known slowdowns,
one job whose names carry ``<script>``), its plots labelled, every name escaped, nothing
loaded from the network, and a picture in headless Chromium."""

from __future__ import annotations

import html as htmllib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from weekfarm import EVIL_APP, EVIL_PATH, add_evil, make_weeks, week_label

from iolab.cli import main

BAD_NAME = "<script>alert(3)<&script>.darshan"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("dash")
    make_weeks(root / "logs")
    add_evil(root / "logs")
    (root / "logs" / BAD_NAME).write_bytes(b"")  # unreadable: its path is listed
    out = root / "triage.html"
    assert main(["triage", str(root / "logs"), "--store", str(root / "store"), "-q", "-j",
                 "1", "--top", "12", "--html", str(out)]) == 0
    return out, out.read_text(encoding="utf-8")


def _svg_texts(text: str) -> dict[str, list[str]]:
    return {m.group(1): [htmllib.unescape(t) for t in
                         re.findall(r"<text\b[^>]*>(.*?)</text>", m.group(2), flags=re.S)]
            for m in re.finditer(r'<figure id="fig-([^"]+)">(.*?)</figure>', text, flags=re.S)}


def test_every_name_from_a_log_is_text_not_html(page: tuple[Path, str]) -> None:
    """expected the executable and path with <script> shown escaped, no <script> element /
    was not checked"""
    _, text = page
    assert "<script" not in text.lower()
    assert htmllib.escape(EVIL_APP) in text
    body = re.sub(r"<svg.*?</svg>", "", text, flags=re.S)
    assert htmllib.escape(EVIL_APP) in body  # in a table, not only in a legend
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text)  # no network load
    assert htmllib.escape(BAD_NAME) in body and BAD_NAME not in text
    assert EVIL_PATH not in text  # raw, it would be markup


def test_the_dashboard_shows_trends_fixes_and_file_systems(page: tuple[Path, str]) -> None:
    _, text = page
    body = re.sub(r"<svg.*?</svg>", "", text, flags=re.S)
    for heading in ("Where the centre", "Top applications by wasted node-hours",
                    "Savings per week", "Weekly trends and slowdowns", "File systems",
                    "Top jobs by wasted node-hours"):
        assert heading in body, heading
    assert "slowing.exe (uid 3002, 64 ranks)" in body and "file system /home" in body
    assert week_label(3) in body and "closer.exe" in body and "slow-close" in body
    assert "its costliest files" in body and "/scratch/closer/ckpt." in body
    texts = _svg_texts(text)
    assert set(texts) == {"weekly-node-hours", "trend-applications", "trend-file-systems"}
    for name, words in texts.items():
        assert "week (Monday, UTC)" in words, name
        assert {"node-hours", "median I/O s per GiB"} & set(words), name
    assert "slowing.exe" in texts["trend-applications"]
    assert "flagged slowdown" in texts["trend-file-systems"]


def test_the_dashboard_is_a_picture_in_chromium(page: tuple[Path, str], tmp_path: Path) -> None:
    """expected a screenshot with text and coloured data / was never opened in a browser"""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"chromium not installed at {CHROMIUM}: the SVGs were checked, not the "
                    "picture")
    import matplotlib.image as mpimg

    out, _ = page
    png = tmp_path / "dash.png"
    with tempfile.TemporaryDirectory(prefix="iolab-chromium-") as profile:
        try:
            subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={png}",
                 "--window-size=1200,3000", out.as_uri()],
                capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            pytest.skip("chromium did not finish in 120 s on this machine")
    assert png.exists() and png.stat().st_size > 0
    img = mpimg.imread(png)[..., :3]
    dark = int((img.min(axis=2) < 0.6).sum())
    coloured = int(((img.max(axis=2) - img.min(axis=2)) > 0.3).sum())
    assert dark > 5000 and coloured > 1000, (dark, coloured)


def test_html_output_refuses_an_input_log(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """expected --html naming a log of the command refused before anything is read or
    created / the log would have been overwritten"""
    log = add_evil(tmp_path)
    before = log.read_bytes()
    where = tmp_path / "store"
    code = main(["triage", str(log), "--store", str(where), "--html", str(log)])
    err = capsys.readouterr().err
    assert code == 2 and "--html" in err and len(err.strip().splitlines()) == 1
    assert log.read_bytes() == before and not where.exists()
