"""The environment for a run expected to be refused before any I/O (exit 2), shared by the
tests of the engine and of the verbs that launch it.

Open MPI's mpirun, once any rank has exited non-zero, waits odls_base_sigkill_timeout (1 s)
between its SIGTERM and SIGKILL rounds even when every rank has already ended: ~2 s of idle
wall time per refused run (`mpirun -np 1 sh -c 'exit 2'`: 2.4 s; with the timeout 0: 0.3 s).
A run refused before any I/O ends on every rank by itself, so there is nothing to wait for;
so does an engine run that fails mid-run (tests/engine's run_engine: the engine exits only
through MPI_Finalize, after the ranks agreed on the failure and rank 0 flushed its output).
Never for runs that are interrupted (or whose ranks are killed): there the timeout is the
time a rank has after mpirun's SIGTERM to save what it finished. Other MPI libraries ignore
the variable.
"""

REFUSED_RUN_ENV = {"OMPI_MCA_odls_base_sigkill_timeout": "0"}
