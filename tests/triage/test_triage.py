"""``iolab triage`` on a generated centre (tests/triage/logfarm.py): real Darshan logs with
injected problems of known cost, read into a real Parquet store and ranked with DuckDB."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from darshan_writer import write_log
from logfarm import CLOSE_S, Centre, make_centre

from iolab.cli import main
from iolab.triage import store


def triage(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["triage", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def centre(tmp_path_factory: pytest.TempPathFactory) -> Centre:
    return make_centre(tmp_path_factory.mktemp("centre"))


@pytest.fixture(scope="module")
def report(centre: Centre, tmp_path_factory: pytest.TempPathFactory) -> dict:
    where = tmp_path_factory.mktemp("st") / "store"
    assert main(["triage", str(centre.root), "--store", str(where), "-q", "-j", "1"]) == 0
    code = main(["triage", "--store", str(where), "--json", "-q"])  # report from the store
    assert code == 0
    return {"store": where}


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = triage(capsys, *args, "--json", "-q")
    assert code == 0, err
    return json.loads(out)


def test_the_injected_costliest_application_comes_first(
        centre: Centre, report: dict, capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(capsys, "--store", str(report["store"]))
    assert (r["schema_version"], r["kind"]) == (1, "triage")
    apps = {a["application"]: a for a in r["applications"]}
    assert [a["application"] for a in r["applications"][:2]] == ["climate.exe", "wrf.exe"]
    for name in ("climate.exe", "wrf.exe"):  # the known cost, within 1%
        want = centre.apps[name].wasted_node_hours
        assert apps[name]["wasted_node_hours"] == pytest.approx(want, rel=0.01), name
    climate = apps["climate.exe"]
    assert climate["jobs_nodes_estimated"] == 3 and climate["users"] == 1
    assert climate["findings"][0]["rule_id"] == "slow-close"
    assert "sync" in climate["findings"][0]["fix"]
    assert apps["wrf.exe"]["findings"][0]["rule_id"] == "small-requests"
    assert apps["wrf.exe"]["jobs_nodes_estimated"] == 0  # 4 nodes: every rank's host in DXT
    assert apps["clean.exe"]["wasted_node_hours"] == 0 and apps["clean.exe"]["node_hours"] > 0
    jobs = r["jobs"]
    assert [j["application"] for j in jobs[:3]] == ["climate.exe"] * 3
    assert jobs[0]["nodes"] == 16 and jobs[0]["nodes_estimated"]
    assert jobs[0]["waste_s"] == pytest.approx(CLOSE_S, rel=0.01)
    assert r["users"][0]["uid"] == 2001
    c = r["centre"]
    assert c["jobs"] == len(centre.logs)
    assert 0 < c["wasted_node_hours"] <= c["io_node_hours"] < c["node_hours"]
    assert c["io_share"] == pytest.approx(c["io_node_hours"] / c["node_hours"], rel=1e-3)


def test_experiments_are_listed_apart_to_be_proven(
        report: dict, capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(capsys, "--store", str(report["store"]))
    exp = [e for e in r["experiments"] if e["application"] == "indep.exe"]
    assert exp and exp[0]["rule_id"] == "mpiio-independent" and exp[0]["jobs"] == 2
    assert exp[0]["prove_with"].startswith("iolab tune --from-log /")
    assert exp[0]["estimated_gain_node_hours"] > 0
    for a in r["applications"]:  # never among the waste
        assert all(f["rule_id"] != "mpiio-independent" for f in a["findings"])


def test_unreadable_logs_are_rows_with_their_reason(
        centre: Centre, report: dict, capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(capsys, "--store", str(report["store"]))
    bad = {Path(u["source_path"]): u["reason"] for u in r["unreadable"]}
    assert set(bad) == set(centre.bad)
    for path, word in centre.bad.items():
        assert word in bad[path], (path, bad[path])
    assert r["logs"] == {"stored": len(centre.logs) + 3, "read": len(centre.logs),
                         "unreadable": 3}


def test_text_and_csv_walk_the_same_ranking(
        report: dict, capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = triage(capsys, "--store", str(report["store"]))
    assert code == 0
    assert text.index("climate.exe") < text.index("wrf.exe")
    assert "16*" in text and "could not be read (3)" in text and "prove it: iolab tune" in text
    code, csv_text, _ = triage(capsys, "--store", str(report["store"]), "--csv")
    rows = [ln.split(",") for ln in csv_text.splitlines()]
    assert rows[0][:4] == ["rank", "job_key", "job_id", "application"]
    assert len(rows) == 1 + 10 and [r[3] for r in rows[1:4]] == ["climate.exe"] * 3


def test_store_schema_is_versioned_and_partitioned_by_day(
        centre: Centre, report: dict) -> None:
    where = report["store"]
    meta = json.loads((where / store.META).read_text())
    assert meta["kind"] == "iolab-triage-store" and meta["schema_version"] == store.SCHEMA_VERSION
    for table in store.TABLES:
        parts = store.files(where, table)
        assert parts
        names = [c[0] for c in meta["tables"][table]]
        assert pq.read_schema(parts[0]).names == names
    days = {p.parent.name for p in store.files(where, "jobs")}
    assert days == {"day=2024-06-01", "day=2024-06-02", "day=2024-06-03", "day=2024-06-04",
                    "day=2024-06-05", "day=unknown"}
    jobs = pq.read_table(where / "jobs").to_pylist()
    wrf = [j for j in jobs if j["application"] == "wrf.exe"]
    assert {(j["nodes"], j["nodes_source"]) for j in wrf} == {(4, "trace-hosts")}
    climate = [j for j in jobs if j["application"] == "climate.exe"]
    assert {(j["nodes"], j["nodes_source"]) for j in climate} == {(None, "unknown")}


def test_a_second_run_reads_only_new_logs(
        centre: Centre, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Expected: logs already stored are not read again, by path or by content."""
    tree = tmp_path / "logs"
    shutil.copytree(centre.root, tree)
    where = tmp_path / "store"
    code, _, err = triage(capsys, str(tree), "--store", str(where), "-j", "1")
    assert code == 0 and f"{len(centre.logs)} read, 3 could not be read" in err
    first = _json(capsys, "--store", str(where))
    code, _, err = triage(capsys, str(tree), "--store", str(where), "-j", "1")
    assert f"0 read, 0 could not be read, {len(centre.logs) + 3} already stored" in err
    shutil.copy(centre.logs[0], tree / "renamed-copy.darshan")  # same content, new name
    write_log(tree / "new.darshan", nprocs=8, run_time_s=10.0, exe="/apps/new/bin/new.exe",
              records=[], jobid=999, start=1_717_300_000, uid=3000)
    code, _, err = triage(capsys, str(tree), "--store", str(where), "-j", "1")
    assert "1 read, 0 could not be read" in err and "1 copies of stored logs" in err
    again = _json(capsys, "--store", str(where))
    assert again["logs"]["stored"] == first["logs"]["stored"] + 1
    assert again["applications"][:2] == first["applications"][:2]


