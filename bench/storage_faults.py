"""The storage campaign: the files the firmware reads, corrupted so that they still read, one
fault at a time, and what the firmware then did.

``python -m bench.faults --campaign storage [--tier fast|full] [--out FILE]``

- **The state file** (launcher/core/store.py), as a unit left it with its lid's power
  contact S3 welded and latched (``power_contact``): every single-bit flip (``fast``: one
  bit of each byte), every truncation (``fast``: every fourth length), each field lost, a
  version 1 file (written before the checksum), and a stale copy (the file the same unit
  wrote before the weld was found). Each file is put under a real unit on the simulated
  board, its S3 still welded. It holds when the unit refuses the file, holds every class it
  had latched, says so (``state_reset``) and does not shoot; or when it reads the same
  content and does not shoot. A stale copy is whole, and no check of a file can tell it from
  the newest: it holds when the weld is found again at the first lid opening, the demand
  that finds it the first time.
- **The config** (launcher/core/config.py): every number of the schema (``RANGES``,
  ``TIMING_RANGES``, ``LUCK_RANGES``, ``PIN_RANGE``) just outside its range, and two luck
  tables no distribution can be; then every single-bit flip of the shipped
  launcher/default.toml (``fast``: one bit of each byte outside the comments). A range row
  holds when the config is refused with one ``ConfigError`` naming the key and its range. A
  flip holds when it is refused naming a key or the file, or reads to the same settings, or
  to other settings whose every number lies within the schema (judged from the raw values
  against the tables, not by the loader's own word); never another exception.
- **The code** (launcher/tools/manifest.py): the firmware's files copied, their manifest
  written as install.sh writes it, then each file (``fast``: every fifth) truncated mid-way,
  cut at a line boundary (still valid Python), one bit flipped, or replaced by a stale copy
  (another module's bytes under its name). It holds when ``verify``, what ``launcher
  doctor``'s code check runs, names that file. And every module ``launcher run`` imports is
  one the manifest covers.

Then each of the three safeguards is switched off in turn, by patching here (never a hook
in the firmware): the state file's checksum, the schema's ranges, the manifest's
comparison; the fast tier must fail on each.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from unittest import mock

from bench.keep import RESULTS as KEPT
from bench.keep import run_facts
from hal.base import Pins
from hal.circuit_faults import PartFailure
from launcher.core import config, store
from launcher.core import machine as m
from launcher.core.errors import ConfigError
from launcher.core.profiles import parse_profile
from launcher.firmware.actuators import CONTACT_SETTLE
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig
from launcher.tools import manifest

RESULTS = KEPT / "storage_faults.json"
COMMAND = ("python -m bench.faults --campaign storage --tier full "
           "--out docs/results/storage_faults.json")
REPO = Path(__file__).resolve().parents[1]
LID_REST = CONTACT_SETTLE + 0.05  # a lid move, then at rest long enough to be read
DEAL = parse_profile("deal 3")
WELDED = PartFailure("S3", "welded")
HELD_CLASSES = "every latched class held"


@dataclass
class Kind:
    """One kind of fault of one file: how many, what each did, and which did not hold."""

    file: str
    fault: str
    outcomes: Counter[str] = field(default_factory=Counter)
    held: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, what: str, outcome: str, ok: bool) -> None:
        self.outcomes[outcome] += 1
        self.held += ok
        if not ok:
            self.failures.append(f"{self.file}, {self.fault}: {what}: {outcome}")

    def data(self) -> dict[str, Any]:
        return {"file": self.file, "fault": self.fault, "faults": sum(self.outcomes.values()),
                "held": self.held, "outcomes": dict(self.outcomes.most_common()),
                "failures": self.failures[:5]}


# --- the state file -------------------------------------------------------------------------

def _unit(path: Path) -> SimRig:
    """A unit dealing 3 cards a press, its state file at ``path``, S3 welded from power-on."""
    rig = SimRig(config.load(), store=StateStore(path),
                 before_start=lambda sim: sim.inject(WELDED))
    rig.sim.load(range(60))
    rig.app.load(60)
    rig.app.use_profile(DEAL)  # refused in a fault
    rig.advance(0.3)
    return rig


def _shoots(rig: SimRig) -> bool:
    before = rig.sim.ejected_total
    rig.press()
    return rig.sim.ejected_total > before


def state_files(folder: Path) -> tuple[str, str]:
    """The file a unit wrote after a shot, before its welded S3 was found (the stale copy),
    and the one it left with the weld latched (the campaign's original)."""
    path = folder / "state.json"
    rig = _unit(path)
    try:
        if not _shoots(rig):
            raise RuntimeError("the unit did not shoot with its lid shut")
        rig.advance(1.0)
        if not rig.app.store.flush(10):
            raise RuntimeError("the state writer did not finish")
        before = path.read_text(encoding="utf-8")
        rig.sim.open_lid(full=False)
        rig.advance(LID_REST)
        rig.sim.close_lid()
        rig.advance(LID_REST)
        if rig.app.machine.memory.latched != ["power_contact"]:
            raise RuntimeError(f"the weld was not latched: {rig.app.machine.memory.latched}")
    finally:
        rig.close()
    return before, path.read_text(encoding="utf-8")


def judge_state(path: Path, data: bytes, original: store.Saved) -> tuple[str, bool]:
    """``data`` as the unit's state file at its start: what the unit made of it, and whether
    that holds (refused with every latch held and said, or the same content; no shot)."""
    path.write_bytes(data)
    seen = StateStore(path).load()  # what the loader reads, as the unit's own store will
    rig = _unit(path)
    try:
        mem = rig.app.machine.memory
        reset = rig.app.events("state_reset")
        kept = original.fault is not None and set(original.fault.unproven) <= set(mem.latched)
        if rig.app.store.problem is not None:
            said = bool(reset) and original.fault is not None and set(
                original.fault.unproven) <= set(reset[0][1]["held"].split(","))
            why = "unreadable" if "unreadable" in rig.app.store.problem else "failed its check"
            ok = kept and said and not _shoots(rig)
            return (f"refused ({why}), {HELD_CLASSES}" if ok
                    else f"refused ({why}), but a latch lost, unsaid, or a shot"), ok
        if seen == original:
            ok = kept and not _shoots(rig)
            return ("read the same content" if ok else "read the same content, and shot"), ok
        return "read as other content, unreported", False
    finally:
        rig.close()


def stale_copy(path: Path, before: str, original: store.Saved) -> tuple[str, bool]:
    """The older file, whole: read as the truth (nothing can tell it); held if the weld is
    found again at the first lid opening, before anything shoots with the lid open."""
    path.write_text(before, encoding="utf-8")
    rig = _unit(path)
    try:
        if rig.app.store.problem is not None:
            return "refused", True
        rig.sim.open_lid(full=False)
        rig.advance(LID_REST)
        found = "power_contact" in rig.app.machine.memory.latched
        rig.sim.close_lid()
        rig.advance(LID_REST)
        ok = found and rig.state == m.LATCHED and not _shoots(rig)
        return ("read as the truth (whole, older); the weld found again at the first lid "
                "opening" if ok else "read as the truth, the weld not found again"), ok
    finally:
        rig.close()


def state_campaign(tier: str, folder: Path) -> list[Kind]:
    before, text = state_files(folder)
    original = store.parse(json.loads(text))
    raw = text.encode("utf-8")
    path = folder / "judged.json"
    flips = Kind("state file", "one bit flipped")
    for i in range(len(raw)):
        for bit in range(8) if tier == "full" else (i % 8,):
            data = bytearray(raw)
            data[i] ^= 1 << bit
            flips.add(f"byte {i} bit {bit}", *judge_state(path, bytes(data), original))
    cuts = Kind("state file", "truncated")
    for n in range(0, len(raw), 1 if tier == "full" else 4):
        cuts.add(f"{n} of {len(raw)} bytes", *judge_state(path, raw[:n], original))
    lost = Kind("state file", "a field lost (still parses)")
    for key in sorted(json.loads(text)):
        data = {k: v for k, v in json.loads(text).items() if k != key}
        lost.add(key, *judge_state(path, json.dumps(data).encode(), original))
    old = Kind("state file", "version 1 (before the checksum), read once")
    v1 = {k: v for k, v in json.loads(text).items() if k != store.CHECK}
    v1["version"] = store.UNCHECKED
    old.add("version 1", *judge_state(path, json.dumps(v1).encode(), original))
    stale = Kind("state file", "a stale copy (whole, older)")
    stale.add("the file before the weld was found", *stale_copy(path, before, original))
    return [flips, cuts, lost, old, stale]


# --- the config -----------------------------------------------------------------------------

def _ranges() -> Iterator[tuple[str, float, float, bool]]:
    """Every number of the schema: (dotted key as set, lo, hi, whole)."""
    for key, lo, hi in config.TIMING_RANGES.values():
        yield f"timing.{key}", lo, hi, False
    for key, (lo, hi) in config.RANGES.items():
        yield key, lo, hi, key in config.WHOLE
    for side in config.SIDES:
        for name, (lo, hi) in config.LUCK_RANGES.items():
            yield f"luck.{side}.{name}[0]", lo, hi, name == "sizes"
    for f in fields(Pins):
        lo = -1 if f.name in Pins.OPTIONAL else config.PIN_RANGE[0]
        yield f"pins.{f.name}", lo, config.PIN_RANGE[1], True


def _set(raw: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """``raw`` (a fresh copy) with ``dotted`` (``a.b`` or ``a.b.c[i]``) set to ``value``."""
    *path, leaf = dotted.split(".")
    node = raw
    for part in path:
        node = node[part]
    if leaf.endswith("]"):
        name, index = leaf[:-1].split("[")
        node[name][int(index)] = value
    else:
        node[leaf] = value
    return raw


def judge_range(dotted: str, value: Any, lo: float, hi: float) -> tuple[str, bool]:
    """The defaults with ``dotted`` = ``value`` (outside lo..hi): refused, naming both?"""
    try:
        config.settings_from_dict(_set(config.default_raw(), dotted, value))
    except ConfigError as exc:
        lo_, hi_ = _shown(lo), _shown(hi)
        shown = [f"{lo_}..{hi_}", f"at least {lo_}", f"at most {hi_}"]
        if exc.key == dotted and any(s in exc.reason for s in shown):
            return "refused, naming the key and its range", True
        return f"refused, naming {exc.key}: {exc.reason}", False
    except Exception as exc:  # judged: a crash is a failed row
        return f"crashed: {type(exc).__name__}", False
    return "accepted", False


def _shown(x: float) -> str:
    """A bound as the config's messages spell it (whole numbers in full)."""
    return str(int(x)) if float(x).is_integer() and abs(x) >= 1e6 else f"{x:g}"


def range_campaign() -> Kind:
    kind = Kind("config", "a number just outside its range")
    for dotted, lo, hi, whole in _ranges():
        step = 1 if whole or dotted.endswith(("_ms", "_s")) else 0.01
        for value in (lo - step, hi + step):
            if math.isfinite(value):
                value = int(value) if whole else round(value, 6)
                kind.add(f"{dotted} = {value}", *judge_range(dotted, value, lo, hi))
    for dotted, value in (("luck.mild.weights", [0, 0, 0, 0, 0]),
                          ("luck.wild.hazard", [0.5, 0.5])):
        try:
            config.settings_from_dict(_set(config.default_raw(), dotted, value))
            kind.add(f"{dotted} = {value}", "accepted", False)
        except ConfigError as exc:
            kind.add(f"{dotted} = {value}", "refused, naming the key and its range",
                     exc.key.startswith(dotted))
    return kind


def _within(raw: dict[str, Any]) -> str | None:
    """The first number of ``raw`` outside the schema (None: all within), judged here from
    the tables alone."""
    for dotted, lo, hi, _ in _ranges():
        *path, leaf = dotted.split(".")
        node: Any = raw
        for part in path:
            node = node[part]
        values = node[leaf[:-3]] if leaf.endswith("[0]") else [node[leaf]]
        for v in values:
            if isinstance(v, int | float) and not isinstance(v, bool) and not lo <= v <= hi:
                return f"{dotted} = {v}"
    return None


def judge_config(path: Path, data: bytes, default: config.Settings) -> tuple[str, bool]:
    path.write_bytes(data)
    try:
        settings = config.load(path)
    except ConfigError as exc:
        return ("refused, naming the file" if exc.key == "file"
                else "refused, naming a key"), True
    except Exception as exc:  # judged: a crash is a failed row
        return f"crashed: {type(exc).__name__}", False
    if settings == default:
        return "read the same settings (a comment or a layout byte)", True
    outside = _within(config.load_raw(path))
    if outside is not None:
        return f"accepted a number outside the schema ({outside})", False
    return "read other settings, every number within the schema", True


def flip_campaign(tier: str, folder: Path) -> Kind:
    kind = Kind("config", "one bit of the shipped file flipped")
    raw = config.default_text().encode("utf-8")
    default = config.load()
    path = folder / "launcher.toml"
    comment = _comment_bytes(raw)
    for i in range(len(raw)):
        if tier != "full" and i in comment:
            continue
        for bit in range(8) if tier == "full" else (i % 8,):
            data = bytearray(raw)
            data[i] ^= 1 << bit
            kind.add(f"byte {i} bit {bit}", *judge_config(path, bytes(data), default))
    return kind


def _comment_bytes(raw: bytes) -> set[int]:
    """Offsets of the bytes on a line that is a comment (from its #) or blank."""
    out: set[int] = set()
    at = 0
    for line in raw.splitlines(keepends=True):
        hash_at = line.find(b"#")
        if hash_at >= 0:
            out.update(range(at + hash_at, at + len(line)))
        at += len(line)
    return out


# --- the code -------------------------------------------------------------------------------

def _installed(folder: Path) -> Path:
    """A copy of launcher/ and hal/ as install.sh leaves them: sources, bytecode, manifest."""
    root = folder / "src"
    for package in manifest.PACKAGES:
        shutil.copytree(REPO / package, root / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(root / p) for p in
                    manifest.PACKAGES)], check=True, capture_output=True)
    (root / manifest.NAME).write_text(manifest.text(root), encoding="utf-8")
    return root


