"""The child's half of ``python -m bench.settings_walk``: a profiler that records every call
into ``launcher/`` or ``hal/`` carrying configuration (a whole ``Settings``, or a section),
every read of a whole ``Settings``' field, and every such call that climbs the layers.

``python -m bench.settings_walk --child TRACE -- LAUNCHER-ARGS...`` runs ``child`` here: the
``launcher`` command's own entry point, in-process, under the profiler on every thread;
bench/settings_walk.py drives its console and turns the trace into the walk's result.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import os
import platform
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

PACKAGES = ("launcher", "hal")

# Low to high: the layers contract of pyproject.toml ([tool.importlinter]), hal below it all.
LAYERS: Mapping[str, int] = {
    "hal": 0,
    "launcher.core": 1,
    "launcher.firmware": 2,
    "launcher.games": 2,
    "launcher.sim": 3,
    "launcher.web": 3,
    "launcher.tools": 4,
    "launcher.cli": 5,
}


def layer(module: str) -> int | None:
    """The layer of a dotted module name (``LAYERS``), or None outside them (``launcher``'s
    own ``__init__``, the standard library, the bench)."""
    parts = module.split(".")
    for n in (2, 1):
        found = LAYERS.get(".".join(parts[:n]))
        if found is not None:
            return found
    return None


def _section_kinds() -> dict[type, tuple[str, str]]:
    """The types that carry configuration: the whole ``Settings``, and each section."""
    from hal.base import Pins
    from launcher.core import config
    from launcher.core.machine.settings import MachineSettings
    from launcher.core.profiles import Profile

    kinds: dict[type, tuple[str, str]] = {config.Settings: ("whole", "Settings")}
    for part in (Pins, config.Luck, config.SideLuck, config.Timing, config.Motor,
                 config.Rotator, config.Audio, config.Console, config.Web, Profile,
                 MachineSettings):
        kinds[part] = ("part", part.__name__)
    return kinds


class Classifier:
    """``classify(value)``: ("whole", "Settings"), ("part", SECTION) or None; one look-up
    per type (a subclass of a section is that section)."""

    def __init__(self) -> None:
        self.kinds = _section_kinds()
        self._by_type: dict[type, tuple[str, str] | None] = dict(self.kinds)

    def classify(self, value: object) -> tuple[str, str] | None:
        t = type(value)
        try:
            return self._by_type[t]
        except KeyError:
            found = next((self.kinds[b] for b in t.__mro__ if b in self.kinds), None)
            self._by_type[t] = found
            return found


@functools.cache
def _classifier() -> Classifier:
    return Classifier()


def classify(value: object) -> tuple[str, str] | None:
    """("whole", "Settings") for a whole ``Settings``, ("part", SECTION) for one of its
    sections (or a ``MachineSettings``), None for anything else."""
    return _classifier().classify(value)


def name(module: str, qualname: str) -> str:
    """A function as the results name it: ``module:qualname``."""
    return f"{module}:{qualname}"


@dataclass(frozen=True, slots=True)
class _Scope:
    """What the profiler keeps of one code object in ``launcher/`` or ``hal/``."""

    module: str
    qualname: str
    layer: int | None
    params: tuple[str, ...]  # named parameters (positional and keyword-only)
    star: str | None  # the name of *args
    starstar: str | None  # the name of **kwargs
    resumes: frozenset[int]  # a generator's or coroutine's resumption offsets


_GENERATORS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
_VARARGS, _VARKEYWORDS = 0x04, 0x08


def _resume_offsets(code: CodeType) -> frozenset[int]:
    """Where a generator's frame stands when it is resumed (a RESUME after a yield or an
    await, whose argument is not 0); its first run stands at RESUME 0."""
    if not code.co_flags & _GENERATORS:
        return frozenset()
    return frozenset(i.offset for i in dis.get_instructions(code)
                     if i.opname == "RESUME" and i.arg)


def module_of(filename: str, roots: Mapping[str, str]) -> str | None:
    """The dotted module of a source file under one of ``roots`` (package name -> its
    folder, resolved), or None when it is under none."""
    path = os.path.realpath(filename)
    for package, folder in roots.items():
        if path == folder or path.startswith(folder + os.sep):
            rel = os.path.relpath(path, os.path.dirname(folder))
            parts = rel.removesuffix(".py").split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts) if parts and parts[0] == package else None
    return None


class Tracer:
    """A profiler that records every call into ``launcher`` or ``hal`` carrying configuration.

    Cheap where it can be: each code object is placed in or out of scope once (by its
    file), and only in-scope code has its parameters looked at.
    """

    def __init__(self, roots: Mapping[str, str], classifier: Classifier) -> None:
        self.roots = dict(roots)
        self.classifier = classifier
        self._scope: dict[CodeType, _Scope | None] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.functions: dict[tuple[str, str], dict[str, Any]] = {}
        self.climbs: dict[tuple[str, str, str, str], int] = {}
        self.calls = {"whole": 0, "part": 0}
        self.reads: dict[tuple[str, str], set[str]] = {}

    @classmethod
    def for_packages(cls) -> Tracer:
        import importlib

        roots = {p: os.path.realpath(os.path.dirname(importlib.import_module(p).__file__ or ""))
                 for p in PACKAGES}
        return cls(roots, Classifier())

    def _look(self, code: CodeType) -> _Scope | None:
        module = module_of(code.co_filename, self.roots)
        found = None
        if module is not None:
            n = code.co_argcount + code.co_kwonlyargcount
            names = code.co_varnames
            star = names[n] if code.co_flags & _VARARGS else None
            starstar = names[n + bool(star)] if code.co_flags & _VARKEYWORDS else None
            found = _Scope(module, getattr(code, "co_qualname", code.co_name), layer(module),
                           names[:n], star, starstar, _resume_offsets(code))
        self._scope[code] = found
        return found

    def profiler(self) -> Callable[[FrameType, str, Any], None]:
        """The function for ``sys.setprofile``: a closure, so the hot path reads locals."""
        scopes = self._scope
        look = self._look
        classify = self.classifier.classify
        record = self._record

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            if event != "call":
                return
            code = frame.f_code
            try:
                scope = scopes[code]
            except KeyError:
                scope = look(code)
            if scope is None or (scope.resumes and frame.f_lasti in scope.resumes):
                return
            if not (scope.params or scope.star or scope.starstar):
                return
            values = frame.f_locals
            found = []
            for name in scope.params:
                kind = classify(values.get(name))
                if kind is not None:
                    found.append(kind)
            if scope.star is not None:
                held = values.get(scope.star)
                for value in held if isinstance(held, tuple) else ():
                    kind = classify(value)
                    if kind is not None:
                        found.append(kind)
            if scope.starstar is not None:
                held = values.get(scope.starstar)
                for value in held.values() if isinstance(held, dict) else ():
                    kind = classify(value)
                    if kind is not None:
                        found.append(kind)
            if found:
                record(frame, scope, found)

        return profile

    def _record(self, frame: FrameType, scope: _Scope, found: list[tuple[str, str]]) -> None:
        back = frame.f_back
        caller = None
        if back is not None:
            code = back.f_code
            caller = self._scope[code] if code in self._scope else self._look(code)
        climbs = caller is not None and caller.layer is not None and scope.layer is not None \
            and caller.layer < scope.layer
        with self._lock:
            if self._closed:
                return
            entry = self.functions.setdefault((scope.module, scope.qualname),
                                              {"calls": 0, "kinds": {}, "sections": {}})
            entry["calls"] += 1
            for kind in dict.fromkeys(k for k, _ in found):
                entry["kinds"][kind] = entry["kinds"].get(kind, 0) + 1
                self.calls[kind] += 1
            for kind, section in found:
                entry["sections"][section] = entry["sections"].get(section, 0) + 1
                if climbs and caller is not None:
                    key = (name(caller.module, caller.qualname),
                           name(scope.module, scope.qualname), kind, section)
                    self.climbs[key] = self.climbs.get(key, 0) + 1

    def reader(self) -> Callable[[object, str], Any]:
        """A ``__getattribute__`` for ``Settings``: each field read, by the function in
        ``launcher/`` or ``hal/`` that read it, then the field itself."""
        scopes, look, reads, lock = self._scope, self._look, self.reads, self._lock
        get = object.__getattribute__

        def read(obj: object, name: str) -> Any:
            if not name.startswith("__"):
                code = sys._getframe(1).f_code
                scope = scopes[code] if code in scopes else look(code)
                if scope is not None:
                    with lock:
                        if not self._closed:
                            reads.setdefault((scope.module, scope.qualname), set()).add(name)
            return get(obj, name)

        return read

    def install(self) -> None:
        from launcher.core.config import Settings

        profile = self.profiler()
        Settings.__getattribute__ = self.reader()  # type: ignore[method-assign]
        threading.setprofile(profile)  # every thread started from now on
        sys.setprofile(profile)

    def uninstall(self) -> None:
        from launcher.core.config import Settings

        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]  # None clears it
        with contextlib.suppress(AttributeError):
            del Settings.__getattribute__  # back to object's
        with self._lock:
            self._closed = True  # a thread still running records nothing more

    def trace(self, exit_code: int) -> dict[str, Any]:
        """What was recorded, as the JSON the parent reads (after ``uninstall``)."""
        return {
            "python": platform.python_version(),
            "packages": self.roots,
            "exit": exit_code,
            "functions": [{"module": m, "qualname": q, **e}
                          for (m, q), e in sorted(self.functions.items())],
            "climbs": [{"from": a, "to": b, "kind": k, "section": s, "calls": n}
                       for (a, b, k, s), n in sorted(self.climbs.items())],
            "calls": dict(self.calls),
            "reads": [{"module": m, "qualname": q, "fields": sorted(f)}
                      for (m, q), f in sorted(self.reads.items())],
        }


def child(trace_path: Path, argv: list[str]) -> int:
    """Run the ``launcher`` command's entry point under the tracer, then write the trace."""
    from launcher.cli.main import main as launcher_main

    tracer = Tracer.for_packages()
    code = 1
    tracer.install()
    try:
        code = launcher_main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        tracer.uninstall()
        from bench.keep import keep

        keep(trace_path, tracer.trace(code))
    return code
