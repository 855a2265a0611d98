"""``iolab triage --anonymize``: a store (and so every report, CSV table and dashboard made
from it) with no readable user id, job id, executable, argument or path, for data that leaves
the centre (a vendor, a paper).

Names are replaced at ingest, in the command's own process, before a row is written: nothing
readable reaches the store, and the key never goes to the pool's or Dask's workers. Each
name is a keyed hash, HMAC-SHA256 with the site's key, so

- the same name is the same hash everywhere in a store (rankings by user and application
  group as before: an application is the hash of its executable's base name, which is also
  the last part of its hashed executable path);
- another key (another store made without ``--anonymize-key``) gives other hashes, and
  without the key a hash cannot be checked against a guessed name.

Paths keep their mount point readable (``/scratch/<hash>/<hash>``, each component hashed on
its own, so files of one folder stay in one folder): the file-system rollups need it, a mount
point names no one, and it is the shape ``iolab diagnose`` recognises as anonymised. A
component is 16 hex digits (64 bits), which diagnose's ``names_anonymised`` takes for a hash.

The key is ``--anonymize-key FILE`` (the site's salt, kept outside the store), or 32 random
bytes made once in the store (``STORE/anonymize.key``, mode 0600). It is never printed: the
store's metadata records only a key id (an HMAC of a fixed text), so a later run with another
key is refused instead of hashing the same names differently.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.triage import store
from iolab.triage.read import application
from iolab.triage.store import META

KEY_FILE = "anonymize.key"  # in the store, when no --anonymize-key is given
META_KEY = "anonymized"  # the record in triage-store.json
MIN_KEY_BYTES = 16
HASH_HEX = 16  # 64 bits a name: no collision among a centre's names in practice
# Names in a finding's advice that are no one's (a hint such as "(/dev/shm, local SSD)").
_GENERIC_PATHS = frozenset({"/dev/shm", "/tmp", "/dev/null"})
# An absolute path in running text: a '/' that does not follow a word, a dot or another
# '/' (I/O, MiB/s, https://), up to a space, a quote or a bracket.
_PATH_IN_TEXT = re.compile(r"(?<![\w.:/~$-])/[^\s'\"`<>|;,()\[\]{}]+")
_PLACEHOLDER = "\x00{}\x00"


# ---- the command-line block: --anonymize, --anonymize-key ------------------------------------

def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("anonymised stores (for data that leaves the centre)")
    g.add_argument("--anonymize", action="store_true",
                   help="replace user ids, job ids, executables, arguments and paths by keyed "
                        "hashes (HMAC-SHA256) before anything is stored; mount points stay "
                        "readable. Only for a new store; a store made so stays so")
    g.add_argument("--anonymize-key", metavar="FILE",
                   help="the site's key for --anonymize (16 bytes or more, e.g. head -c 32 "
                        "/dev/urandom > FILE; implies --anonymize); default: a key made once "
                        f"in the store ({KEY_FILE}, mode 0600)")


# ---- the hashes ------------------------------------------------------------------------------

class Anonymizer:
    """Keyed hashes of a store's names. ``key_source``: ``file`` or ``store``."""

    def __init__(self, key: bytes, key_source: str) -> None:
        self._key = key
        self.key_source = key_source
        self._name = functools.lru_cache(maxsize=65536)(self._digest_hex)

    def __repr__(self) -> str:  # never the key
        return f"Anonymizer(key_source={self.key_source!r}, key_id={self.key_id!r})"

    def _mac(self, domain: str, value: str) -> bytes:
        msg = domain.encode() + b"\x00" + value.encode("utf-8", "surrogateescape")
        return hmac.new(self._key, msg, hashlib.sha256).digest()

    def _digest_hex(self, value: str) -> str:
        return self._mac("name", value).hex()[:HASH_HEX]

    @property
    def key_id(self) -> str:
        """Tells keys apart without telling anything of the key."""
        return self._mac("key-id", "iolab triage").hex()[:HASH_HEX]

    def meta(self) -> dict[str, Any]:
        return {"key": self.key_source, "key_id": self.key_id, "hash": "HMAC-SHA256, "
                f"{HASH_HEX} hex digits a name; mount points readable"}

    def name(self, value: str) -> str:
        """One name (a path component, a program, an argument)."""
        if value in ("", ".", ".."):
            return value
        return str(self._name(value))

    def uid(self, uid: int | None) -> int | None:
        # 53 bits: exact in JSON readers that hold numbers as doubles (JavaScript)
        return None if uid is None else int.from_bytes(self._mac("uid", str(uid))[:8],
                                                       "big") >> 11

    def job_id(self, job_id: str | None) -> str | None:
        return None if job_id is None else self._mac("job", job_id).hex()[:HASH_HEX]

    def path(self, path: str | None, mounts: tuple[str, ...] = ()) -> str | None:
        """A path with its mount point kept and every component after it hashed."""
        if path is None or (path.startswith("<") and path.endswith(">") and "/" not in path):
            return path  # None, or a stream (<STDOUT>)
        keep = ""
        for point in mounts:  # longest first
            if point != "/" and (path == point or path.startswith(point.rstrip("/") + "/")):
                keep = point.rstrip("/")
                break
        return keep + "/".join(self.name(c) for c in path[len(keep):].split("/"))

    def exe(self, exe: str | None, mounts: tuple[str, ...] = ()) -> str | None:
        """A command line: its program a path (or a name), every argument hashed."""
        if exe is None or not exe.strip():
            return exe
        return " ".join(str(self.path(w, mounts)) if "/" in w else self.name(w)
                        for w in exe.split())

    def text(self, text: str | None, known: dict[str, str], mounts: tuple[str, ...]) -> str | None:
        """Running text (a fix, a reason): the job's own names (``known``: name -> hash, as
        written or shell-quoted) replaced, then any other absolute path."""
        if not text:
            return text
        held: list[str] = []

        def hold(anon: str) -> str:
            held.append(anon)  # out of reach of the later passes until the end
            return _PLACEHOLDER.format(chr(0xE000 + len(held) - 1))

        for orig in sorted(known, key=len, reverse=True):
            for form in dict.fromkeys((shlex.quote(orig), orig)):
                if "/" in form:  # a path: wherever it is
                    if form in text:
                        text = text.replace(form, hold(known[orig]))
                elif form in text:  # a bare name: only as a word of its own
                    anon = known[orig]
                    text = re.sub(r"(?<![\w.-])" + re.escape(form) + r"(?![\w.-])",
                                  lambda _m: hold(anon), text)  # noqa: B023 - used at once

        def other_path(m: re.Match[str]) -> str:
            p = m.group(0)
            return p if p in _GENERIC_PATHS else str(self.path(p, mounts))

        text = _PATH_IN_TEXT.sub(other_path, text)
        for i, anon in enumerate(held):
            text = text.replace(_PLACEHOLDER.format(chr(0xE000 + i)), anon)
        return text

    # ---- one log's rows ----------------------------------------------------------------------

    def source_path(self, path: str) -> str:
        """The log's own path (on the centre's archive, not the job's mounts): all hashed."""
        return str(self.path(path))

    def job_key(self, key: str) -> str:
        return "missing:" + self.source_path(key[8:]) if key.startswith("missing:") else key

    def result(self, res: Any) -> None:
        """A read log's rows (read.LogResult), made anonymous in place."""
        mounts = tuple(sorted(set(res.mounts), key=len, reverse=True))
        job = res.job
        known = self._known(job, res.files, mounts)
        raw_source = job["source_path"]
        job["job_key"] = self.job_key(job["job_key"])
        job["source_path"] = self.source_path(raw_source)
        job["job_id"] = self.job_id(job["job_id"])
        job["uid"] = self.uid(job["uid"])
        if job["exe"] is not None:
            job["exe"] = self.exe(job["exe"], mounts)
            job["application"] = application(job["exe"] or "")
        job["reason"] = self.text(job["reason"], known, mounts)
        for f in res.findings:
            f["job_key"] = job["job_key"]
            f["title"] = self.text(f["title"], known, mounts)
            f["fix_text"] = self.text(f["fix_text"], known, mounts)
        for f in res.files:
            f["job_key"] = job["job_key"]
            f["path"] = self.path(f["path"], mounts)
        # file_systems: mount points and types only, readable by design

    def _known(self, job: dict[str, Any], files: list[dict[str, Any]],
               mounts: tuple[str, ...]) -> dict[str, str]:
        """The job's names and their hashes, to be found in its texts."""
        known: dict[str, str] = {job["source_path"]: self.source_path(job["source_path"])}
        for f in files:
            if f["path"]:
                known[f["path"]] = str(self.path(f["path"], mounts))
        exe = job["exe"]
        if exe and exe.strip():
            known[exe] = str(self.exe(exe, mounts))
            for w in exe.split():
                if "/" in w:
                    known[w] = str(self.path(w, mounts))
                    w = os.path.basename(w)
                if w and not w.startswith("-") and not w.isdigit():
                    known[w] = self.name(w)
        return known


