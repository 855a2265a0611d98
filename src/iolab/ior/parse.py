"""Read an IOR 4 command line (and its ``-O`` directives and ``-f`` script) into tests.

The reading follows IOR 4's own option parser, quirks included, so a line means here what
it means to IOR: letters group (``-z-k`` is ``-z -k``, ``-vvv`` counts three), a value
follows its letter (``-t64k``, ``-t=64k``) or is the next word, and -- as in IOR -- the
rest of a grouped word is still read as letters: ``-t64k`` also sets ``-k`` (keepFile=64)
and ``-b1m`` sets ``-m``. Sizes take IOR's suffixes (k, m, g, t, p; powers of two).
Anything IOR would reject or misread silently (a value that is not a number, an unknown
key) is one line of bad input here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.ior import table


@dataclass(frozen=True)
class Dialect:
    """Whose command language the words are (IOR 4 and mdtest share IOR's option parser,
    option.c): the name in messages and the iolab verb whose -h lists the options."""

    name: str
    verb: str

    def not_an_option(self) -> str:
        return (f"not an {self.name} option: 'iolab {self.verb} -h' lists them "
                f"(see 'iolab {self.verb} --help')")


IOR4 = Dialect("IOR 4", "ior")


@dataclass
class IorTest:
    """One IOR test: its parameters by IOR's names, and how the user spelled each one that
    was set (for the messages)."""

    params: dict[str, Any] = field(default_factory=table.defaults)
    spelled: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what IOR reads differently than written

    def copy(self) -> IorTest:
        return IorTest(dict(self.params), dict(self.spelled), list(self.notes))

    def set(self, opt: table.IorOption, value: Any, spelling: str) -> None:
        self.params[opt.key] = value
        self.spelled[opt.key] = spelling


@dataclass
class IorLine:
    tests: list[IorTest]
    help: bool = False


def size_value(text: str, where: str) -> int:
    """IOR's ``string_to_bytes``: a number and an optional k/m/g/t/p (powers of two)."""
    # IOR reads any letter after the number and ignores an unknown one ('1x' is 1): refused
    m = re.fullmatch(r"\s*([-+]?\d+)\s*(?:([kKmMgGtTpP])\S*)?\s*", text)
    if not m:
        whole = re.fullmatch(r"\s*([-+]?\d+)[.,]\d*\s*", text)
        if whole:  # IOR's sscanf stops at the point: IOR's own -d 0.1 line delays 0 s
            raise UsageError(f"{where}: {text!r}: IOR takes whole numbers only and reads this "
                             f"as {int(whole.group(1))}; give {int(whole.group(1))} (or the "
                             f"whole number meant)")
        raise UsageError(f"{where}: {text!r} is not a number; IOR takes e.g. 8, 4k, 2m, 1g")
    shift = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}[(m.group(2) or "").lower()]
    return int(m.group(1)) << shift


def _atoi(text: str) -> int:
    m = re.match(r"\s*([-+]?\d+)", text)
    return int(m.group(1)) if m else 0


# Read as IOR reads them when written with a fraction (IOR's string_to_bytes keeps the whole
# part): IOR's own test line has -d 0.1, a delay of 0 s. A size with a fraction stays refused
# (IOR reads -t 1.5 as 1 byte).
_WHOLE_PART_KEYS = ("interTestDelay",)


def _value(opt: table.IorOption, text: str, where: str, test: IorTest) -> Any:
    whole = re.fullmatch(r"\s*([-+]?\d+)[.,]\d*\s*", text)
    if whole and opt.key in _WHOLE_PART_KEYS:
        value = int(whole.group(1))
        test.notes.append(f"{where} {text.strip()}: IOR reads whole seconds, {value} s here "
                          "as in IOR")
        return value
    if opt.kind in ("size", "int"):
        return size_value(text, where)
    if opt.kind == "flag":
        return max(_atoi(text), 0)
    return text


def parse_command_line(argv: Sequence[str]) -> IorLine:
    """The tests an IOR command line runs: one, or one per test of its ``-f`` script."""
    base = IorTest()
    wants_help = parse_words(argv, base, table.by_letter(), table.by_long(), IOR4)
    script = base.params.get("scriptFile")
    tests = read_script(Path(script), base) if script else [base]
    for test in tests:
        _check_run_settings(test)
    return IorLine(tests, wants_help)


