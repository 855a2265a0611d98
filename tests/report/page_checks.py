"""What every report page must show, checked on its HTML and in headless Chromium: every plot
has data and labelled axes in its SVG, and the page's screenshot is a picture, not one colour
(tests/report/test_every_page.py for every stored kind, test_study.py for a study's page)."""

from __future__ import annotations

import asyncio
import base64
import html as htmllib
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Coroutine
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


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
WIDTH, HEIGHT = 1200, 3000
TIMEOUT_S = 120


def _screenshot(html_file: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="iolab-chromium-") as profile:
        try:
            subprocess.run(
                [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                 f"--window-size={WIDTH},{HEIGHT}", html_file.as_uri()],
                capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.skip(f"chromium did not finish in {TIMEOUT_S} s on this machine")


class Chromium:
    """One headless Chromium for many pages' screenshots, driven over its DevTools protocol
    (the websocket client of tornado, which dask's distributed brings). Starting Chromium was
    most of each page's check (2-3 s; a screenshot in a running one is a fraction of that).
    Each page is still its own document: opened at its file URL in the same window
    (1200x3000 at scale 1, the same flags) and shot once its load event fired, as
    ``--screenshot`` does (the same PNG, pixel for pixel, on a test page)."""

    def __init__(self) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="iolab-chromium-")
        self._proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile.name}",
             f"--window-size={WIDTH},{HEIGHT}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._loop = asyncio.new_event_loop()
        self._next_id = 0
        self._loaded = False
        self._ws: Any = None
        try:
            self._ws = self._run(self._connect())
            self._run(self._call("Page.enable"))
            self._run(self._call("Emulation.setDeviceMetricsOverride", width=WIDTH,
                                 height=HEIGHT, deviceScaleFactor=1, mobile=False))
        except BaseException:
            self.close()
            raise

    def _run(self, work: Coroutine[Any, Any, Any]) -> Any:
        try:
            return self._loop.run_until_complete(asyncio.wait_for(work, TIMEOUT_S))
        except TimeoutError:
            pytest.skip(f"chromium did not answer in {TIMEOUT_S} s on this machine")

    async def _connect(self) -> Any:
        from tornado.websocket import websocket_connect

        # Chromium writes its port here once it listens (port 0: a free one)
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        while not port_file.exists() or len(port_file.read_text().splitlines()) < 2:
            assert self._proc.poll() is None, f"chromium ended ({self._proc.returncode})"
            await asyncio.sleep(0.05)
        port = port_file.read_text().splitlines()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            (tab,) = [t for t in json.load(r) if t["type"] == "page"]
        return await websocket_connect(tab["webSocketDebuggerUrl"], max_message_size=1 << 30)

    async def _message(self) -> dict[str, Any]:
        text = await self._ws.read_message()
        assert text is not None, "chromium closed its DevTools connection"
        msg: dict[str, Any] = json.loads(text)
        if msg.get("method") == "Page.loadEventFired":
            self._loaded = True
        return msg

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        self._ws.write_message(json.dumps({"id": self._next_id, "method": method,
                                           "params": params}))
        while True:
            msg = await self._message()
            if msg.get("id") == self._next_id:
                assert "error" not in msg, (method, msg["error"])
                result: dict[str, Any] = msg["result"]
                return result

    async def _shoot(self, html_file: Path) -> bytes:
        self._loaded = False
        went = await self._call("Page.navigate", url=html_file.as_uri())
        assert "errorText" not in went, (html_file, went)
        while not self._loaded:
            await self._message()
        shot = await self._call("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])

    def screenshot(self, html_file: Path, png: Path) -> None:
        png.write_bytes(self._run(self._shoot(html_file)))

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
        self._proc.terminate()
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        # tornado's pending callbacks of the closed connection, then the loop
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()
        for _ in range(50):  # Chromium's last writes into its profile can trail its exit
            try:
                self._profile.cleanup()
                break
            except OSError:
                time.sleep(0.1)


def assert_picture_in_chromium(html: str, stem: Path, kind: str,
                               chromium: Chromium | None = None) -> None:
    """The page opened in headless Chromium is a picture: several colours, text and axes,
    and the data's colours (skipped, saying so, without Chromium). ``chromium``: a running
    one to open it in, else a Chromium of its own."""
    if not HAS_CHROMIUM:
        pytest.skip(f"chromium not installed at {CHROMIUM}: the SVGs were checked, not the "
                    "picture")
    import matplotlib.image as mpimg

    out, png = stem.with_suffix(".html"), stem.with_suffix(".png")
    out.write_text(html)
    if chromium is not None:
        chromium.screenshot(out, png)
    else:
        _screenshot(out, png)
    assert png.exists() and png.stat().st_size > 0, f"{kind}: no screenshot"
    img = mpimg.imread(png)[..., :3]
    assert img.reshape(-1, 3).std(axis=0).max() > 0.01, f"{kind}: one colour"
    # pixels, not shares: a short page leaves most of the 1200x3000 window white
    dark = int((img.min(axis=2) < 0.6).sum())  # text, axes, bars
    coloured = int(((img.max(axis=2) - img.min(axis=2)) > 0.3).sum())  # the data's colours
    assert dark > 5000 and coloured > 1000, (kind, dark, coloured)