def _faulted(data: bytes, fault: str, other: bytes) -> bytes:
    if fault == "truncated mid-way":
        return data[:len(data) // 2]
    if fault == "cut at a line boundary (still valid Python)":
        return data[:data.rstrip(b"\n").rfind(b"\n") + 1]
    if fault == "one bit flipped":
        if not data:
            return data  # an empty file has no bit to flip
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 1
        return bytes(flipped)
    return other  # a stale copy: a whole, valid file that is not this one


CODE_FAULTS = ("truncated mid-way", "cut at a line boundary (still valid Python)",
               "one bit flipped", "a stale copy (another module's bytes)")


def code_campaign(tier: str, folder: Path) -> list[Kind]:
    root = _installed(folder)
    if manifest.verify(root):
        raise RuntimeError(f"a fresh install does not match its manifest: "
                           f"{manifest.verify(root)[:3]}")
    files = manifest.covered(root)
    picked = files if tier == "full" else files[::5]
    kinds = {fault: Kind("code", fault) for fault in CODE_FAULTS}
    for n, rel in enumerate(picked):
        path = root / rel
        data = path.read_bytes()
        other = (root / files[(files.index(rel) + 1) % len(files)]).read_bytes()
        for fault, kind in kinds.items():
            bad = _faulted(data, fault, other)
            if bad == data:  # an empty __init__.py cut at a line is itself
                continue
            path.write_bytes(bad)
            try:
                named = any(line.startswith(f"{rel}:") for line in manifest.verify(root))
            finally:
                path.write_bytes(data)
            kind.add(f"{rel} (#{n})", "named by the code check" if named else
                     "not named by the code check", named)
    imported = Kind("code", "each module `launcher run` imports: in the manifest?")
    for rel in _service_modules():
        imported.add(rel, "covered by the manifest" if rel in files else "NOT covered",
                     rel in files)
    return [*kinds.values(), imported]


def _service_modules() -> list[str]:
    """The files of launcher/ and hal/ that ``launcher run`` imports (its entry and verb)."""
    code = ("import sys, launcher.cli.main, launcher.cli.run, launcher.firmware.runner, "
            "hal.gpio, hal.audio; "
            "print('\\n'.join(sorted(getattr(m, '__file__', None) or '' for m in "
            "list(sys.modules.values()))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    return sorted({Path(f).resolve().relative_to(REPO).as_posix() for f in out.split()
                   if f and Path(f).resolve().is_relative_to(REPO)
                   and Path(f).resolve().relative_to(REPO).parts[0] in manifest.PACKAGES})


