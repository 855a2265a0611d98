"""Fixtures of the report tests: Open MPI's one-host start-up (tests/one_host_mpi.py) for the
runs, sweeps, tunes and studies they store, as in tests/tune (each is an mpirun or many;
nothing the ranks do changes)."""

from __future__ import annotations

from one_host_mpi import one_host_open_mpi  # noqa: F401 (autouse: Open MPI's one-host start-up)