def test_j1_and_j2_give_the_same_report_byte_for_byte(
        centre: Centre, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for jobs in ("1", "2"):
        where = tmp_path / f"store{jobs}"
        code, _, err = triage(capsys, str(centre.root), "--store", str(where), "-j", jobs,
                              "-q", "--batch", "3")
        assert code == 0, err
        code, out, _ = triage(capsys, "--store", str(where), "--json")
        code, csv_text, _ = triage(capsys, "--store", str(where), "--csv")
        outs.append((out, csv_text))
    assert outs[0][0] == outs[1][0] and outs[0][1] == outs[1][1]
    assert json.loads(outs[0][0])["logs"]["read"] == len(centre.logs)


def test_manifest_with_relative_and_missing_paths(
        centre: Centre, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = tmp_path / "logs.txt"
    rel = Path(shutil.copy(centre.logs[0], tmp_path / "here.darshan")).name
    listing.write_text(f"# a day's logs\n{rel}\n\n{centre.logs[-1]}\n{tmp_path}/gone.darshan\n")
    where = tmp_path / "store"
    r = _json(capsys, str(listing), "--store", str(where), "-j", "1")
    assert r["logs"] == {"stored": 3, "read": 2, "unreadable": 1}
    assert r["unreadable"][0]["source_path"] == f"{tmp_path}/gone.darshan"
    assert "cannot open" in r["unreadable"][0]["reason"]


def test_an_iolab_profile_is_a_job_with_its_nodes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "logs" / "prof"
    folder.mkdir(parents=True)
    for rank, host in enumerate(("n1", "n1", "n2", "n2")):
        lines = [{"type": "process", "v": 1, "pid": 10 + rank, "host": host, "rank": rank,
                  "nprocs": 4, "mpi": True, "start_unix": 1_717_200_000.0,
                  "end_unix": 1_717_200_100.0, "end": "exit", "partial": False,
                  "cmdline": ["/apps/p/bin/prof.exe"], "left_out": {}},
                 {"type": "names", "v": 1, "module": "POSIX",
                  "i": ["POSIX_OPENS", "POSIX_WRITES", "POSIX_BYTES_WRITTEN",
                        "POSIX_SIZE_WRITE_0_100"], "f": ["POSIX_F_WRITE_TIME"]},
                 {"type": "record", "v": 1, "module": "POSIX", "idx": 0, "id": f"{rank + 1:04x}",
                  "path": f"/scratch/p/out.{rank}", "i": [1, 400000, 400000 * 10, 400000],
                  "f": [40.0]}]
        (folder / f"part.{rank}.iolabp").write_text("".join(json.dumps(x) + "\n"
                                                            for x in lines))
    r = _json(capsys, str(tmp_path / "logs"), "--store", str(tmp_path / "store"), "-j", "1")
    (job,) = r["jobs"]
    assert job["application"] == "prof.exe" and job["nodes"] == 2
    assert not job["nodes_estimated"] and job["wasted_node_hours"] > 0


@pytest.mark.parametrize("args,message", [
    (["/no/such/folder"], "no such file or folder"),
    ([], "no triage store there"),
])
def test_bad_input_is_one_line_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        message: str) -> None:
    where = tmp_path / "store"
    code, out, err = triage(capsys, *args, "--store", str(where))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not where.exists()


def test_a_folder_with_other_files_is_never_a_store(
        centre: Centre, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    code, _, err = triage(capsys, str(centre.logs[0]), "--store", str(tmp_path))
    assert code == 2 and "other files" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