# --- the campaign, and its safeguards switched off ---------------------------------------------

def kinds(tier: str, parts: tuple[str, ...] = ("state", "config", "code")) -> list[Kind]:
    out: list[Kind] = []
    with tempfile.TemporaryDirectory(prefix="storage-faults-") as tmp:
        folder = Path(tmp)
        if "state" in parts:
            out += state_campaign(tier, folder)
        if "config" in parts:
            out += [range_campaign(), flip_campaign(tier, folder)]
        if "code" in parts:
            out += code_campaign(tier, folder)
    return out


def _loose_number(key: str, value: Any, lo: float = -math.inf, hi: float = math.inf) -> float:
    return _NUMBER(key, value)


def _loose_integer(key: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    return _INTEGER(key, value)


_NUMBER, _INTEGER = config._number, config._integer


@contextmanager
def _patched(*patches: Any) -> Iterator[None]:
    for p in patches:
        p.start()
    try:
        yield
    finally:
        for p in reversed(patches):
            p.stop()


# Each safeguard of this campaign, switched off: (what, the part it belongs to, the patches).
MUTANTS: tuple[tuple[str, str, Callable[[], tuple[Any, ...]]], ...] = (
    ("the state file's checksum not checked (store._verify accepts any file)", "state",
     lambda: (mock.patch.object(store, "_verify", lambda data, version: None),)),
    ("the schema's ranges not enforced (config._number and config._integer take any "
     "number)", "config",
     lambda: (mock.patch.object(config, "_number", _loose_number),
              mock.patch.object(config, "_integer", _loose_integer))),
    ("the manifest not compared (manifest.digest the same for every file)", "code",
     lambda: (mock.patch.object(manifest, "digest", lambda path: "0" * 64),)),
)


def mutants(progress: Callable[[str], None]) -> list[dict[str, Any]]:
    out = []
    for what, part, patches in MUTANTS:
        with _patched(*patches()):
            found = [line for k in kinds("fast", (part,)) for line in k.failures]
        progress(f"  {what}: {'caught' if found else 'NOT caught'}")
        out.append({"safeguard": what, "caught": bool(found),
                    "first": found[0] if found else None})
    return out


def campaign(tier: str = "fast", progress: Callable[[str], None] = lambda line: None,
             with_mutants: bool = True) -> dict[str, Any]:
    started, cpu0 = time.monotonic(), time.process_time()
    logging.disable(logging.CRITICAL)  # each refused file is logged, as it must be: not here
    rows = kinds(tier)
    for k in rows:
        progress(f"{k.file}, {k.fault}: {sum(k.outcomes.values())} faults, {k.held} held")
    found = mutants(progress) if with_mutants else []
    failures = [line for k in rows for line in k.failures]
    failures += [f"switched off, not caught: {m_['safeguard']}" for m_ in found
                 if not m_["caught"]]
    return {
        "command": COMMAND if tier == "full" else
        "python -m bench.faults --campaign storage --tier fast",
        "tier": tier, "kinds": [k.data() for k in rows], "mutants": found,
        "failures": failures, **run_facts(started, cpu0),
    }


def markdown(r: dict[str, Any]) -> str:
    """SAFETY.md's rows for a run (docs/blocks.py ``--print storage-faults``)."""
    faults = sum(k["faults"] for k in r["kinds"])
    held = sum(k["held"] for k in r["kinds"])
    verdict = "every one held" if held == faults else f"{faults - held:,} did NOT hold"
    lines = ["| name | what | figure |", "|---|---|---|",
             f"| `storage_campaign` | `{r['command']}` (finished {r['date']}; {r['wall_s']:,} s, "
             f"{r['cpu_s']:,} s CPU, {r['cores']} cores, load average {r['load_1min']} at the "
             f"end) | {faults:,} faults of the state file, the config and the code: "
             f"{held:,} held, {verdict} |", "",
             "| file | fault | faults | what the firmware did | held |", "|---|---|---:|---|---:|"]
    for k in r["kinds"]:
        did = "; ".join(f"{n:,} {o}" for o, n in k["outcomes"].items())
        lines.append(f"| {k['file']} | {k['fault']} | {k['faults']:,} | {did} | "
                     f"{k['held']:,} |")
    if r["mutants"]:
        caught = sum(m_["caught"] for m_ in r["mutants"])
        lines += ["", f"Each safeguard switched off, the fast tier run again: {caught} of "
                  f"{len(r['mutants'])} make it fail.", "",
                  "| safeguard switched off | verdict | the first fault that did not hold |",
                  "|---|---|---|"]
        lines += [f"| {m_['safeguard']} | {'caught' if m_['caught'] else 'NOT caught'} | "
                  f"{m_['first'] or ''} |" for m_ in r["mutants"]]
    return "\n".join(lines) + "\n"
