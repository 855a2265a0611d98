"""The job's own launch as shell words, and batch scripts for the scheduler that ran it
(Slurm, PBS, LSF, Cobalt/ALPS): one rank per core group, bound, the cores per rank computed
at run time, core specialisation where the scheduler has it. Fix artifacts of the rules that
advise placement (iolab.diagnose.fixes holds the others)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from iolab.diagnose.jobfacts import JobFacts, job_facts
from iolab.diagnose.rules.base import Artifact

if TYPE_CHECKING:
    from iolab.model.job import Model


def program_words(model: Model) -> tuple[list[str], list[str]]:
    """The program and arguments as shell words, and lines to put before them (a guard that
    stops with a message when the log does not record the command line)."""
    facts = job_facts(model)
    if facts.command:
        pre = [f"# {facts.command_note}"] if facts.command_note else []
        return [shlex.quote(w) for w in facts.command], pre
    return ['"${PROGRAM[@]}"'], [
        "# The log does not record the command line: set PROGRAM=(your program and arguments)",
        'if [ -z "${PROGRAM+x}" ]; then echo "set PROGRAM to the program and its arguments" '
        ">&2; exit 2; fi"]


def program_short(model: Model) -> str:
    """The log's program for a sentence: its name, ``...`` for its arguments."""
    cmd = job_facts(model).command
    if not cmd:
        return "PROGRAM ARGS"
    return shlex.quote(cmd[0]) + (" ..." if len(cmd) > 1 else "")


def slurm_affinity(model: Model, core_spec: int = 4, threads: int | None = None
                   ) -> list[Artifact]:
    """A batch script for this job's ranks and nodes, for the scheduler that ran it
    (job_facts: its launch line or its site's file systems): one rank per core group, bound,
    the cores per rank computed at run time (never 0), and core specialisation where the
    scheduler has it and the node has the cores. A log that does not say which scheduler
    ran it gets Slurm's lines, saying so, with the other launchers' equivalents."""
    facts = job_facts(model)
    if facts.scheduler in _BATCH:
        return [_BATCH[facts.scheduler](facts, model, core_spec, threads)]
    return [_slurm_script(facts, model, core_spec, threads)]


def _batch_common(facts: JobFacts, model: Model, threads: int | None,
                  nodes_var: str, cpus: str) -> list[str]:
    """The lines every scheduler's script shares: ranks, nodes, ranks per node, cores per
    rank (at least 1), the program's guard."""
    n, nodes, ppn = facts.nprocs, facts.nodes, facts.ranks_per_node
    words, pre = program_words(model)
    lines = [f"NTASKS={n}",
             f"NNODES=${{{nodes_var}:-{nodes or 1}}}",
             "PER_NODE=" + (str(ppn) if ppn else "$(( (NTASKS + NNODES - 1) / NNODES ))"),
             f"CPUS={cpus}",
             "CPUS_PER_TASK=$(( CPUS / PER_NODE ))",
             'if [ "$CPUS_PER_TASK" -lt 1 ]; then CPUS_PER_TASK=1; fi']
    if threads:
        lines.append(f"export OMP_NUM_THREADS={threads}  # if the I/O is threaded")
    return lines + pre + [" ".join(words)]


def _cpus(facts: JobFacts) -> str:
    """The cores per compute node: the log's, else asked (a launch node's nproc is not a
    compute node's)."""
    return (str(facts.cores_per_node) if facts.cores_per_node else
            '"${CPUS_PER_NODE:?set CPUS_PER_NODE to the cores of a compute node}"')


def _pbs_script(facts: JobFacts, model: Model, core_spec: int, threads: int | None
                ) -> Artifact:
    nodes = facts.nodes
    *body, prog = _batch_common(facts, model, threads, "PBS_NNODES", _cpus(facts))
    lines = ["#!/bin/bash", f"# PBS ({facts.scheduler_evidence})",
             f"#PBS -l select={nodes}" if nodes else "# #PBS -l select=NODES",
             "#PBS -l place=scatter", 'cd "${PBS_O_WORKDIR:-.}"',
             'if [ -n "${PBS_NODEFILE:-}" ]; then PBS_NNODES=$(sort -u "$PBS_NODEFILE" | wc -l); '
             "fi", *body,
             f'mpiexec -n "$NTASKS" --ppn "$PER_NODE" --depth "$CPUS_PER_TASK" '
             f"--cpu-bind depth {prog}"]
    return Artifact("pbs", "pbs.qsub", "\n".join(lines) + "\n",
                    f"PBS batch script: {facts.nprocs} ranks")


