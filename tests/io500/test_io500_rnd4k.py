"""``iolab io500 --mode extended``'s ior-rnd4K-easy-read: IOR -z -z (random 4 KiB reads with
repetition) over ior-easy's files, run for real on 2 ranks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tool_helpers import mpirun_env, run_iolab

GIB = 1 << 30
OFF = "".join(f"\n[{s}]\nrun = FALSE\n" for s in (
    "ior-easy-read", "mdtest-easy", "ior-hard", "mdtest-hard", "find", "find-easy",
    "find-hard", "mdworkbench-create", "mdworkbench-bench", "mdworkbench-delete"))


@pytest.mark.parametrize("fpp", ["TRUE", "FALSE"])
def test_rnd4k_easy_read_runs_iors_random_with_repetition(tmp_path: Path, fpp: str) -> None:
    """expected the phase run as IOR -z -z reads of 4 KiB (engine --random-repeat) over
    ior-easy's files, every 4 KiB piece's worth read / was refused up front ("IOR -z -z ...
    is not in the engine")."""
    ini = tmp_path / "config.ini"
    ini.write_text(f"[global]\ndatadir = {tmp_path}/data\nresultdir = {tmp_path}/res\n"
                   "timestamp-resultdir = FALSE\ntimestamp-datadir = FALSE\n\n[debug]\n"
                   "stonewall-time = 1\n\n[ior-easy]\ntransferSize = 64k\nblockSize = 2m\n"
                   f"filePerProc = {fpp}\n"
                   + OFF)
    r = run_iolab("io500", "--np", "2", "--mode", "extended", "--json", "--db",
                  str(tmp_path / "r.db"), str(ini), cwd=tmp_path, env=mpirun_env(),
                  timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    phases = {p["name"]: p for p in json.loads(r.stdout)["phases"]}
    rnd = phases["ior-rnd4K-easy-read"]
    assert rnd["valid"] and rnd["run_id"] is not None, rnd
    assert "-z -z -a" in rnd["io500_exe"] and "-s=10000000" in rnd["io500_exe"]
    words = rnd["iolab_exe"].split()
    assert "--random-repeat" in words and words[words.index("--transfer") + 1] == "4096"
    assert words[words.index("--layout") + 1] == ("fpp" if fpp == "TRUE" else "segmented")
    # ior-easy wrote 2 MiB per rank; as many 4 KiB reads per rank, all worn out to the end
    per_rank = 2 * 1024 * 1024
    assert words[words.index("--segments") + 1] == str(per_rank // 4096)
    assert rnd["score"] * rnd["time_s"] * GIB == pytest.approx(2 * per_rank, rel=1e-3)
    assert "[ior-rnd4K-easy-read]" in (tmp_path / "res" / "result.txt").read_text()
