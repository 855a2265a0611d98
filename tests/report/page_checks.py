"""What every report page must show, checked on its HTML and in headless Chromium: every plot
has data and labelled axes in its SVG, and the page's screenshot is a picture, not one colour
(tests/report/test_every_page.py for every stored kind, test_study.py for a study's page)."""

from __future__ import annotations

import html as htmllib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HAS_CHROMIUM = Path(CHROMIUM).exists()


def svg_texts(html: str) -> dict[str, list[str]]:
    """Figure name -> the text of every <text> element of its SVG."""
    out = {}
    for m in re.finditer(r'<figure id="fig-([^"]+)">(.*?)</figure>', html, flags=re.S):
        out[m.group(1)] = [htmllib.unescape(t) for t in
                           re.findall(r"<text\b[^>]*>(.*?)</text>", m.group(2), flags=re.S)]
    return out


def check_figures(html: str, figs: dict[str, Any]) -> None:
    """Every drawn figure is on the page, has data, and its axis labels are in its SVG."""
    texts = svg_texts(html)
    assert set(texts) == {f"{n}" for n in figs}, (sorted(texts), sorted(figs))
    for name, fig in figs.items():
        with_data = [ax for ax in fig.axes if ax.has_data()]
        assert with_data, f"{name}: an empty plot"
        for ax in with_data:
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                assert label, f"{name}: an axis without a label"
                assert label in texts[name], f"{name}: {label!r} not in its SVG"


def _screenshot(html_file: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="iolab-chromium-") as profile:
        try:
            subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                 f"--user-data-dir={profile}", f"--screenshot={png}",
                 "--window-size=1200,3000", html_file.as_uri()],
                capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            pytest.skip("chromium did not finish in 120 s on this machine")


def assert_picture_in_chromium(html: str, stem: Path, kind: str) -> None:
    """The page opened in headless Chromium is a picture: several colours, text and axes,
    and the data's colours (skipped, saying so, without Chromium)."""
    if not HAS_CHROMIUM:
        pytest.skip(f"chromium not installed at {CHROMIUM}: the SVGs were checked, not the "
                    "picture")
    import matplotlib.image as mpimg

    out, png = stem.with_suffix(".html"), stem.with_suffix(".png")
    out.write_text(html)
    _screenshot(out, png)
    assert png.exists() and png.stat().st_size > 0, f"{kind}: no screenshot"
    img = mpimg.imread(png)[..., :3]
    assert img.reshape(-1, 3).std(axis=0).max() > 0.01, f"{kind}: one colour"
    # pixels, not shares: a short page leaves most of the 1200x3000 window white
    dark = int((img.min(axis=2) < 0.6).sum())  # text, axes, bars
    coloured = int(((img.max(axis=2) - img.min(axis=2)) > 0.3).sum())  # the data's colours
    assert dark > 5000 and coloured > 1000, (kind, dark, coloured)
