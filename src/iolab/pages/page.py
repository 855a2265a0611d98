"""An HTML page: sections of text, tables and figures, rendered as one HTML file.

Self-contained and safe: every string goes through :func:`html.escape` (names from a log or
a path included), plots are inline SVG drawn by matplotlib (text as escaped <text> elements;
its comments, which can repeat label text, are stripped), and a Content-Security-Policy
forbids scripts and every network load, so even a missed escape could not run code or fetch
anything.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Union

from iolab import cli_common

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;
border-bottom:1px solid #ddd}.sub{color:#555;margin-top:0}
table{border-collapse:collapse;font-size:.9em;margin:.6em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}
caption{text-align:left;font-weight:bold;padding:.3em 0}
figure{margin:1em 0}figcaption{color:#555;font-size:.9em}
figure svg{max-width:100%;height:auto}
pre{background:#f5f5f5;padding:.5em;overflow-x:auto}
.sev{padding:0 .4em;border-radius:3px}.details h1{font-size:1.2em}
.finding{border-left:4px solid #999;padding-left:1em;margin:1em 0}
.high{color:#b71c1c;font-weight:bold}.warn{color:#e65100;font-weight:bold}.info{color:#1565c0}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_NUMERIC = re.compile(r"^[-+]?[\d,.]+(\s?(%|x|[KMGTP]?i?B(/s)?|s|ms|µs|min|h))?$")


def _e(x: object) -> str:
    return escape(str(x), quote=True)


@dataclass
class Text:
    text: str
    css: str = ""  # a class: "high", "warn", "info"


@dataclass
class Pre:
    text: str


@dataclass
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[object]]
    caption: str = ""


@dataclass
class Plot:
    """One figure: ``draw`` makes the matplotlib figure from prepared data (plots.py)."""

    name: str  # file name stem for --figures (letters, digits, '-')
    caption: str
    draw: Callable[[], MplFigure]


@dataclass
class Html:
    """HTML made by another iolab renderer that escapes every name itself (the diagnosis
    details of iolab.diagnose.render_html); never text from a log."""

    html: str


Block = Union[Text, Pre, Table, Plot, Html]


@dataclass
class Section:
    heading: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Page:
    title: str
    subtitle: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)

    def plots(self) -> list[Plot]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Plot)]


def _svg(fig: MplFigure, salt: str) -> str:
    import matplotlib  # deferred: matplotlib (~0.5 s to load) only when a page is drawn

    # Text as <text>, not glyph outlines: the labels can be selected, searched and read by
    # a screen reader (and a test can check each axis is labelled); matplotlib escapes it.
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    text = text[text.find("<svg"):]  # no XML declaration or DOCTYPE inside HTML
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def _table(t: Table) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in t.headers)
    body = []
    for row in t.rows:
        cells = "".join(
            f'<td class="n">{_e(c)}</td>' if _NUMERIC.match(str(c)) else f"<td>{_e(c)}</td>"
            for c in row)
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{_e(t.caption)}</caption>" if t.caption else ""
    return f"<table>{cap}<tr>{head}</tr>{''.join(body)}</table>"


def _block(b: Block, figures: dict[str, MplFigure]) -> str:
    if isinstance(b, Text):
        cls = f' class="{_e(b.css)}"' if b.css else ""
        return f"<p{cls}>{_e(b.text)}</p>"
    if isinstance(b, Pre):
        return f"<pre>{_e(b.text)}</pre>"
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Html):
        return f'<div class="details">{b.html}</div>'
    fig = figures[b.name]
    return (f'<figure id="fig-{_e(b.name)}">{_svg(fig, b.name)}'
            f"<figcaption>{_e(b.caption)}</figcaption></figure>")


def draw_all(page: Page) -> dict[str, MplFigure]:
    """Every figure of the page, drawn once (for the page and for --figures)."""
    # plots (numpy) only when a page is drawn: verbs that may write a page import this
    # module at start-up (compare, study), most of their runs draw none
    from iolab.pages.plots import use_agg

    use_agg()
    names = [p.name for p in page.plots()]
    if len(names) != len(set(names)):
        raise ValueError(f"figure names must be unique: {names}")
    return {p.name: p.draw() for p in page.plots()}


def render(page: Page, figures: dict[str, MplFigure] | None = None) -> str:
    """The whole HTML document."""
    figs = draw_all(page) if figures is None else figures
    parts = [f"<h1>{_e(page.title)}</h1>"]
    parts += [f'<p class="sub">{_e(s)}</p>' for s in page.subtitle]
    for sec in page.sections:
        parts.append(f"<h2>{_e(sec.heading)}</h2>")
        parts += [_block(b, figs) for b in sec.blocks]
    body = "\n".join(parts)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
            f"<title>{_e(page.title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
            "</body></html>\n")


def export_figures(figures: dict[str, MplFigure], folder: Path) -> list[Path]:
    """Each figure as PNG (150 dpi) and SVG, for papers; returns the files written."""
    out = []
    for name, fig in figures.items():
        for ext in ("png", "svg"):
            path = folder / f"{name}.{ext}"
            fig.savefig(path, format=ext, dpi=150, bbox_inches="tight",
                        metadata={"Date": None} if ext == "svg" else None)
            out.append(path)
    return out


def write_page(page: Page, out: Path, figdir: Path | None = None, quiet: bool = False,
               verb: str = "report", verbose: bool = False) -> None:
    """Write the page (and its figures); what is said names ``verb``, the command that
    asked for the page (compare and study write theirs here too)."""
    figs = draw_all(page)
    if verbose:
        for sec in page.sections:
            print(f"iolab {verb}: section '{sec.heading}'", file=sys.stderr)
            for blk in sec.blocks:
                if isinstance(blk, Plot):
                    print(f"iolab {verb}:   plot {blk.name}: {blk.caption}", file=sys.stderr)
                elif isinstance(blk, Table):
                    print(f"iolab {verb}:   table of {len(blk.rows)} rows"
                          + (f": {blk.caption}" if blk.caption else ""), file=sys.stderr)
    cli_common.write_output(out, render(page, figs), "-o", verb=verb)
    if figdir is not None:
        written = export_figures(figs, cli_common.make_dir(figdir, quiet, verb=verb))
        if not quiet:
            print(f"iolab {verb}: {len(written)} figure files in {figdir}", file=sys.stderr)
    if not quiet:
        print(f"iolab {verb}: wrote {out.resolve()}")
