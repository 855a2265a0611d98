"""The search space and the knobs: parsing, validation, what each knob does to a trial."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.errors import UsageError
from iolab.tune.knobs import all_knobs, knob
from iolab.tune.objective import hints_of, lfs_setstripe, mca_env
from iolab.tune.space import DEFAULT, build_space, parse_knob_arg
from iolab.tune.workload import parse


def test_every_knob_normalises_its_own_exploration_values() -> None:
    for k in all_knobs():
        assert k.explore, k.name
        for v in k.explore:
            k.normalise(v)  # raises when a preset would explore an invalid value


@pytest.mark.parametrize("name, value, expected", [
    ("cb_buffer_size", "4M", "4194304"), ("cb_buffer_size", "64k", "65536"),
    ("striping_unit", "1M", "1048576"), ("collective", "yes", "true"),
    ("romio_cb_write", "enable", "enable"), ("cb_nodes", "8", "8"),
])
def test_values_are_normalised(name: str, value: str, expected: str) -> None:
    assert knob(name).normalise(value) == expected


@pytest.mark.parametrize("name, value, words", [
    ("cb_buffer_size", "abc", "not a size"),
    ("striping_unit", "4096", "minimum"),          # Lustre's stripe is at least 64 KiB
    ("striping_unit", "100K", "multiple of 65536"),
    ("romio_cb_write", "sometimes", "not one of"),
    ("cb_nodes", "0", "minimum"),
    ("collective", "maybe", "true or false"),
])
def test_values_outside_the_domain_are_refused(name: str, value: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        knob(name).normalise(value)


def test_unknown_knob_lists_the_known_ones() -> None:
    with pytest.raises(UsageError) as err:
        build_space([], ["cb_bufer_size=1M"], None, "romio")
    assert "unknown knob 'cb_bufer_size'" in str(err.value)
    assert "cb_buffer_size" in str(err.value)


def test_empty_space_and_bad_knob_syntax() -> None:
    with pytest.raises(UsageError, match="empty"):
        build_space([], [], None, "romio")
    with pytest.raises(UsageError, match="no values"):
        parse_knob_arg("cb_nodes=")
    with pytest.raises(UsageError, match="unknown preset"):
        build_space(["fast"], [], None, "romio")


def test_mpiio_preset_follows_the_implementation() -> None:
    romio = build_space(["mpiio"], [], None, "romio")
    ompio = build_space(["mpiio"], [], None, "ompio")
    assert "cb_buffer_size" in romio.names and not any(n.startswith("ompio.") for n in romio.names)
    assert "ompio.num_aggregators" in ompio.names and "cb_buffer_size" not in ompio.names


def test_explicit_values_override_the_preset_and_the_baseline_is_all_defaults() -> None:
    space = build_space(["posix"], ["transfer=1m,4m,1M"], None, "romio")
    dims = {d.knob.name: d for d in space.dimensions}
    assert dims["transfer"].values == ("1048576", "4194304")  # duplicates folded
    assert dims["transfer"].choices[0] == DEFAULT
    assert set(space.baseline().values()) == {DEFAULT}
    assert space.size() == 3 * 4 * 4


def test_values_the_baseline_already_runs_with_are_not_tried_again() -> None:
    space = build_space([], ["transfer=1m,4m", "threads=1"], None, "romio")
    reduced = space.without_values({"transfer": "1048576", "threads": "1"})
    assert reduced.names == ("transfer",)
    assert reduced.dimensions[0].values == ("4194304",)


def test_space_file(tmp_path: Path) -> None:
    f = tmp_path / "space.toml"
    f.write_text('[knobs]\ncb_buffer_size = ["1M", "4M"]\nromio_cb_write = "explore"\n')
    space = build_space([], [], f, "romio")
    assert space.to_json() == {"cb_buffer_size": ["1048576", "4194304"],
                               "romio_cb_write": ["automatic", "enable", "disable"]}
    f.write_text("[knobs]\ncb_nodes = 3\n")
    with pytest.raises(UsageError, match="expected a list"):
        build_space([], [], f, "romio")
    f.write_text("not toml [")
    with pytest.raises(UsageError, match="not valid TOML"):
        build_space([], [], f, "romio")


def test_a_configuration_applied_the_way_a_user_would() -> None:
    params = {"cb_buffer_size": "4194304", "romio_cb_write": DEFAULT, "collective": "false",
              "transfer": "1048576", "ompio.fcoll": "vulcan", "lfs.stripe_count": "4",
              "lfs.stripe_size": "1048576"}
    trial = parse(["-a", "mpiio", "-c", "-t", "64k"]).with_settings(params)
    args = trial.argv()
    assert "-c" not in args and "--collective" not in args  # bool false removes IOR's alias
    assert not trial.collective and trial.api == "mpiio"
    assert args == ["--api", "mpiio", "--transfer", "1048576",
                    "--hint", "cb_buffer_size=4194304"]
    assert trial.env == {"OMPI_MCA_fcoll": "vulcan"}
    assert trial.lfs == {"lfs.stripe_count": "4", "lfs.stripe_size": "1048576"}
    assert hints_of(params) == {"cb_buffer_size": "4194304"}
    assert mca_env(params) == {"OMPI_MCA_fcoll": "vulcan"}
    # the size as diagnose's lfs lines write it (one lfs writer, iolab.settings.apply)
    assert lfs_setstripe(params, "/out") == ["lfs", "setstripe", "-c", "4", "-S", "1M",
                                             "/out"]


def test_placement_knobs_reach_iolab_bench_srun_and_the_job_script(tmp_path: Path) -> None:
    """Bench workloads: iolab bench's own placement options (checked against the allocation
    by iolab.launch); commands: srun's input environment; the winner: an srun line."""
    from iolab.tune.artifacts import write_artifacts
    from iolab.tune.objective import srun_env

    params = {"slurm.ranks_per_node": "2", "slurm.cpus_per_rank": "4",
              "slurm.cpu_bind": "cores", "transfer": DEFAULT}
    trial = parse(["-a", "posix", "--np", "8"]).with_settings(params)
    assert trial.launch == {"np": 8, "ppn": 2, "cpus_per_rank": 4, "cpu_bind": "cores"}
    args = trial.argv()
    assert set(zip(args[2::2], args[3::2])) == {("--np", "8"), ("--ppn", "2"),
                                               ("--cpus-per-rank", "4"),
                                               ("--cpu-bind", "cores")}
    assert srun_env(params) == {"SLURM_NTASKS_PER_NODE": "2", "SLURM_CPUS_PER_TASK": "4",
                                "SLURM_CPU_BIND": "cores"}
    # inside a 3-node allocation the task count follows, or srun's inherited SLURM_NTASKS
    # would override the per-node count
    inside = srun_env(params, {"SLURM_JOB_ID": "7", "SLURM_NTASKS": "12",
                               "SLURM_JOB_NUM_NODES": "3"})
    assert (inside["SLURM_NTASKS"], inside["SLURM_NPROCS"]) == ("6", "6")
    written = write_artifacts({k: v for k, v in params.items() if v != DEFAULT}, tmp_path)
    text = (tmp_path / "slurm.txt").read_text()
    assert tmp_path / "slurm.txt" in written
    assert "srun --ntasks-per-node=2 --cpus-per-task=4 --cpu-bind=cores ..." in text
    assert "export SLURM_CPUS_PER_TASK=4" in text
    with pytest.raises(UsageError, match="below the minimum 1"):
        knob("slurm.cpus_per_rank").normalise("0")


