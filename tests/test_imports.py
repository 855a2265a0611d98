"""Imports inside functions say why, and a verb's start-up imports nothing heavy it does not use.

Expected: every import of iolab's own modules inside a function carries its reason (a comment
on its line or on the lines just above it, or it follows such an import in the same group):
"deferred: ..." (start-up cost) or "cycle: ..."; ``iolab --help`` and each verb's ``--help``
import no heavy library the verb's options do not need. Was (issue 30): ~73 function-level
imports, most without a word, some only habit, some hiding a cycle (bench.cli <-> subrun).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.cli import VERBS

SRC = Path(__file__).resolve().parents[1] / "src" / "iolab"

def _is_own(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "iolab"
    return any(a.name.split(".")[0] == "iolab" for a in node.names)


def _has_comment(line: str) -> bool:
    return "#" in line  # an import line holds no string that could contain '#'


def unexplained_imports(path: Path) -> list[int]:
    """Line numbers of the function-level imports of iolab modules in ``path`` with no reason:
    no comment on their own lines, none on the line just above, and not right after an
    import with a reason."""
    text = path.read_text()
    lines = text.splitlines()
    out: list[int] = []
    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for block in ast.walk(fn):
            body = getattr(block, "body", None)
            if not isinstance(body, list):
                continue
            explained_before = False
            for stmt in body:
                if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    explained_before = False
                    continue
                own = lines[stmt.lineno - 1:stmt.end_lineno]
                above = lines[stmt.lineno - 2].strip() if stmt.lineno > 1 else ""
                explained = (any(_has_comment(ln) for ln in own) or above.startswith("#")
                             or explained_before)
                if _is_own(stmt) and not explained:
                    out.append(stmt.lineno)
                explained_before = explained
    return sorted(set(out))


def test_every_function_level_import_of_iolab_says_why() -> None:
    missing = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        missing += [f"src/iolab/{rel}:{n}" for n in unexplained_imports(path)]
    assert not missing, ("an import inside a function without its reason (move it to the "
                         "top, or say '# deferred: ...' / '# cycle: ...' above it):\n"
                         + "\n".join(missing))


def test_the_scan_sees_what_it_must(tmp_path: Path) -> None:
    """The scan itself: an import without a reason is found, one with a reason is not."""
    f = tmp_path / "m.py"
    f.write_text("def a():\n    from iolab import units\n\n"
                 "def b():\n    # deferred: pulls numpy\n    from iolab import stats\n"
                 "    from iolab import units\n\n"
                 "def c():\n    from iolab import stats  # cycle: stats imports this\n"
                 "    x = 1\n    from . import x\n\n"
                 "def d():\n    import json\n")
    assert unexplained_imports(f) == [2, 12]


HEAVY = ("scipy", "pyarrow", "duckdb", "matplotlib", "rich", "optuna", "dask", "darshan",
         "cffi")
# Measured (s19): these verbs' options need neither numpy nor the results database.
LIGHT_VERBS = ("", "bench", "ior", "mdtest", "io500", "triage", "buffer", "hints")


def _modules_of_help(verb: str) -> set[str]:
    argv = [verb, "--help"] if verb else ["--help"]
    code = ("import sys\nfrom iolab.cli import main\ntry:\n"
            f"    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sys.modules), file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.startswith("usage: iolab"), r.stdout[:200] + r.stderr[-500:]
    return {m.split(".")[0] for m in r.stderr.split()}


@pytest.mark.parametrize("verb", ["", *VERBS], ids=lambda v: v or "iolab")
def test_help_imports_no_heavy_library(verb: str) -> None:
    loaded = _modules_of_help(verb)
    assert not loaded & set(HEAVY), f"iolab {verb} --help imports {sorted(loaded & set(HEAVY))}"
    if verb in LIGHT_VERBS:
        assert "numpy" not in loaded and "sqlite3" not in loaded, f"iolab {verb} --help"
