"""The catalogue's rows beyond the MPI library's hints (PnetCDF, HDF5, Lustre layouts,
environment, Slurm, engine options), and the places that read them instead of retyping them:
the one ``lfs setstripe`` builder, the one name of Lustre's 64 KiB unit, tune's lfs and launch
knobs, the engine's option table."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from iolab import units
from iolab.bench import striping
from iolab.diagnose import jobfacts
from iolab.errors import UsageError
from iolab.settings import apply, catalogue
from iolab.tune import knobs, objective

SRC = Path(__file__).resolve().parents[2] / "src" / "iolab"


def test_every_kind_has_rows_that_say_how_they_are_applied_and_read_back() -> None:
    for kind in catalogue.KINDS:
        if kind == "engine":
            continue  # made from the engine's table (below)
        rows = catalogue.of_kind(kind)
        assert rows, kind
        for r in rows:
            assert catalogue.applied_by(r) and catalogue.read_back(r), r.name
    assert all(r.calls and r.calls[0].startswith("H5Pset_") for r in catalogue.of_kind("hdf5"))
    assert {r.env for r in catalogue.of_kind("pnetcdf")} == {"PNETCDF_HINTS"}
    assert "lfs setstripe -S VALUE" in catalogue.applied_by(catalogue.setting("lfs.stripe_size"))[0]


@pytest.mark.parametrize("name,good,bad", [
    ("lfs.stripe_count", ["1", "8", "-1"], ["0", "-2", "x"]),
    ("lfs.stripe_size", ["65536", "4194304"], ["4096", "1M"]),
    ("lfs.component_end", ["67108864", "-1"], ["1000", "0", "64M"]),
    ("nc_in_place_swap", ["enable", "auto"], ["automatic", "yes"]),
    ("hdf5.fill_time", ["never"], ["NEVER"]),
    ("cpu-bind", ["cores", "none"], ["core"]),
    ("romio_cb_fr_types", ["aar", "1048576"], [""]),
])
def test_parse_takes_each_rows_domain(name: str, good: list[str], bad: list[str]) -> None:
    row = catalogue.setting(name)
    assert row is not None
    assert [catalogue.parse(row, v) for v in good] == good
    assert [catalogue.parse(row, v) for v in bad] == [None] * len(bad)


def test_one_lfs_setstripe_builder() -> None:
    """bench, tune and diagnose write the command with the catalogue's flags (a size in bytes
    as lfs's own suffixes, as diagnose's scripts write it); a progressive layout puts -E END
    before each component's count and size."""
    assert apply.lfs_setstripe("d", 4, 1 << 20) == ["lfs", "setstripe", "-c", "4", "-S",
                                                     "1M", "d"]
    assert apply.lfs_setstripe("d", None, 96 << 10) == ["lfs", "setstripe", "-S", "96K", "d"]
    assert apply.lfs_setstripe("f", components=[(64 << 20, 1, "1M"), (-1, 8, "4M")]) == [
        "lfs", "setstripe", "-E", "67108864", "-c", "1", "-S", "1M", "-E", "-1", "-c", "8",
        "-S", "4M", "f"]
    assert striping.setstripe_command("t", striping.Striping(2, 4 << 20)) == \
        apply.lfs_setstripe("t", 2, 4 << 20)
    # tune: the flags in one order, whatever order the knobs came in
    assert objective.lfs_setstripe({"lfs.stripe_size": "4M", "lfs.stripe_count": "2"}, "o") \
        == apply.lfs_setstripe("o", "2", "4M")
    assert objective.lfs_setstripe({"cb_nodes": "2"}, "o") is None


def test_one_name_for_lustres_64k_unit() -> None:
    """expected: Lustre's unit typed once (iolab.units, below every package that uses it) /
    was: three names (bench STRIPE_SIZE_UNIT, diagnose LUSTRE_STRIPE_UNIT, tune _KIB64) with
    their own literals."""
    unit = units.LUSTRE_STRIPE_UNIT
    for module in (striping, jobfacts, knobs, catalogue):
        assert not {"STRIPE_SIZE_UNIT", "_KIB64"} & set(vars(module))
        assert vars(module).get("LUSTRE_STRIPE_UNIT", unit) is unit  # the one, imported
    assert knobs.knob("lfs.stripe_size").multiple_of == unit
    assert knobs.knob("striping_unit").multiple_of == unit
    typed = [f"{p.relative_to(SRC)}:{n}" for p in SRC.rglob("*.py")
             if p.name != "units.py"
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"\b64 << 10\b|\b1 << 16\b", line)]
    assert typed == []
    with pytest.raises(UsageError, match="64 KiB"):
        striping.parse_size("96K")
    assert striping.from_options(2, None) == striping.Striping(
        2, int(catalogue.default(catalogue.setting("lfs.stripe_size")) or 0))


def test_launch_knobs_apply_through_the_slurm_rows() -> None:
    for name, (row_name, _) in knobs.LAUNCH_ROWS.items():
        row = catalogue.setting(row_name)
        assert row is not None and row.kind == "srun"
        assert knobs.LAUNCH[name][1:] == (row.env, row.flag)
        k = knobs.knob(name)
        if k.value_type == "enum":
            assert set(k.choices) <= set(row.choices), name


def _engine_table() -> list[dict[str, object]]:
    from iolab.paths import engine_binary

    try:
        bench = engine_binary()
    except UsageError as exc:
        pytest.skip(str(exc))
    out = subprocess.run([str(bench), "--list-options"], capture_output=True, text=True,
                         timeout=60, check=True)
    table: list[dict[str, object]] = json.loads(out.stdout)
    return table


def test_engine_rows_come_from_the_engines_own_table() -> None:
    """The workload options as rows, from iolab-bench --list-options (never typed): tune's
    engine knobs and the HDF5 rows' knobs are options the engine has, with its choices."""
    table = _engine_table()
    rows = {r.name: r for r in catalogue.engine_rows(table)}
    assert set(rows) == {str(o["name"]) for o in table if o["type"] != "action"}
    for r in rows.values():
        assert r.kind == "engine" and r.flag == f"--{r.name}"
        for value in r.defaults.values():
            assert catalogue.parse(r, value) == value, (r.name, value)
    for k in knobs.all_knobs():
        if k.kind != "engine":
            continue
        row = rows[k.name]
        if k.value_type == "enum":
            assert set(k.choices) <= set(row.choices), k.name
        if k.value_type == "bool":
            assert row.domain == "bool", k.name
    for r in catalogue.of_kind("hdf5"):
        assert not r.knob or r.knob in rows, r.name