def test_ranks_per_node_in_effect_for_a_users_srun_line() -> None:
    """A plain ``srun prog`` runs the trial's SLURM_NTASKS_PER_NODE, or for the baseline the
    allocation's tasks per node (so the baseline's own value is not measured again); a line
    that sets its own layout, an uneven allocation, or another launcher: not known."""
    from iolab.tune.objective import srun_settings

    alloc = {"SLURM_JOB_ID": "7", "SLURM_TASKS_PER_NODE": "2(x2)"}
    assert srun_settings(["srun", "./app", "in.nml"], alloc) == {"slurm.ranks_per_node": "2"}
    trial = {**alloc, "SLURM_NTASKS_PER_NODE": "1"}
    assert srun_settings(["srun", "./app"], trial) == {"slurm.ranks_per_node": "1"}
    for own in (["-n", "4"], ["-n4"], ["--ntasks=4"], ["-N", "1"], ["--nodes=2"],
                ["--ntasks-per-node", "1"], ["-m", "cyclic"], ["--distribution=cyclic"]):
        assert srun_settings(["srun", *own, "./app"], alloc) == {}, own
    assert srun_settings(["srun", "./app"], {"SLURM_TASKS_PER_NODE": "3(x2),1"}) == {}
    assert srun_settings(["mpirun", "-np", "4", "./app"], alloc) == {}
    assert srun_settings(["./run.sh"], alloc) == {}
