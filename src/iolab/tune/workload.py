"""An ``iolab bench`` workload as one typed value, changed knob by knob.

A tune's workload is parsed once, from the user's ``iolab bench`` options, by the bench verb's
own parser (:func:`parse`: the same one ``iolab bench`` runs, the engine's option table and
IOR's aliases included, the values judged by the engine), into a :class:`Workload`: the
engine's options, the ROMIO hints, iolab bench's launch, placement and striping options, and
what a trial sets beside the command line (OMPIO's ``OMPI_MCA_*`` environment, a Lustre
layout for the test file's folder). A knob is a catalogue row (:mod:`iolab.tune.knobs`):
:meth:`Workload.with_setting` sets it in the place its kind says, and :meth:`Workload.argv`
writes the value back as ``iolab bench`` options, the one rendering. No code edits argv
words: ``-c`` and ``--collective`` are one value here, so turning collective off is
removing that value, whatever the spelling was.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Union

from iolab.bench import options
from iolab.bench.parser import bench_parser
from iolab.bench.subrun import check_args
from iolab.errors import UsageError
from iolab.tune.knobs import LAUNCH, Knob, knob
from iolab.tune.space import DEFAULT

# An engine option's value as bench's parser holds it: a word as written (sizes stay "64k"),
# True for a flag, the words of a repeatable option.
EngineValue = Union[str, bool, tuple[str, ...]]

# iolab bench options that say where and how a run is stored and shown: a tune sets them
# for every trial itself (--json, --label, --db), so they are no part of a workload.
_OUTPUT_DESTS = ("db", "format", "label", "dry_run", "quiet", "verbose", "help")
_HINT = "hint"  # the engine's repeatable --hint KEY=VALUE


@functools.lru_cache(maxsize=1)
def _launch_actions() -> dict[str, argparse.Action]:
    """iolab bench's own options (launch, placement, striping) by dest, from its parser
    (before the engine's options are added: those are the engine table's)."""
    return {a.dest: a for a in bench_parser()._actions
            if a.option_strings and a.dest not in _OUTPUT_DESTS}


def _action_of(option: str) -> argparse.Action:
    """The iolab bench option an option string names (``--ppn`` -> the ``ppn`` action)."""
    for action in _launch_actions().values():
        if option in action.option_strings:
            return action
    raise KeyError(f"iolab bench has no option {option}")


def _flag(action: argparse.Action) -> str:
    return max(action.option_strings, key=len)  # the long spelling


@dataclass(frozen=True)
class Workload:
    """What one trial of a bench tune runs (see the module doc). ``engine``: the engine's
    options but the hints, name -> value as bench's parser holds them, in its order;
    ``hints``: ROMIO hints (``--hint``), key -> value; ``launch``: iolab bench's own options
    (``np``, ``ppn``, ``cpu_bind``, ``stripe_count``... by argparse dest) that differ from
    their defaults; ``env``: environment of the run (OMPIO parameters); ``lfs``: the Lustre
    layout knobs (``lfs.stripe_count`` / ``lfs.stripe_size``) for the test file's folder."""

    engine: Mapping[str, EngineValue] = field(default_factory=dict)
    hints: Mapping[str, str] = field(default_factory=dict)
    launch: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    lfs: Mapping[str, str] = field(default_factory=dict)

    # --- typed views of what a tune asks of it -------------------------------------------
    @property
    def api(self) -> str:
        """The I/O interface (POSIX, the engine's default, when none is given)."""
        return str(self.engine.get("api", "posix")).lower()

    @property
    def collective(self) -> bool:
        return self.engine.get("collective") is True

    @property
    def block(self) -> str | None:
        value = self.engine.get("block")
        return value if isinstance(value, str) else None

    @property
    def ranks(self) -> int | None:
        np = self.launch.get("np")
        return int(np) if np is not None else None

    @property
    def test_dir(self) -> Path | None:
        """The folder of the test file (``-o``/``--path``), where lfs knobs stripe."""
        path = self.engine.get("path")
        return Path(path).parent if isinstance(path, str) else None

    # --- knob by knob --------------------------------------------------------------------
    def with_setting(self, k: Knob, value: str) -> Workload:
        """This workload with knob ``k`` at ``value`` (normalised), set where its kind says:
        an engine option (a bool's "false" removes the flag), a ROMIO hint, an OMPIO
        environment variable, a launch option of iolab bench, the Lustre layout."""
        if k.kind == "engine":
            engine = dict(self.engine)
            if k.value_type == "bool":
                engine.pop(k.name, None)
                if value == "true":
                    engine[k.name] = True
            else:
                engine[k.name] = value
            return replace(self, engine=engine)
        if k.kind == "romio":
            return replace(self, hints={**self.hints, k.library_key: value})
        if k.kind == "ompio":
            return replace(self, env={**self.env, f"OMPI_MCA_{k.library_key}": value})
        if k.kind == "lfs":
            return replace(self, lfs={**self.lfs, k.name: value})
        if k.kind == "launch":
            action = _action_of(LAUNCH[k.name][0])
            typed = action.type(value) if callable(action.type) else value
            return replace(self, launch={**self.launch, action.dest: typed})
        raise ValueError(f"knob {k.name}: no way to set a {k.kind} knob on a workload")

    def with_settings(self, params: Mapping[str, str]) -> Workload:
        """This workload with a configuration's knobs set (DEFAULT: left as it is)."""
        out = self
        for name, value in params.items():
            if value != DEFAULT:
                out = out.with_setting(knob(name), value)
        return out

    # --- the one rendering ---------------------------------------------------------------
    def argv(self) -> list[str]:
        """The ``iolab bench`` options of this workload: the engine's as bench writes them
        for the engine (:func:`iolab.bench.options.engine_argv`), the hints as ``--hint``,
        then iolab bench's own options by their long name."""
        engine: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v
                                  for k, v in self.engine.items()}
        if self.hints:
            engine[_HINT] = [f"{k}={v}" for k, v in self.hints.items()]
        out = options.engine_argv(engine)
        actions = _launch_actions()
        for dest, value in self.launch.items():
            word = str(value)
            # a value that starts with '-' (--launcher-args=--mca ...) only parses after '='
            out += [f"{_flag(actions[dest])}={word}"] if word.startswith("-") else \
                [_flag(actions[dest]), word]
        return out


def from_namespace(ns: argparse.Namespace) -> Workload:
    """The workload of a parsed ``iolab bench`` command line."""
    values = options.set_options(ns)
    hints: dict[str, str] = {}
    for h in values.pop(_HINT, None) or ():
        key, _, value = str(h).partition("=")
        hints[key] = value
    engine = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    launch = {dest: getattr(ns, dest) for dest, action in _launch_actions().items()
              if getattr(ns, dest, None) != action.default}
    return Workload(engine, hints, launch)


def parse(argv: list[str]) -> Workload:
    """The workload of ``iolab bench`` options, by bench's own parser and the engine's (a
    bad option: one UsageError line, before anything is stored). Options that decide where
    a run is stored or how it is shown are the tune's to set, so they are refused."""
    ns = check_args(argv)
    given = [d for d in _OUTPUT_DESTS if d not in ("quiet", "verbose", "help")
             and getattr(ns, d, None) not in (None, False, "text")]
    if given:
        raise UsageError(f"--{given[0].replace('_', '-')} in the workload: iolab tune stores "
                         "and shows every trial itself (give --db or --json to iolab tune, "
                         "before '--')")
    return from_namespace(ns)
