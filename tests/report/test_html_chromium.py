"""The report page in real headless Chromium: no console errors, no network request, plots
visible (the screenshot is not blank and differs between two jobs), hostile names escaped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from report_jobs import traced_job

from iolab.diagnose.config import Thresholds
from iolab.diagnose.page import log_page
from iolab.diagnose.report import diagnose
from iolab.pages.page import render

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
EVIL = "/scratch/<img src=x onerror=alert(1)>.dat"
# Chromium's own traffic (updates, spell-check dictionaries) off: what is left is the page's.
QUIET_BROWSER = ("--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", "--no-first-run",
                 "--disable-features=SpellcheckService,OptimizationHints,Translate")
# ...and the update / clock checks those flags leave on: Chromium's, not the page's.
CHROMIUM_SERVICES = (".google.com", ".googleapis.com", ".gvt1.com")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed")


def _page(tmp: Path, stem: str, **kw: object) -> Path:
    path = tmp / f"{stem}.html"
    path.write_text(render(log_page([diagnose(traced_job(**kw), Thresholds())])))  # type: ignore[arg-type]
    return path


def _chromium(tmp: Path, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--enable-logging=stderr", "--v=0", *QUIET_BROWSER,
             f"--user-data-dir={tmp / 'profile'}",
             *extra, page.as_uri()], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("chromium did not finish in 120 s on this machine")


def test_escaped_quiet_offline_and_visible(tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    evil = _page(tmp_path, "evil", name=EVIL, exe='./app"><script>alert(2)</script>')
    text = evil.read_text()
    assert "<img" not in text and "<script" not in text and "&lt;img src=x onerror=" in text
    net = tmp_path / "net.json"
    dom = _chromium(tmp_path, evil, "--dump-dom", f"--log-net-log={net}")
    assert "<img" not in dom.stdout and "<script" not in dom.stdout
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom.stdout  # shown as text
    assert "<svg" in dom.stdout  # the plots are in the DOM
    console = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln or "Refused" in ln]
    assert console == []
    events = json.loads(net.read_text() or "{}").get("events", []) if net.exists() else []
    urls = {str(e.get("params", {}).get("url", "")) for e in events}
    from urllib.parse import urlparse

    page_urls = [u for u in urls if u.startswith(("http:", "https:", "ws:", "ftp:"))
                 and not (urlparse(u).hostname or "").endswith(CHROMIUM_SERVICES)]
    assert page_urls == [], page_urls

    shots = []
    for name, kw in (("a", {"ranks": 2}), ("b", {"ranks": 8, "slow_rank": 5})):
        page = _page(tmp_path, name, **kw)
        png = tmp_path / f"{name}.png"
        _chromium(tmp_path, page, f"--screenshot={png}", "--window-size=1200,2400")
        img = mpimg.imread(png)[..., :3]
        # not blank: many pixels far from white, in colour (the plots' bars)
        dark = (img.min(axis=2) < 0.6).mean()
        coloured = ((img.max(axis=2) - img.min(axis=2)) > 0.3).mean()
        assert dark > 0.01 and coloured > 0.005, (dark, coloured)
        shots.append(img)
    assert shots[0].shape == shots[1].shape
    assert np.abs(shots[0] - shots[1]).mean() > 0.001  # two jobs, two pictures
