"""The engine's option table read once per binary in a test process, for the tune modules
that parse many ``iolab bench`` lines in-process (imported autouse by them, as
one_host_mpi's fixture is).

``iolab.tune.workload.parse`` and ``iolab.bench.subrun.check_args`` build bench's parser,
which runs ``iolab-bench --list-options`` for its table every time (right for a command:
once a process). A module that parses hundreds of lines started the engine hundreds of
times for the same table (~0.1 s each, most of test_workload's cases). The table stays the
real binary's, read again if the binary is rebuilt; the engine's own check of each line
(``iolab-bench OPTIONS --version``, iolab.bench.subrun.engine_refusal) still runs every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iolab.bench import options


@pytest.fixture(scope="module", autouse=True)
def engine_table_read_once() -> Iterator[None]:
    real = options.load_table
    seen: dict[tuple[str, int], list[options.EngineOption]] = {}

    def once(engine: Path, timeout_s: float = 60) -> list[options.EngineOption]:
        try:
            key = (str(engine), Path(engine).stat().st_mtime_ns)
        except OSError:  # no engine there: load_table's own one-line refusal
            return real(engine, timeout_s)
        if key not in seen:
            seen[key] = real(engine, timeout_s)
        return list(seen[key])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(options, "load_table", once)
        yield
