"""Run one launched engine: stream its progress, catch its JSON, pass interruptions on.

The launcher (mpirun/srun) starts in its own session so that a Ctrl-C reaches only this
process; we then interrupt every rank the way that launcher allows
(:func:`iolab.launch.interrupt`), and the engine removes its scratch files and still
prints the JSON of what it did. A second Ctrl-C, or a launcher that does not stop in time,
kills the whole session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import IO, Any, Optional

from iolab.errors import UsageError
from iolab.launch import Launch, interrupt

STOP_GRACE_S = 30.0  # after passing an interruption on, the launcher gets this long, then SIGKILL


@dataclass(frozen=True)
class Progress:
    """One ``progress <rep> <op> <pass> <done>/<total>`` line of the engine."""

    repetition: int
    op: str
    read_pass: int
    done: int
    total: int


def parse_progress(line: str) -> Progress | None:
    parts = line.split()
    if len(parts) != 5 or parts[0] != "progress" or "/" not in parts[4]:
        return None
    try:
        done, total = (int(x) for x in parts[4].split("/", 1))
        return Progress(int(parts[1]), parts[2], int(parts[3]), done, total)
    except ValueError:
        return None


@dataclass
class EngineOutcome:
    exit_code: int
    doc: dict[str, Any] | None
    messages: list[str] = field(default_factory=list)  # stderr lines other than progress
    wall_time_s: float = 0.0
    interrupted: bool = False
    documents: int = 0  # JSON documents begun on stdout: more than one = separate jobs

    def engine_message(self) -> str | None:
        """The engine's own one-line message (rank 0), not the launcher's banner."""
        for line in self.messages:
            if line.startswith("iolab-bench"):
                return line
        for line in self.messages:
            text = line.strip()
            if text and not set(text) <= set("-=*") and not text.startswith("["):
                return text
        return None


def parse_document(stdout: str) -> dict[str, Any] | None:
    """The engine's JSON document from stdout, skipping anything a launcher printed first."""
    text = stdout.strip()
    if not text:
        return None
    starts = [0] if text.startswith("{") else []
    starts += [i + 1 for i, ch in enumerate(text) if ch == "\n" and text[i + 1:i + 2] == "{"]
    decoder = json.JSONDecoder()
    for start in starts:
        try:
            doc, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(doc, dict) and "schema_version" in doc:
            return doc
    return None


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """A job scheduler stops us with SIGTERM: treat it like Ctrl-C so the run is stored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Optional[FrameType]) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _kill_session(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_all(stream: IO[bytes], sink: list[bytes]) -> None:
    sink.append(stream.read())


def run_engine(launch: Launch, on_progress: Callable[[Progress], None],
               on_message: Callable[[str], None] | None = None) -> EngineOutcome:
    """Start ``launch`` and wait for it; interruptions are passed on, never raised."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(launch.argv, env=launch.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise UsageError(f"cannot start {launch.argv[0]}: {exc.strerror}") from None
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(proc.stdout, out), daemon=True)
    reader.start()
    messages: list[str] = []
    interrupted = False
    killer: threading.Timer | None = None
    with _sigterm_as_interrupt():
        while True:
            try:
                for raw in proc.stderr:
                    line = raw.decode("utf-8", "replace").rstrip("\n")
                    prog = parse_progress(line)
                    if prog is not None:
                        on_progress(prog)
                    else:
                        messages.append(line)
                        if on_message:
                            on_message(line)
                proc.wait()
                break
            except KeyboardInterrupt:
                if interrupted:  # the second one: stop now
                    _kill_session(proc)
                    continue
                interrupted = True
                try:
                    interrupt(launch, proc.pid)
                except KeyboardInterrupt:  # impatient: a second Ctrl-C while passing it on
                    _kill_session(proc)
                killer = threading.Timer(STOP_GRACE_S, _kill_session, args=(proc,))
                killer.daemon = True
                killer.start()
    if killer:
        killer.cancel()
    reader.join()
    stdout = b"".join(out).decode("utf-8", "replace")
    return EngineOutcome(proc.returncode, parse_document(stdout), messages,
                         time.monotonic() - start, interrupted,
                         stdout.count('"schema_version"'))


class ProgressView:
    """Shows engine progress: a live status line on a terminal, plain lines otherwise.

    Plain lines appear only once a run has lasted ``quiet_s`` seconds, so short runs (and
    the test logs) stay quiet while a long run still shows it is alive; the lines held back
    until then are printed first, so a log shows every phase from the first.
    """

    def __init__(self, title: str, stream: IO[str] | None = None, quiet_s: float = 5.0) -> None:
        self.title = title
        self.stream = stream if stream is not None else sys.stderr
        self.quiet_s = quiet_s
        self.start = time.monotonic()
        self._status: Any = None
        self._held: list[str] = []
        if self.stream.isatty():
            from rich.console import Console  # imported here: only terminals need it

            self._status = Console(file=self.stream).status(f"{title}: starting")
            self._status.start()

    def update(self, p: Progress) -> None:
        what = f"{p.op}" + (f" pass {p.read_pass + 1}" if p.op == "read" else "")
        text = f"{self.title}: repetition {p.repetition + 1}, {what} done ({p.done}/{p.total})"
        if self._status is not None:
            self._status.update(text)
        elif time.monotonic() - self.start >= self.quiet_s:
            for line in [*self._held, text]:
                print(f"iolab: {line}", file=self.stream, flush=True)
            self._held.clear()
        else:
            self._held.append(text)

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
