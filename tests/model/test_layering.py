"""The model reads RawJobs only: no module of iolab.model imports a loader, a verb or a
renderer (loaders live in iolab.sources, above it), so there is one way into the model."""

from __future__ import annotations

import ast
from pathlib import Path

import iolab.model

ALLOWED = ("iolab.model", "iolab.errors")


def _iolab_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "iolab":
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "iolab")
    return found


def test_model_imports_nothing_above_it() -> None:
    files = sorted(Path(iolab.model.__file__).parent.glob("*.py"))
    assert len(files) > 5
    above = {f"{f.name}: {m}" for f in files for m in _iolab_imports(f)
             if m != "iolab" and not m.startswith(ALLOWED)}
    assert not above, f"iolab.model imports above itself: {sorted(above)}"
