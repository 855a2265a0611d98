"""Open MPI's start-up on one host without network probing, for the tests of the verbs that
launch mpirun themselves: imported (autouse) by the conftest of tests/tune, tests/ior,
tests/mdtest, tests/profile and tests/report (whose module-level ENVs take the variables
too), and by the diagnose modules that run Open MPI programs (test_real_pathologies_64,
test_proxy_evidence).

Every ``mpirun`` of Open MPI 4.1 otherwise opens its tcp/openib/ofi transports and the UCX
PML to find none of them useful on one host: `mpirun -np 2 iolab-bench --api null` takes
0.9 s loaded, 0.6 s with shared memory only. The engine's own tests run so already
(``engine_helpers._env``); the verbs' tests start hundreds of mpiruns (a tune trial is one).
Nothing the ranks use changes: on one host Open MPI selects ob1 and vader by itself
(``--mca pml_base_verbose 10``), it only stops opening the transports it then drops; the
I/O paths (OMPIO, ROMIO, their parameters) are untouched. A variable the caller
has already set (CI, a developer checking another transport) is kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

ONE_HOST_OPEN_MPI = {
    "OMPI_MCA_btl": "self,vader",
    "OMPI_MCA_pml": "ob1",
    # CMA (process_vm_readv) is refused in some containers; copy through shared memory
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}


@pytest.fixture(scope="module", autouse=True)
def one_host_open_mpi() -> Iterator[None]:
    """The environment above for one test module (restored after it: the folders that
    are not imported here keep Open MPI's defaults)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in ONE_HOST_OPEN_MPI.items():
            if name not in os.environ:
                mp.setenv(name, value)
        yield