def _lsf_script(facts: JobFacts, model: Model, core_spec: int, threads: int | None
                ) -> Artifact:
    nodes = facts.nodes
    *body, prog = _batch_common(facts, model, threads, "LSB_NNODES", _cpus(facts))
    lines = ["#!/bin/bash", f"# LSF ({facts.scheduler_evidence})",
             f"#BSUB -nnodes {nodes}" if nodes else "# #BSUB -nnodes NODES", *body,
             'jsrun -n "$NTASKS" -a 1 -c "$CPUS_PER_TASK" -b packed:"$CPUS_PER_TASK" '
             + prog]
    return Artifact("lsf", "lsf.bsub", "\n".join(lines) + "\n",
                    f"LSF batch script: {facts.nprocs} ranks")


def _cobalt_script(facts: JobFacts, model: Model, core_spec: int, threads: int | None
                   ) -> Artifact:
    nodes = facts.nodes
    *body, prog = _batch_common(facts, model, threads, "COBALT_JOBSIZE", _cpus(facts))
    lines = ["#!/bin/bash", f"# Cobalt / ALPS ({facts.scheduler_evidence})",
             f"#COBALT -n {nodes}" if nodes else "# #COBALT -n NODES", *body,
             # -r 1: one core per node for the OS (ALPS core specialisation)
             'aprun -n "$NTASKS" -N "$PER_NODE" -d "$CPUS_PER_TASK" -j 1 -cc depth -r 1 '
             + prog]
    return Artifact("cobalt", "cobalt.sh", "\n".join(lines) + "\n",
                    f"Cobalt batch script (aprun): {facts.nprocs} ranks")


_BATCH = {"pbs": _pbs_script, "lsf": _lsf_script, "cobalt": _cobalt_script}


def _slurm_script(facts: JobFacts, model: Model, core_spec: int, threads: int | None
                  ) -> Artifact:
    n, nodes, ppn, cores = facts.nprocs, facts.nodes, facts.ranks_per_node, facts.cores_per_node
    lines = ["#!/bin/bash"]
    if facts.scheduler == "slurm":
        lines.append(f"# Slurm ({facts.scheduler_evidence})")
    else:
        lines += ["# The log does not say which scheduler ran the job: Slurm's lines. Elsewhere",
                  "# the same ranks: PBS `mpiexec -n N --ppn P --depth C --cpu-bind depth`,",
                  "# LSF `jsrun -n N -a 1 -c C -b packed:C`, ALPS `aprun -n N -N P -d C -cc "
                  "depth`."]
    lines.append(f"#SBATCH --ntasks={n}")
    if nodes:
        lines.append(f"#SBATCH --nodes={nodes}")
    if nodes and ppn:
        lines.append(f"#SBATCH --ntasks-per-node={ppn}")
    if cores and ppn and cores - core_spec >= ppn:
        lines.append(f"#SBATCH --core-spec={core_spec}  # OS work on {core_spec} cores per node")
    else:
        lines.append(f"# #SBATCH --core-spec={core_spec}  # core specialisation, where the site "
                     "allows it and the nodes have cores to spare")
    words, pre = program_words(model)
    lines += [
        f"NTASKS=${{SLURM_NTASKS:-{n}}}",
        f"NNODES=${{SLURM_JOB_NUM_NODES:-{nodes or 1}}}",
        "PER_NODE=" + (str(ppn) if ppn else "$(( (NTASKS + NNODES - 1) / NNODES ))"),
        "CPUS=${SLURM_CPUS_ON_NODE:-$(nproc)}",
        "CPUS_PER_TASK=$(( CPUS / PER_NODE ))",
        'if [ "$CPUS_PER_TASK" -lt 1 ]; then CPUS_PER_TASK=1; fi',
    ]
    if threads:
        lines.append(f"export OMP_NUM_THREADS={threads}  # if the I/O is threaded")
    lines += pre
    lines.append(f'srun -n "$NTASKS" -c "$CPUS_PER_TASK" --cpu-bind=cores {" ".join(words)}')
    return Artifact("slurm", "slurm.sbatch", "\n".join(lines) + "\n",
                    f"batch script: {n} ranks" + (f" on {nodes} node(s)" if nodes else ""))
