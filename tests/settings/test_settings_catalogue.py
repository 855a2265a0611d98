"""The settings catalogue (iolab.settings) against the other places that know the same
settings: the engine's value check (engine/src/hint_forms.def, generated from the rows and
parsed here), tune's knobs and diagnose's hints writer. A disagreement fails here instead
of in a user's run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iolab.settings import apply, c_table, catalogue
from iolab.tune.knobs import all_knobs, knob

ROOT = Path(__file__).resolve().parents[2]
FORMS_DEF = ROOT / c_table.DEF_PATH


def engine_forms() -> dict[str, str]:
    """engine/src/hint_forms.def as hints.c includes it: key -> "number" or the words."""
    text = FORMS_DEF.read_text()
    assert '#include "hint_forms.def"' in (ROOT / "engine" / "src" / "hints.c").read_text()
    out = {}
    for key, form in re.findall(r'^IOLAB_HINT_FORM\("(\w+)", (NULL|"[^"]*"),', text, re.M):
        out[key] = "number" if form == "NULL" else form.strip('"')
    assert len(out) > 20, out  # the parse saw the table, not a fragment
    return out


def test_the_engines_table_is_generated_from_the_rows() -> None:
    """expected: engine/src/hint_forms.def is what the catalogue generates / was: a table
    typed in hints.c, which drifted from the rows (romio_lustre_ds_in_coll, romio_cb_fr_types
    refusing ROMIO's own "aar")."""
    assert FORMS_DEF.read_text() == c_table.render(), (
        "regenerate: python -m iolab.settings.c_table > engine/src/hint_forms.def")


def _words(form: str | None) -> frozenset[str] | str | None:
    return form if form in (None, "number") else frozenset(form.lower().split("|"))


def test_engine_checks_each_hint_as_the_catalogue_says() -> None:
    """expected: every hint hints.c checks takes the catalogue's values / was:
    romio_lustre_ds_in_coll "enable|disable" in C, "automatic" too in Python (and in ROMIO's
    Lustre driver, which reads it with ADIOI_Info_check_and_install_enabled)."""
    wrong = {}
    for key, form in engine_forms().items():
        row = catalogue.setting(key)
        if row is None or row.kind not in c_table.ENGINE_KINDS:
            wrong[key] = f"engine checks {form!r}; not a hint in the catalogue"
        elif _words(form) != _words(row.engine_form()):
            wrong[key] = f"engine {form!r}, catalogue {row.engine_form()!r}"
    assert wrong == {}


def test_engine_checks_each_numbers_domain_as_the_catalogue_says() -> None:
    """expected: each number the engine checks has the row's least value and multiple (and its
    domain's words for the message) / was: the engine checked digits only (cb_nodes=0 ran)."""
    text = FORMS_DEF.read_text()
    rows = re.findall(r'^IOLAB_HINT_FORM\("(\w+)", NULL, (\d+), (\d+), "([^"]*)"\)', text,
                      re.M)
    assert len(rows) == sum(f == "number" for f in engine_forms().values()) > 15
    for key, least, multiple, words in rows:
        row = catalogue.setting(key)
        assert row is not None and row.numeric_bounds() == (int(least), int(multiple)), key
        assert words == catalogue.DOMAINS[row.domain]
        assert catalogue.parse(row, least) == least  # the least value is in the domain
        if int(least) > 0:
            assert catalogue.parse(row, str(int(least) - 1)) is None


def test_every_catalogue_hint_with_a_form_is_checked_by_the_engine() -> None:
    """expected: a malformed value of any catalogue hint is refused before a run / was:
    romio_cb_alltoall and romio_min_fdomain_size passed unchecked (ROMIO's atoi read "1m"
    as 1)."""
    forms = engine_forms()
    missing = [r.name for r in catalogue.of_kind(*c_table.ENGINE_KINDS)
               if r.engine_form() and r.name not in forms]
    assert missing == []


def test_rows_are_well_formed() -> None:
    names = [r.name for r in catalogue.settings()]
    assert len(names) == len(set(names))
    for r in catalogue.settings():
        assert r.domain in catalogue.DOMAINS and set(r.libraries) <= set(catalogue.LIBRARIES)
        assert (r.domain == "choice") == bool(r.choices), r.name
        assert r.kind in catalogue.KINDS, r.name
        for lib, value in r.defaults.items():
            assert lib in r.libraries or lib == "*", (r.name, lib)
            # OMPIO's -1 ("OMPIO decides") is the one default outside its domain
            assert catalogue.parse(r, value) == value or value == "-1", (r.name, value)
        assert catalogue.applied_by(r) and catalogue.read_back(r)
        for f in r.ompio_from:
            assert not r.is_hint and catalogue.setting(f.romio) is not None, f.romio


@pytest.mark.parametrize("domain,good,bad", [
    ("mode", ["enable", "disable", "automatic"], ["Enable", "yes", "", "auto"]),
    ("bool", ["true", "false"], ["1", "TRUE", "yes"]),
    ("bytes", ["1", "16777216"], ["0", "16M", "-1", "1.5"]),
    ("number", ["0", "7"], ["-1", "x"]),
    ("stripe", ["65536", "1048576"], ["4096", "0", "1M"]),
    ("config", ["*:1", "*:8", "*:*"], ["*:0", "node1:2", "*", "*:x"]),
])
def test_parse_takes_exactly_the_domain(domain: str, good: list[str], bad: list[str]) -> None:
    row = catalogue.Setting("x", ("romio",), domain, "test")
    assert [catalogue.parse(row, v) for v in good] == good
    assert [catalogue.parse(row, v) for v in bad] == [None] * len(bad)


def test_tune_knobs_of_the_library_are_the_catalogues_rows() -> None:
    hint_knobs = {k.library_key: k for k in all_knobs() if k.kind in ("romio", "ompio", "lfs")}
    rows = {r.name: r for r in catalogue.settings() if r.explore}
    assert set(hint_knobs) == set(rows)
    for name, k in hint_knobs.items():
        row = rows[name]
        doc = f"lfs setstripe {row.flag}" if row.kind == "lfs" else row.doc
        assert k.collective_only == row.collective_only and k.doc == doc
        for v in row.explore:
            assert catalogue.parse(row, k.normalise(v)) is not None, (name, v)
        if k.default:
            assert k.is_default(catalogue.default(row, k.kind) or "")


def test_ompio_lines_come_from_the_rows() -> None:
    env, none = apply.ompio_exports({"cb_buffer_size": "8388608", "cb_config_list": "*:2",
                                     "cb_nodes": "3", "romio_cb_write": "disable",
                                     "romio_cb_read": "enable", "striping_unit": "1048576",
                                     "romio_ds_write": "disable"}, nodes=4, nprocs=64)
    assert env == ["export OMPI_MCA_io_ompio_num_aggregators=3",
                   "export OMPI_MCA_io_ompio_bytes_per_agg=8388608",
                   "export OMPI_MCA_fcoll=individual  # collective calls done independently",
                   "# romio_cb_read=enable: OMPIO aggregates collective calls by default "
                   "(fcoll vulcan; dynamic_gen2 on Lustre)",
                   "export OMPI_MCA_fs_lustre_stripe_size=1048576  # new files on Lustre"]
    assert none == ["romio_ds_write=disable"]
    env, _ = apply.ompio_exports({"cb_config_list": "*:*"}, nodes=2, nprocs=8)
    assert env == ["export OMPI_MCA_io_ompio_num_aggregators=8  # every rank"]


def test_ompio_settings_are_the_exports_as_data() -> None:
    """Each export line's variable and value, as (MCA parameter, value): what a fix carries
    and tune --from-log reads (was: a regex over the lines, which dropped every export
    followed by a comment, e.g. OMPI_MCA_fcoll=individual)."""
    hints = {"cb_buffer_size": "8388608", "cb_config_list": "*:2", "cb_nodes": "3",
             "romio_cb_write": "disable", "romio_cb_read": "enable",
             "striping_unit": "1048576", "romio_ds_write": "disable"}
    lines, pairs, none = apply.ompio_settings(hints, nodes=4, nprocs=64)
    assert lines == apply.ompio_exports(hints, nodes=4, nprocs=64)[0]
    exported = [re.match(r"export OMPI_MCA_(\w+)=(\S+)", ln) for ln in lines]
    assert pairs == [(m.group(1), m.group(2)) for m in exported if m]
    assert ("fcoll", "individual") in pairs and none == ["romio_ds_write=disable"]
    for name, _ in pairs:
        assert catalogue.setting(name) is not None


def test_setting_changes_name_their_knob() -> None:
    from iolab.settings.change import SettingChange, describe

    assert SettingChange("cb_buffer_size", "4194304", "romio").knob == "cb_buffer_size"
    assert SettingChange("io_ompio_bytes_per_agg", "1", "ompio").knob == "ompio.bytes_per_agg"
    assert SettingChange("io", "^ompio", "ompio").knob == ""  # the switch is not a knob
    assert describe([SettingChange("cb_nodes", "4", "romio"),
                     SettingChange("cb_nodes", "4", "cray")], []) == [
        "cb_nodes=4 (ROMIO, Cray MPICH)"]


def test_cray_line_leaves_out_what_its_separators_cannot_carry() -> None:
    value, notes = apply.mpich_mpiio_hints({"cb_config_list": "*:2", "romio_cb_write":
                                            "enable", "cray_cb_write_lock_mode": "1"},
                                           ("*",), nodes=2, nprocs=8)
    assert value == "*:romio_cb_write=enable:cray_cb_write_lock_mode=1:cb_nodes=4"
    assert any("as cb_nodes" in n for n in notes)
    # Cray MPICH's own hints never go into a ROMIO hints file
    assert apply.hints_file({"cray_cb_write_lock_mode": "1", "cb_nodes": "2"}) == "cb_nodes 2\n"
    assert knob("cb_nodes").kind == "romio"