# ---- which key, checked before anything is read or created ----------------------------------

@dataclass
class Plan:
    anonymizer: Anonymizer
    new_key: bytes | None = None  # to be written into the store when it is made


def _read_key_file(path_text: str) -> bytes:
    if path_text == "":
        raise UsageError("--anonymize-key: empty file name")
    path = Path(path_text).expanduser()
    if path.is_dir():
        raise UsageError(f"--anonymize-key {path_text} is a folder; give the key file")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--anonymize-key {path_text}: no such file; make the site's key once "
                         f"(head -c 32 /dev/urandom > {path_text}; chmod 600 {path_text})"
                         ) from None
    except OSError as exc:
        raise UsageError(f"--anonymize-key {path_text}: cannot read it "
                         f"({exc.strerror or exc})") from None
    key = data.rstrip(b"\r\n")  # a key written with echo or openssl rand -hex
    if len(key) < MIN_KEY_BYTES:
        raise UsageError(f"--anonymize-key {path_text}: {len(key)} bytes, a key needs "
                         f"{MIN_KEY_BYTES} or more (head -c 32 /dev/urandom > FILE)")
    return key


def stored_record(where: Path) -> dict[str, Any] | None:
    """The store's anonymisation record (None: a store of readable names, or no store)."""
    try:
        info = json.loads((where / META).read_text())
    except (OSError, ValueError):
        return None  # no store yet (check_store has refused a damaged one)
    rec = info.get(META_KEY) if isinstance(info, dict) else None
    return rec if isinstance(rec, dict) else None


