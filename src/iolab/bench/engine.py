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

from iolab.errors import UsageError, verb_line
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


@dataclass(frozen=True)
class PhaseBytes:
    """One ``progress-bytes <rep> <op> <pass> <done>/<total> <seconds>`` line: inside a
    phase, rank 0's own share done scaled to the phase's bytes (an estimate that assumes the
    ranks keep pace; the phase's end line is exact), and the seconds since it began."""

    repetition: int
    op: str
    read_pass: int
    done_bytes: int
    total_bytes: int
    elapsed_s: float

    @property
    def rate_bytes_per_s(self) -> float | None:
        return self.done_bytes / self.elapsed_s if self.elapsed_s > 0 else None

    @property
    def left_s(self) -> float | None:
        rate = self.rate_bytes_per_s
        return (self.total_bytes - self.done_bytes) / rate if rate else None


def parse_progress(line: str) -> Progress | PhaseBytes | None:
    parts = line.split()
    try:
        if len(parts) == 5 and parts[0] == "progress" and "/" in parts[4]:
            done, total = (int(x) for x in parts[4].split("/", 1))
            return Progress(int(parts[1]), parts[2], int(parts[3]), done, total)
        if len(parts) == 6 and parts[0] == "progress-bytes" and "/" in parts[4]:
            done, total = (int(x) for x in parts[4].split("/", 1))
            return PhaseBytes(int(parts[1]), parts[2], int(parts[3]), done, total,
                              float(parts[5]))
    except ValueError:
        return None
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


def run_engine(launch: Launch, on_progress: Callable[[Progress | PhaseBytes], None],
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


def _phase_name(repetition: int, op: str, read_pass: int) -> str:
    return f"repetition {repetition + 1}, {op}" + (f" pass {read_pass + 1}" if op == "read"
                                                    else "")


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def plain_bytes_line(title: str, p: PhaseBytes) -> str:
    """An in-phase progress line for a log: bytes done of total, rate, time left."""
    share = 100.0 * p.done_bytes / p.total_bytes if p.total_bytes else 100.0
    text = (f"{title}: {_phase_name(p.repetition, p.op, p.read_pass)}: "
            f"{_mib(p.done_bytes)} of {_mib(p.total_bytes)} ({share:.0f}%)")
    rate, left = p.rate_bytes_per_s, p.left_s
    if rate is not None:
        text += f", {_mib(rate)}/s"
    if left is not None:
        text += f", about {left:.0f} s left"
    return text


class ProgressView:
    """Shows engine progress: a rich progress bar on a terminal, plain lines otherwise.

    On a terminal, each phase gets a bar with its bytes done, rate and time left (from the
    engine's in-phase lines) and the phases done so far. Off a terminal, plain lines appear
    once a run has lasted ``quiet_s`` seconds, so short runs (and the test logs) stay quiet
    while a long run shows it is alive: the phase lines held back until then are printed
    first (a log shows every phase from the first), then a line per finished phase and an
    in-phase line at most every ``every_s`` seconds.
    """

    def __init__(self, title: str, stream: IO[str] | None = None, quiet_s: float = 5.0,
                 every_s: float = 5.0, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.title = title
        self.stream = stream if stream is not None else sys.stderr
        self.quiet_s = quiet_s
        self.every_s = every_s
        self.clock = clock
        self.start = clock()
        self._bar: Any = None
        self._task: Any = None
        self._phase: tuple[int, str, int] | None = None
        self._held: list[str] = []
        self._last_plain = float("-inf")
        if (self.stream.isatty() if tty is None else tty) and quiet_s != float("inf"):
            self._start_bar()

    def _start_bar(self) -> None:
        # deferred: rich only for a progress bar on a terminal
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        # rate and time left are the engine's (bytes over the phase's own seconds), so they
        # are right from the first line; rich's own estimate would wait for samples
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=24),
                             DownloadColumn(binary_units=True), TextColumn("{task.fields[rate]}"),
                             TextColumn("{task.fields[left]}"),
                             TextColumn("{task.fields[phases]}"),
                             console=Console(file=self.stream), transient=True)
        self._bar.start()
        self._task = self._bar.add_task(f"{self.title}: starting", total=None, rate="",
                                        left="", phases="")

    def update(self, p: Progress | PhaseBytes) -> None:
        if isinstance(p, PhaseBytes):
            self._phase_bytes(p)
        else:
            self._phase_done(p)

    def _phase_bytes(self, p: PhaseBytes) -> None:
        if self._bar is not None:
            key = (p.repetition, p.op, p.read_pass)
            if key != self._phase:  # a new phase: the bar starts again at its bytes
                self._phase = key
                self._bar.reset(self._task, total=p.total_bytes,
                                description=f"{self.title}: {_phase_name(*key)}")
            rate, left = p.rate_bytes_per_s, p.left_s
            self._bar.update(self._task, completed=p.done_bytes,
                             rate=f"{_mib(rate)}/s" if rate is not None else "",
                             left=f"{left:.0f} s left" if left is not None else "")
            return
        now = self.clock()
        if now - self.start >= self.quiet_s and now - self._last_plain >= self.every_s:
            self._print([*self._held, plain_bytes_line(self.title, p)])
            self._held.clear()

    def _phase_done(self, p: Progress) -> None:
        name = _phase_name(p.repetition, p.op, p.read_pass)
        if self._bar is not None:
            task = self._bar.tasks[0]
            self._bar.update(self._task, completed=task.total or 0, left="",
                             description=f"{self.title}: {name} done",
                             phases=f"phase {p.done}/{p.total}")
            self._phase = None
            return
        text = f"{self.title}: {name} done ({p.done}/{p.total})"
        if self.clock() - self.start >= self.quiet_s:
            self._print([*self._held, text])
            self._held.clear()
        else:
            self._held.append(text)

    def _print(self, lines: list[str]) -> None:
        for line in lines:
            print(verb_line("bench", line), file=self.stream, flush=True)
        self._last_plain = self.clock()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
