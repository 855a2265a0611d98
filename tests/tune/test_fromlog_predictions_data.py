"""``tune --from-log`` reads diagnose's predictions as data (each fix's SettingChange and
CodeChange), not by parsing the files diagnose rendered: the same predictions as the old
text route on every log of the corpora (except the defects that route had, listed below),
the same as what diagnose's JSON carries, and the Cray MPICH_MPIIO_HINTS line written right
by both."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import corpus
import pytest

from iolab.cli import main
from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import Report, diagnose
from iolab.model.job import build_model
from iolab.sources import load_source
from iolab.tune.artifacts import write_artifacts
from iolab.tune.fromlog import from_log, predictions
from iolab.tune.knobs import all_knobs, knob

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")

D35 = Path(__file__).resolve().parents[1] / "diagnose" / "darshan35"
LOGS = corpus.REAL_LOGS + corpus.GENERATED_LOGS + sorted(D35.glob("*.darshan"))


# ---- the old text route, as it was in iolab.tune.fromlog (the reference) -------------------

_RULE_KNOBS = {
    "mpiio-independent": (("collective", "true"),),
    "collective-buffering": (("collective", "true"),),
    "tiny-collective-calls": (("file-view", "true"),),
    "small-requests": (("transfer", "4194304"),),
    "small-serial-io": (("transfer", "4194304"),),
    "direct-io": (("posix.mode", "direct"),),
}
_HINT_LINE = re.compile(r"^\s*([a-z_]+)\s+(\S+)\s*$")
_MCA_LINE = re.compile(r"^\s*export\s+OMPI_MCA_([a-z_]+)=(\S+)\s*$")


def _text_route(report: Report) -> set[tuple[str, str]]:
    """(knob, value) from the rendered files, a rule-id table and a snippet search."""
    out: dict[str, str] = {}

    def add(name: str, value: str) -> None:
        try:
            out.setdefault(name, knob(name).normalise(value))
        except Exception:
            pass

    by_key = {(k.kind, k.library_key): k.name for k in all_knobs()}
    for f in report.findings:
        for name, value in _RULE_KNOBS.get(f.rule.id, ()):
            add(name, value)
        for art in f.fix.artifacts:
            if "H5Pset_coll_metadata_write" in art.content:
                add("hdf5.coll-metadata", "true")
            for line in art.content.splitlines():
                if art.kind == "romio-hints" and (m := _HINT_LINE.match(line)):
                    kind = "romio"
                elif m := _MCA_LINE.match(line):
                    kind = "ompio"
                else:
                    continue
                if (kind, m.group(1)) in by_key:
                    add(by_key[kind, m.group(1)], m.group(2).strip("'\""))
    return set(out.items())


# Where the data gives other predictions than the text route: defects of that route.
FIXED = {
    # rules whose fix recommends collective calls, missing from the rule-id table
    "mpi-io-test.darshan": ({("collective", "true")}, set()),  # shared-file-stragglers
    "shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan": (
        {("collective", "true")}, set()),  # hdf5-metadata-alignment: data not collective
    "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan": (
        {("collective", "true")}, set()),  # mpiio-time-skew
    "stepfiles-mpich.darshan": ({("collective", "true")}, set()),  # file-per-process
    # the regex dropped every export followed by a comment
    "blocks2nodes-mpich.darshan": ({("ompio.fcoll", "individual")}, set()),
    # (the same: mpiio-time-skew's romio_cb_write disable as OMPIO's fcoll individual)
    "hdf5_4ranks_collective_hyperslab.darshan": ({("ompio.fcoll", "individual")}, set()),
    # an MPI-IO file view predicted for a PnetCDF program (its fix: ncmpi_iput + wait_all;
    # the engine's PnetCDF backend has no file view)
    "pncput-openmpi.darshan": (set(), {("file-view", "true")}),
}


def _report(path: Path) -> Report:
    return diagnose(build_model([load_source(path)]), Thresholds())


def test_the_corpora_are_there() -> None:
    if not corpus.REAL_LOGS or not corpus.GENERATED_LOGS:
        pytest.skip(corpus.REAL_MISSING if not corpus.REAL_LOGS else corpus.GENERATED_MISSING)
    assert len(LOGS) >= 100 and set(FIXED) <= {p.name for p in LOGS}


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:48])
def test_predictions_from_data_equal_the_text_route(path: Path) -> None:
    """Expected: the knobs and values of the old text route, except the defects in FIXED /
    was: regexes over the hints files, a rule-id table and a string search."""
    rep = _report(path)
    got = {(p.knob, p.value) for p in predictions(rep)}
    added, removed = FIXED.get(path.name, (set(), set()))
    # Lustre layouts: the text route read no lfs script (no lfs knob was predicted); now
    # the first lfs fix's layout, as data (tests/diagnose/test_lfs_fix_settings.py checks it
    # against the script)
    lfs = next(({(s.knob, s.value) for s in a.settings if s.paths == a.settings[0].paths}
                for f in rep.findings for a in f.fix.artifacts if a.settings
                and a.kind == "lfs"), set())
    assert got == (_text_route(rep) | added | lfs) - removed
    assert len(got) == len(predictions(rep))  # one per knob


def _from_json(doc: dict, api: str) -> list[tuple[str, str, str]]:
    """The predictions as a reader of diagnose's JSON finds them: per finding, code changes
    a knob stands for, then settings (ROMIO's form of a hint where there is one)."""
    values = {k.name: k for k in all_knobs()}
    out: dict[str, tuple[str, str, str]] = {}
    for f in doc["findings"]:
        sets = f["fix"]["settings"]
        form = "romio" if any(s["library"] == "romio" for s in sets) else "cray"
        pairs = [(c["knob"], c["value"]) for c in f["fix"]["code_changes"] if c["knob"]]
        pairs += [(s["knob"], s["value"]) for s in sets
                  if s["knob"] and s["library"] in ("ompio", "lfs", form)]
        for name, value in pairs:
            if name not in out and (not name.startswith("hdf5.") or api == "hdf5"):
                out[name] = (f["rule_id"], name, values[name].normalise(value))
    return list(out.values())


@pytest.mark.parametrize("log", ["blocks2nodes-mpich.darshan", "smallindep-mpich.darshan",
                                 "h5close-openmpi.darshan", "pncput-openmpi.darshan"])
def test_tune_from_log_and_diagnose_json_agree(log: str, tmp_path: Path, capsys) -> None:
    """tune --from-log's predictions are what `iolab diagnose --json` carries as data."""
    out = tmp_path / "d.json"
    assert main(["diagnose", "--json", "-o", str(out), str(D35 / log)]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    proxy, preds = from_log(str(D35 / log), 4, 64 << 20)
    assert preds
    assert [(p.rule, p.knob, p.value) for p in preds] == _from_json(doc, proxy.api)


def _cray_fields(env_text: str) -> list[dict[str, str]]:
    """Each MPICH_MPIIO_HINTS line as Cray MPICH reads it (intro_mpi(3)): entries split on
    ',', fields on ':' (the pattern first), each field KEY=VALUE."""
    out = []
    for line in env_text.splitlines():
        if line.startswith("export MPICH_MPIIO_HINTS="):
            value = shlex.split(line.split("=", 1)[1])[0]
            for entry in value.split(","):
                _, *fields = entry.split(":")
                kv = [f.partition("=") for f in fields]
                assert all(k and sep and v for k, sep, v in kv), value
                out.append({k: v for k, _, v in kv})
    return out


def test_both_write_the_cray_line_right(tmp_path: Path) -> None:
    """diagnose's .cray.env and tune's env.sh (from the predictions, as data) for a job of 2
    nodes with aggregators per node: every field KEY=VALUE as Cray MPICH splits them, no
    cb_config_list (its ':' would split it), diagnose's cb_config_list *:2 written as cb_nodes
    for the job's nodes; tune's values are diagnose's."""
    rep = _report(D35 / "blocks2nodes-mpich.darshan")
    f = next(f for f in rep.findings if f.rule.id == "aggregators-per-node")
    cray = next(a for a in f.fix.artifacts if a.kind == "mpich-hints")
    fields = _cray_fields(cray.content)
    assert fields and all("cb_config_list" not in e for e in fields)
    romio = {s.name: s.value for s in f.fix.settings if s.library == "romio"}
    assert romio["cb_config_list"] == "*:2"
    assert fields[0]["cb_nodes"] == str(2 * rep.model.job.nodes)
    assert {s.name: s.value for s in f.fix.settings if s.library == "cray"} == fields[0]

    winner = {p.knob: p.value for p in predictions(rep)
              if knob(p.knob).kind == "romio"}
    write_artifacts(winner, tmp_path)
    env = (tmp_path / "env.sh").read_text()
    tune_fields = _cray_fields(env)
    assert tune_fields and all("cb_config_list" not in e for e in tune_fields)
    assert "cb_config_list *:2: set it with MPI_Info_set" in env
    diagnosed = {s.name: s.value for g in rep.findings for s in g.fix.settings
                 if s.library == "cray"}
    for k, v in tune_fields[0].items():
        assert diagnosed.get(k) == v or k not in diagnosed, (k, v)
