"""``iolab triage --anonymize``: a generated centre (tests/triage/logfarm.py and weekfarm.py,
names known) read into an anonymised store; every output (text, JSON, every CSV table, the
HTML dashboard) and every Parquet file read back holds none of the centre's names, user ids
or job ids, and the rankings are the readable run's under the key's hash mapping."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from darshan_writer import write_log
from dask_helpers import report, stored_rows
from dask_helpers import triage as triage_process
from logfarm import T0, Centre, _climate, make_centre
from weekfarm import APPS, EVIL_APP, EVIL_PATH, add_evil, make_weeks

from iolab.cli import main
from iolab.model.files import names_anonymised
from iolab.triage import store
from iolab.triage.anonymize import KEY_FILE, Anonymizer
from iolab.triage.render_views import CSV_TABLES, to_csv_table

UIDS = (2001, 2002, 2003, 2004, 3001, 3002, 3003, 3004, 3005, 6666)


def triage(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["triage", *args])
    return code, out.getvalue(), err.getvalue()


def outputs(where: Path, html_file: Path) -> dict[str, str]:
    """Everything the store gives: text, JSON, CSV, the dashboard from the command; the other
    CSV tables (projections of the JSON tree) rendered from its JSON, one report build each
    saved."""
    got: dict[str, str] = {}
    for name, extra in [("text", []), ("json", ["--json"]), ("csv", ["--csv"]),
                        ("csv:slowdowns", ["--csv", "--table", "slowdowns"]),
                        ("html", ["--html", str(html_file)])]:
        code, out, err = triage("--store", str(where), "--top", "1000", "-q", *extra)
        assert code == 0, err
        got[name] = out if name != "html" else html_file.read_text()
    for table in CSV_TABLES:
        got[f"csv:{table}"] = to_csv_table(json.loads(got["json"]), table)
    return got


def parquet_texts(where: Path) -> dict[str, str]:
    """Every Parquet file read back with pyarrow, as text; and the store's metadata."""
    got = {str(p): json.dumps(pq.read_table(p).to_pylist(), default=str)
           for table in store.TABLES for p in store.files(where, table)}
    got[store.META] = (where / store.META).read_text()
    return got


def known_names(root: Path) -> list[str]:
    """The centre's names a reader must not find: programs, their arguments, files, folders,
    the logs' own names and the folder they are in."""
    progs = ["climate.exe", "wrf.exe", "indep.exe", "clean.exe", "closer.exe", EVIL_APP,
             *[a.name for a in APPS]]
    return [*progs, "climate", "homea", "homeb", "slowing", "closer", "/apps/", "in.nml",
            "run.cfg", "out.nc", "ckpt.", "part.", "shared.dat", "field.dat", "out.dat",
            "alert(2)", "<script>", EVIL_PATH, "/scratch/climate", "/scratch/wrf",
            "/home/a/", "/home/b/", "user2001_", "_id101", "evil.darshan", str(root),
            root.name]


def found(name: str, texts: dict[str, str]) -> list[str]:
    forms = {name, html.escape(name), html.escape(name, quote=False)}
    return [where for where, text in texts.items() if any(f in text for f in forms)]