def report_record(where: Path) -> dict[str, Any] | None:
    """What every report of an anonymised store says of it (None: readable names): the key's
    id and where the key is kept, never the key."""
    rec = stored_record(where)
    if rec is None:
        return None
    return {"key_id": rec.get("key_id"), "key_source": rec.get("key"), "hash": rec.get("hash")}


def plan(args: argparse.Namespace, where: Path, reading: bool) -> Plan | None:
    """The anonymiser this run writes with (None: names stored as they are). Bad keys and a
    store of readable names asked to be anonymised are refused here, before anything is read
    or created. A store made anonymised stays so, with or without --anonymize."""
    asked = bool(args.anonymize or args.anonymize_key is not None)
    given = _read_key_file(args.anonymize_key) if args.anonymize_key is not None else None
    exists = (where / store.META).exists()
    rec = stored_record(where) if exists else None
    if exists and rec is None:
        if asked:
            raise UsageError(f"--anonymize: the store {where} was made without it and holds "
                             "readable names; read the logs again with --anonymize into a new "
                             "--store folder")
        return None
    if rec is None:  # a new store
        if not asked:
            return None
        if given is not None:
            return Plan(Anonymizer(given, "file"))
        fresh = secrets.token_bytes(32)
        return Plan(Anonymizer(fresh, "store"), new_key=fresh)
    return _existing(where, rec, given, reading)


def _existing(where: Path, rec: dict[str, Any], given: bytes | None,
              reading: bool) -> Plan | None:
    if given is not None:
        anon = Anonymizer(given, str(rec.get("key")))
    elif rec.get("key") == "file":
        if not reading:
            return None  # a report: nothing is hashed
        raise UsageError(f"--store {where} is anonymised with the site's key file: give it "
                         "with --anonymize-key FILE to add logs")
    else:
        key_path = where / KEY_FILE
        try:
            anon = Anonymizer(key_path.read_bytes(), "store")
        except FileNotFoundError:
            if store.files(where, "jobs"):
                raise UsageError(f"--store {where} is anonymised but its key {key_path} is gone: "
                                 "new logs cannot be hashed like the stored ones; read all the "
                                 "logs again into a new --store folder") from None
            fresh = secrets.token_bytes(32)  # a run killed before its key was written
            return Plan(Anonymizer(fresh, "store"), new_key=fresh)
        except OSError as exc:
            raise UsageError(f"--store {where}: cannot read its key {key_path} "
                             f"({exc.strerror or exc})") from None
    if anon.key_id != rec.get("key_id"):
        raise UsageError(f"--anonymize-key: not the key the store {where} was anonymised with "
                         f"(key id {anon.key_id}, the store's {rec.get('key_id')}); give "
                         "that key, or read the logs into a new --store folder")
    return Plan(anon)


def prepare_store(where: Path, p: Plan) -> None:
    """Make the store (its metadata saying it is anonymised) and, when new, its own key:
    the metadata first, so a run killed in between leaves a store the next run completes."""
    record = {META_KEY: p.anonymizer.meta()}
    store.open_store(where, record)
    if p.new_key is None:
        return
    meta = where / store.META
    info = json.loads(meta.read_text())
    if (where / KEY_FILE).exists():
        raise UsageError(f"--store {where}: another run made the store and its key at the same "
                         "time; run this command again (it will use that key)")
    if info.get(META_KEY) != record[META_KEY]:  # a killed run's record, of a key never kept
        info.update(record)
        tmp = meta.with_name(f".{meta.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(info, indent=1) + "\n")
        os.replace(tmp, meta)
    _write_store_key(where, p.new_key)


def _write_store_key(where: Path, key: bytes) -> None:
    """The store's own key: created once, readable by its owner only."""
    try:
        fd = os.open(where / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"--store {where}: another run made the store's key at the same "
                         "time; run this command again (it will use that key)") from None
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