def parse_words(argv: Sequence[str], test: IorTest, letters: dict[str, table.IorOption],
                longs: dict[str, table.IorOption], dialect: Dialect) -> bool:
    """Apply every word to ``test`` as IOR's option parser does; True when -h was given."""
    i = 0
    wants_help = False
    while i < len(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        took_next = _parse_word(argv[i], nxt, test, letters, longs, dialect)
        if took_next is None:
            wants_help = True
        elif took_next:
            i += 1
        i += 1
    return wants_help


def _parse_word(word: str, nxt: str | None, test: IorTest,
                letters: dict[str, table.IorOption],
                longs: dict[str, table.IorOption], dialect: Dialect) -> bool | None:
    """Apply one word; True when it took the next word as its value, None for -h."""
    if word in ("-h", "--help"):
        return None
    name, eq, arg_text = word.partition("=")
    arg: str | None = arg_text if eq and arg_text else None
    if not name.startswith("-") or name == "-":
        raise UsageError(f"{word!r}: {dialect.name} takes options only (a word without "
                         f"'-' is not one); see 'iolab {dialect.verb} -h'")
    body = name[1:]
    if body.startswith("-"):  # --long (IOR 4's module options and a few others)
        opt = longs.get(body[1:])
        if opt is None:
            raise UsageError(f"{name}: {dialect.not_an_option()}")
        return _apply(opt, name, arg, bool(eq), nxt, test, True, dialect)
    took_next = False
    matched = False
    for idx, letter in enumerate(body):
        opt = letters.get(letter)
        if opt is None:
            continue  # IOR skips what matches nothing in a group ('-t64k': the 6 and 4)
        matched = True
        if opt.kind != "flag" and arg is None and not eq:
            if idx == 0 and len(body) > 1:
                arg = body[1:]  # -t64k: the rest of the word, read as letters too
            else:
                arg, took_next = _next_value(opt, name, nxt, dialect), True
        _apply(opt, f"-{letter}", arg, bool(eq), None, test, False, dialect)
    if not matched:
        raise UsageError(f"{word}: {dialect.not_an_option()}")
    return took_next


def _next_value(opt: table.IorOption, name: str, nxt: str | None, dialect: Dialect) -> str:
    if nxt is None:
        raise UsageError(f"{name}: {dialect.name}'s {opt.key} needs a value")
    return nxt


def _apply(opt: table.IorOption, name: str, arg: str | None, had_eq: bool, nxt: str | None,
           test: IorTest, first_letter: bool, dialect: Dialect) -> bool:
    """Set one option; True when the next word was its value (long options)."""
    took_next = False
    if opt.kind == "flag":
        count = int(test.params.get(opt.key) or 0)
        test.set(opt, max(_atoi(arg), 0) if arg is not None else count + 1, name)
        return False
    if arg is None and not had_eq and first_letter:
        arg, took_next = _next_value(opt, name, nxt, dialect), True
    if arg is None:
        raise UsageError(f"{name}: {dialect.name}'s {opt.key} needs a value")
    if opt.key == "options" and dialect == IOR4:
        apply_directives(arg, test, f"{name} {arg}")
        return took_next
    test.set(opt, _value(opt, arg, name, test), name)
    return took_next


def apply_directives(text: str, test: IorTest, where: str) -> None:
    """``key=value[,key=value]`` (``-O`` and script lines); a '#' ends the line."""
    for part in text.split("#", 1)[0].split(","):
        if not part.strip():
            continue
        m = re.fullmatch(r"\s*([^=#\s]+)\s*=\s*([^#\s]+)\s*", part)
        if not m:
            raise UsageError(f"{where}: {part.strip()!r} is not key=value (IOR's directive "
                             "form, e.g. -O summaryFormat=JSON)")
        key, value = m.group(1).lstrip("-"), m.group(2)
        opt = table.by_key().get(key.lower())
        if opt is None:
            raise UsageError(f"{where}: {key!r} is not an IOR 4 parameter; see 'iolab ior -h'")
        test.set(opt, _value(opt, value, f"{where}: {key}", test), f"-O {key}={value}")


def read_script(path: Path, base: IorTest) -> list[IorTest]:
    """IOR's script file: the lines between ``IOR START`` and ``IOR STOP``; each ``RUN``
    ends a test, the next one starts from its parameters; ``RUN`` twice repeats it; lines
    after the last ``RUN`` make one more test (as IOR does)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise UsageError(f"-f {path}: cannot read the IOR script ({exc.strerror})") from None
    starts = [n for n, line in enumerate(lines) if line.strip().lower() == "ior start"]
    if not starts:
        raise UsageError(f"-f {path}: no 'IOR START' line; an IOR script is IOR START, "
                         "key=value lines and RUN, then IOR STOP")
    tests: list[IorTest] = []
    current = base.copy()
    pending_run = False
    for number, raw in enumerate(lines[starts[0] + 1:], start=starts[0] + 2):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        low = line.lower()
        if low == "ior stop":
            break
        if low == "run":
            if pending_run:
                tests.append(current.copy())
            pending_run = True
            continue
        if pending_run:
            tests.append(current.copy())
            pending_run = False
        apply_directives(line, current, f"-f {path}:{number}")
    tests.append(current)
    return tests


def _check_run_settings(test: IorTest) -> None:
    """IOR: no -w, -r, -W or -R means both write and read."""
    p = test.params
    if not (p["writeFile"] or p["readFile"] or p["checkWrite"] or p["checkRead"]):
        p["writeFile"] = p["readFile"] = 1