@pytest.fixture(scope="module")
def centre(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("centre-alice")
    make_centre(root / "jobs")
    make_weeks(root / "weeks")
    add_evil(root / "weeks")
    return root


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    k = tmp_path_factory.mktemp("site") / "triage.key"
    k.write_bytes(os.urandom(32))
    k.chmod(0o600)
    return k


@pytest.fixture(scope="module")
def plain(centre: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    where = tmp_path_factory.mktemp("plain") / "store"
    code, _, err = triage(str(centre), "--store", str(where), "-q", "-j", "1")
    assert code == 0, err
    texts = outputs(where, where.parent / "plain.html")
    return {"store": where, "outputs": texts, "parquet": parquet_texts(where),
            "report": json.loads(texts["json"])}


@pytest.fixture(scope="module")
def anon(centre: Path, key: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    where = tmp_path_factory.mktemp("anon") / "store"
    code, _, err = triage(str(centre), "--store", str(where), "-q", "-j", "1",
                          "--anonymize-key", str(key))
    assert code == 0, err
    texts = outputs(where, where.parent / "anon.html")
    return {"store": where, "outputs": texts, "parquet": parquet_texts(where),
            "report": json.loads(texts["json"])}


def test_no_name_of_the_centre_in_any_output_or_parquet_file(
        centre: Path, plain: dict, anon: dict) -> None:
    """Expected: none of the centre's program, argument, file, folder or log names in the
    anonymised store's text, JSON, CSV tables, dashboard or Parquet files (each is in the
    readable run's, so the search finds what is there) / was: every name stored as read."""
    readable = {**plain["outputs"], **plain["parquet"]}
    shared = {**anon["outputs"], **anon["parquet"]}
    for name in known_names(centre):
        assert found(name, readable), f"{name!r} is not in the readable run: a useless check"
        assert not found(name, shared), f"{name!r} in {found(name, shared)}"
    jobs = [r for p in store.files(anon["store"], "jobs") for r in pq.read_table(p).to_pylist()]
    assert {r["uid"] for r in jobs} & set(UIDS) == set()
    plain_ids = {r["job_id"] for p in store.files(plain["store"], "jobs")
                 for r in pq.read_table(p).to_pylist()} - {None}
    assert plain_ids and {r["job_id"] for r in jobs} & plain_ids == set()
    for u in UIDS:  # a uid as the outputs show one
        assert not found(f"uid {u}", shared) and not found(f'"uid": {u},', shared)
    # the mount points stay: the file-system rollups are the readable run's
    assert anon["report"]["file_systems"] == plain["report"]["file_systems"]


def test_paths_keep_their_mount_point_and_read_as_anonymised_to_diagnose(anon: dict) -> None:
    """Expected: files under /scratch stored as /scratch/<hash>/<hash>, which diagnose's
    names_anonymised recognises / was: the readable path."""
    rows = [r for p in store.files(anon["store"], "files") for r in pq.read_table(p).to_pylist()]
    paths = [r["path"] for r in rows if r["path"]]
    assert paths and all(p.startswith(r["mount"].rstrip("/") + "/")
                         for p, r in zip(paths, [r for r in rows if r["path"]]))
    assert names_anonymised(paths)
    scratch = [p for p in paths if p.startswith("/scratch/")]
    assert scratch and all(len(c) == 16 for p in scratch for c in p.split("/")[2:])


def test_rankings_are_the_readable_run_s_under_the_key_s_hashes(
        plain: dict, anon: dict, key: Path) -> None:
    """Expected: the top applications, users, jobs, slowdowns and savings of the anonymised
    store equal the readable store's with each name replaced by its keyed hash (the same
    name, the same hash, so everything groups as before) / was: no anonymised store."""
    h = Anonymizer(key.read_bytes(), "file")
    p, a = plain["report"], anon["report"]
    assert p["centre"] == a["centre"] and p["logs"] == a["logs"]

    # the same ranking by wasted node-hours; among equal ones the order is by name (hashed)
    for part in ("applications", "users", "jobs"):
        assert [x["wasted_node_hours"] for x in a[part]] == \
            [x["wasted_node_hours"] for x in p[part]]
    assert len(a["applications"]) == 10  # every program of the centre, each apart
    assert {x["application"]: (x["jobs"], x["users"], x["node_hours"], x["wasted_node_hours"],
                               [f["rule_id"] for f in x["findings"]])
            for x in a["applications"]} == \
        {h.name(x["application"]): (x["jobs"], x["users"], x["node_hours"],
                                    x["wasted_node_hours"], [f["rule_id"] for f in x["findings"]])
         for x in p["applications"]}
    assert {u["uid"]: (u["jobs"], u["applications"], u["wasted_node_hours"])
            for u in a["users"]} == \
        {h.uid(u["uid"]): (u["jobs"], u["applications"], u["wasted_node_hours"])
         for u in p["users"]}
    assert {j["job_id"]: (j["application"], j["uid"], j["wasted_node_hours"])
            for j in a["jobs"]} == \
        {h.job_id(j["job_id"]): (h.name(j["application"]), h.uid(j["uid"]),
                                 j["wasted_node_hours"]) for j in p["jobs"]}
    flag = sorted((h.name(f["application"]), h.uid(f["uid"]), f["first_week"], f["cause"])
                  for f in p["slowdowns"]["applications"])
    assert flag and flag == sorted((f["application"], f["uid"], f["first_week"], f["cause"])
                                   for f in a["slowdowns"]["applications"])
    assert {(h.name(s["application"]), s["rule_id"]): s["node_hours_per_week"]
            for s in p["savings_per_week"]} == \
        {(s["application"], s["rule_id"]): s["node_hours_per_week"]
         for s in a["savings_per_week"]}


def test_dask_local_gives_the_anonymised_store_and_report_of_j1(
        centre: Path, key: Path, anon: dict, tmp_path: Path) -> None:
    """Expected: --dask-local 2 with the same key stores the same rows and prints the same
    JSON and CSV as -j 1, byte for byte (names are hashed in the command's process, never on
    a worker) / was: no anonymised store."""
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    where = tmp_path / "store"
    p = triage_process(str(centre), "--store", str(where), "--dask-local", "2", "-q",
                       "--anonymize-key", str(key))
    assert p.returncode == 0, p.stderr
    assert report(where) == report(anon["store"])
    assert stored_rows(where) == stored_rows(anon["store"])


def new_climate_log(folder: Path) -> Path:
    """One more run of climate.exe (a log the store has not seen)."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_log(folder / "user2001_climate.exe_id999.darshan", nprocs=1024,
                     run_time_s=1200.0, exe="/apps/climate/bin/climate.exe -i in.nml",
                     records=_climate(9), jobid=999, start=T0 + 7 * 86400, uid=2001)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Centre:
    return make_centre(tmp_path_factory.mktemp("small"))


def test_a_store_s_own_key_is_made_once_kept_0600_never_printed(
        small: Centre, tmp_path: Path) -> None:
    """Expected: --anonymize without a key file makes STORE/anonymize.key (0600) once, never
    shows it, and another store (another key) hashes the same names otherwise while ranking
    them the same / was: no anonymisation."""
    reports, keys = [], []
    for name in ("a", "b"):
        where = tmp_path / name
        code, _, err = triage(str(small.root), "--store", str(where), "-j", "1", "--anonymize")
        assert code == 0, err
        k = where / KEY_FILE
        assert stat.S_IMODE(k.stat().st_mode) == 0o600 and len(k.read_bytes()) == 32
        keys.append(k.read_bytes())
        code, out, _ = triage("--store", str(where), "--json", "-q")
        shown = out + err + (where / store.META).read_text()
        assert keys[-1].hex() not in shown and repr(keys[-1]) not in shown
        reports.append(json.loads(out))
    a, b = ([(x["application"], x["jobs"], x["wasted_node_hours"]) for x in r["applications"]]
            for r in reports)
    assert [x[1:] for x in a] == [x[1:] for x in b]
    assert {x[0] for x in a}.isdisjoint(x[0] for x in b)
    assert a[0][0] == Anonymizer(keys[0], "store").name("climate.exe")


def test_an_anonymised_store_stays_anonymised_and_reads_only_new_logs(
        small: Centre, tmp_path: Path) -> None:
    """Expected: a second run without --anonymize into an anonymised store skips the stored
    logs (their paths compared hashed) and hashes a new log with the store's own key, the
    same program the same application / was: a store made anonymised could get readable
    rows."""
    where = tmp_path / "store"
    assert triage(str(small.root), "--store", str(where), "-j", "1", "-q", "--anonymize")[0] == 0
    key = (where / KEY_FILE).read_bytes()
    new = small.root / "later"
    new.mkdir()
    (new / "again.darshan").write_bytes(small.logs[0].read_bytes())  # a copy
    fresh = new_climate_log(tmp_path / "more")
    code, _, err = triage(str(small.root), str(fresh), "--store", str(where), "-j", "1")
    assert code == 0, err
    assert "1 read" in err and f"{len(small.logs) + 3} already stored" in err
    assert "1 copies of stored logs" in err
    assert (where / KEY_FILE).read_bytes() == key
    texts = parquet_texts(where)
    for name in ("climate.exe", "user2001_", str(tmp_path)):
        assert not found(name, texts), name
    code, out, _ = triage("--store", str(where), "--json", "-q")
    apps = {x["application"]: x["jobs"] for x in json.loads(out)["applications"]}
    assert apps[Anonymizer(key, "store").name("climate.exe")] == 4  # 3 runs and the new one


def test_anonymize_on_a_readable_store_is_refused_in_one_line(
        small: Centre, tmp_path: Path) -> None:
    """Expected: --anonymize (adding logs or only reporting) on a store of readable names:
    one line, exit 2, the store untouched / was: readable and hashed names mixed, or a
    report the user takes for anonymised."""
    where = tmp_path / "store"
    assert triage(str(small.root), "--store", str(where), "-j", "1", "-q")[0] == 0
    before = sorted((str(p), p.stat().st_mtime_ns) for p in where.rglob("*"))
    for args in ([str(small.root)], []):
        code, out, err = triage(*args, "--store", str(where), "--anonymize", "-q")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert "made without it" in err
    assert sorted((str(p), p.stat().st_mtime_ns) for p in where.rglob("*")) == before


def test_a_key_file_store_needs_that_key_to_add_logs(
        small: Centre, key: Path, tmp_path: Path) -> None:
    """Expected: a store made with --anonymize-key refuses another key and, to add logs,
    asks for its key in one line (its report needs none); no key copied into it / was: no
    anonymisation."""
    where = tmp_path / "store"
    assert triage(str(small.root), "--store", str(where), "-j", "1", "-q",
                  "--anonymize-key", str(key))[0] == 0
    assert not (where / KEY_FILE).exists()
    other = tmp_path / "other.key"
    other.write_bytes(os.urandom(32))
    more = new_climate_log(tmp_path / "more")
    for extra, words in (([], "give it with --anonymize-key"),
                         (["--anonymize-key", str(other)], "not the key")):
        code, _, err = triage(str(more), "--store", str(where), "-q", *extra)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert triage("--store", str(where), "--json", "-q")[0] == 0
    code, _, err = triage(str(more), "--store", str(where), "-j", "1", "--anonymize-key",
                          str(key))
    assert code == 0 and "1 read" in err


@pytest.mark.parametrize(("case", "words"), [
    ("missing", "no such file"),
    ("folder", "is a folder"),
    ("under-a-file", "cannot read it"),
    ("short", "a key needs 16"),
])
def test_a_bad_key_file_is_one_line_and_creates_nothing(
        small: Centre, tmp_path: Path, case: str, words: str) -> None:
    """Expected: a missing, unreadable or too short --anonymize-key: one line naming it,
    exit 2, no store made / was: no such option."""
    k = tmp_path / "site.key"
    if case == "folder":
        k.mkdir()
    elif case == "under-a-file":
        (tmp_path / "plain-file").write_text("x")
        k = tmp_path / "plain-file" / "site.key"
    elif case == "short":
        k.write_bytes(b"short\n")
    where = tmp_path / "store"
    code, out, err = triage(str(small.root), "--store", str(where), "--anonymize-key", str(k))
    assert code == 2 and out == "" and words in err and str(k) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not where.exists()


def test_names_in_running_text_are_hashed_and_advice_stays_readable() -> None:
    """Expected: a fix's shell-quoted program, its bare name, a path it quotes and a path it
    does not know hashed (mount kept); words holding the name, I/O, MiB/s and /dev/shm
    untouched / was: the text stored as diagnose wrote it."""
    h = Anonymizer(b"k" * 32, "file")
    exe = "/apps/bin/<b>x(1)<&b> -i in.nml"
    job = {"source_path": "/logs/a.darshan", "exe": exe}
    files = [{"path": "/scratch/alice/out.h5"}]
    mounts = ("/scratch",)
    known = h._known(job, files, mounts)
    prog = exe.split()[0]
    text = (f"run under `iolab buffer -- '{prog}' ...`; the program <b>x(1)<&b> "
            "writes /scratch/alice/out.h5 and /scratch/alice/other.dat in 64 KiB pieces; "
            "in.nml, not in.nml2; I/O at 2 MiB/s; keep it in /dev/shm")
    out = str(h.text(text, known, mounts))
    assert "alice" not in out and "<b>" not in out and "out.h5" not in out
    assert "other.dat" not in out and " in.nml," not in out and "in.nml2" in out
    assert f"-- {h.path(prog, mounts)} ..." in out and h.name(prog.rsplit("/", 1)[1]) in out
    assert h.path("/scratch/alice/out.h5", mounts) in out
    assert "/scratch/" + h.name("alice") + "/" + h.name("other.dat") in out
    assert "I/O at 2 MiB/s" in out and "/dev/shm" in out and "64 KiB" in out
    assert h.exe(exe, mounts) == " ".join([str(h.path(prog)), h.name("-i"), h.name("in.nml")])
    assert h.path("/scratch", mounts) == "/scratch" and h.path("<STDOUT>") == "<STDOUT>"


def test_a_store_whose_own_key_is_gone_is_refused_once_it_holds_jobs(
        small: Centre, tmp_path: Path) -> None:
    """Expected: an anonymised store that holds jobs and lost its key refuses new logs in one
    line (they could not be hashed like the stored ones); one that holds no job yet (a run
    stopped before its key was written) gets a new key and its id in the metadata / was:
    no anonymisation."""
    empty = tmp_path / "none"
    empty.mkdir()
    where = tmp_path / "store"
    assert triage(str(empty), "--store", str(where), "-q", "--anonymize")[0] == 0
    (where / KEY_FILE).unlink()  # nothing hashed with it yet
    code, _, err = triage(str(small.root), "--store", str(where), "-q", "-j", "1")
    assert code == 0, err
    key = (where / KEY_FILE).read_bytes()
    meta = json.loads((where / store.META).read_text())
    assert meta["anonymized"]["key_id"] == Anonymizer(key, "store").key_id
    (where / KEY_FILE).unlink()
    before = sorted(str(p) for p in where.rglob("*"))
    code, out, err = triage(str(new_climate_log(tmp_path / "more")), "--store", str(where))
    assert code == 2 and "is gone" in err and len(err.strip().splitlines()) == 1
    assert sorted(str(p) for p in where.rglob("*")) == before


def test_every_output_of_an_anonymised_store_says_so_with_the_key_id_never_the_key(
        plain: dict, anon: dict, key: Path) -> None:
    """Expected: the JSON (anonymized true, the key id and where the key is), the text
    header, every CSV table (a last column, anonymized_key_id, in every row) and a visible
    line of the dashboard say the store's names are hashes; a readable store's say nothing /
    was: nothing in any output told a reader the names were hashes."""
    key_id = Anonymizer(key.read_bytes(), "file").key_id
    a, p = anon["report"], plain["report"]
    assert a["anonymized"] is True and a["anonymization"]["key_id"] == key_id
    assert a["anonymization"]["key_source"] == "file" and "HMAC" in a["anonymization"]["hash"]
    assert p["anonymized"] is False and p["anonymization"] is None
    first = anon["outputs"]["text"].splitlines()[0]
    assert first.startswith("iolab triage: ") and "anonymised store" in first and key_id in first
    assert "anonymised" not in plain["outputs"]["text"]
    tables = [name for name in anon["outputs"] if name.startswith("csv")]
    assert len(tables) == len(CSV_TABLES) + 1  # the jobs table and every --table
    for name in tables:
        for outs, want in ((anon["outputs"], key_id), (plain["outputs"], "")):
            rows = list(csv.reader(io.StringIO(outs[name])))
            assert rows[0][-1] == "anonymized_key_id", name
            assert all(len(r) == len(rows[0]) and r[-1] == want for r in rows[1:]), name
        assert len(list(csv.reader(io.StringIO(anon["outputs"][name])))) > 1 or \
            name == "csv:fs-slowdowns", name  # rows to check (no file system slows here)
    shown = re.findall(r'<p class="sub">([^<]*)</p>', anon["outputs"]["html"])
    assert any("Anonymised store" in s and key_id in s for s in shown), shown
    assert "nonymised store" not in plain["outputs"]["html"]
    secret = key.read_bytes()
    for text in anon["outputs"].values():
        assert secret.hex() not in text and str(key) not in text
