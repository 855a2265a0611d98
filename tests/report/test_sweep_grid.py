"""The sweep's grid: friendly names map to iolab bench's own options, and every alias names
an option the bench really has (an alias left behind by a renamed option would make every
sweep over it fail at the first point)."""

from __future__ import annotations

import pytest

from iolab.errors import UsageError
from iolab.sweep import grid


@pytest.mark.parametrize("alias", sorted(grid.ALIASES))
def test_every_alias_names_a_bench_option(alias: str) -> None:
    assert grid.ALIASES[alias] in grid.bench_options()


def test_aio_and_queue_depth_aliases_become_the_posix_options() -> None:
    assert grid.parse_param("aio=io_uring,libaio") == ("posix.aio", ["io_uring", "libaio"])
    assert grid.parse_param("queue-depth=1,32") == ("posix.queue-depth", ["1", "32"])
    pts = grid.points([grid.parse_param("aio=io_uring,libaio")])
    assert grid.point_args(pts[1]) == ["--posix.aio=libaio"]


def test_an_unknown_parameter_is_refused() -> None:
    with pytest.raises(UsageError, match="not an iolab bench option"):
        grid.parse_param("aoi=libaio")
