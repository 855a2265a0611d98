"""What a file of the subarray layout or of ``--workload btio`` must hold, computed here
independently of the engine's C code: which rank owns each element (numpy's array_split for
the uneven pieces, the process grid in C order) and the bytes of the --verify pattern
(engine/src/pattern.c: a splitmix64 hash of the owner, the 8-byte word's file offset and the
repetition)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def pattern_bytes(owner: np.ndarray, elem: int, rep: int = 0, start: int = 0) -> bytes:
    """The file bytes of an array whose element i (C order) belongs to rank owner.flat[i]
    (the array starting at file offset start)."""
    own = np.repeat(owner.ravel().astype(np.uint64), elem)
    off = np.arange(start, start + own.size, dtype=np.uint64)
    seeds = _mix((own << np.uint64(32)) ^ np.uint64(rep))
    words = _mix(seeds ^ ((off >> np.uint64(3)) * np.uint64(0xD6E8FEB86659FD93)))
    return ((words >> ((off & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)).astype(
        np.uint8).tobytes()


def _piece(n: int, p: int, c: int) -> slice:
    idx = np.array_split(np.arange(n), p)[c]
    return slice(int(idx[0]), int(idx[-1]) + 1)


def block_owner(grid: Sequence[int], pgrid: Sequence[int], steps: int) -> np.ndarray:
    """Owner of every element of the (steps, *grid) array: rank r at coordinates
    unravel_index(r, pgrid) owns the pieces numpy's array_split gives in each dimension."""
    own = np.full(tuple(grid), -1, dtype=np.int64)
    for r in range(int(np.prod(pgrid))):
        coords = np.unravel_index(r, tuple(pgrid))
        sl = tuple(_piece(n, p, int(c)) for n, p, c in zip(grid, pgrid, coords))
        assert (own[sl] == -1).all(), f"rank {r}'s piece overlaps another"
        own[sl] = r
    assert (own >= 0).all()
    return np.broadcast_to(own, (steps, *grid))


def btio_owner(grid: Sequence[int], ranks: int, steps: int) -> np.ndarray:
    """NAS BT's multi-partition over q*q ranks: rank (row, col) owns cell c at
    (z, y, x) = (c, row - c, col + c) mod q; each point has 5 components."""
    q = int(round(ranks ** 0.5))
    own = np.full(tuple(grid), -1, dtype=np.int64)
    for r in range(ranks):
        row, col = divmod(r, q)
        for c in range(q):
            cell = (c, (row - c) % q, (col + c) % q)
            sl = tuple(_piece(n, q, k) for n, k in zip(grid, cell))
            assert (own[sl] == -1).all()
            own[sl] = r
    assert (own >= 0).all()
    full = np.repeat(own[..., np.newaxis], 5, axis=-1)
    return np.broadcast_to(full, (steps, *full.shape))


def big_endian(data: bytes, elem: int) -> bytes:
    """The same elements byte-swapped (netCDF stores integers big-endian)."""
    return np.frombuffer(data, dtype=np.uint8).reshape(-1, elem)[:, ::-1].tobytes()
