"""docs/benchmarks.md is shared by every bench script: each owns one section, between
``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``, and rewrites only that one."""

from __future__ import annotations

from pathlib import Path


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def replace_section(path: Path, name: str, body: str, after: str | None = None) -> None:
    """Put body (markdown, markers not included) into section name of path, keeping every
    other section. A new section goes right after section ``after`` when that exists,
    else at the end."""
    begin, end = markers(name)
    block = f"{begin}\n{body.strip(chr(10))}\n{end}"
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in old and end in old:
        new = old[: old.index(begin)] + block + old[old.index(end) + len(end):]
    elif after and markers(after)[1] in old:
        cut = old.index(markers(after)[1]) + len(markers(after)[1])
        new = old[:cut] + "\n\n" + block + old[cut:]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)
