"""A million random lines into the console on a simulated unit: no crash, one reply a line.

The lines (``random_line``, seeded): binary garbage, huge lines, unicode of every kind
(combining marks, right-to-left, zero-width, lone surrogates, private use), control
characters inside commands, every command with random and hostile arguments, and every
command as it should be typed. Checked for each line: ``handle_line`` returns, with
exactly one final reply (``ok``/``error``, or its JSON form) and that one last; lines that
are the console's own output coming back (``ok ...``, ``# ...``...) get none, as
``docs/console.md`` says. Over the run: no ``internal`` error (a bug), the launcher still
answers, and memory (tracemalloc, RSS) is flat from the first quarter to the end.
"""

from __future__ import annotations

import gc
import json
import random
import re
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from soak import rss_bytes

import hal.sim
from launcher.core import config
from launcher.firmware.console import MAX_LINE, Console
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

ECHO = re.compile(r'(ok|ok .*|error .*|# .*|// .*|\{".*)', re.DOTALL)
TRACED_TOLERANCE = 256 * 1024  # bytes, first quarter to the end
RSS_TOLERANCE = 2 * 1024 * 1024

# Pieces of hostile text.
WEIRD = ["\u0301", "\u202e", "\u200b", "\ufeff", "\u2028", "\ud800", "\udfff", "\ue000",
         "\ufffe", "\uffff", "\U0001f4a9", "\U0010ffff", "ß", "İ", "ﬀ", "٣", "½", "①", "\x85",
         "\xa0", "\u3000", "\x1b[31m", "\x00", "\x7f", "\t", "\x08", "\x0c", "\r", "\n"]
ARGS = ["0", "1", "-1", "+5", "07", "0x10", "1e9", "1.5", "nan", "inf", "-0", "9" * 40,
        "9" * 300, "٣", "½", "①", "２", "on", "off", "open", "full", "close", "mild", "wild",
        "hazard", "sizes", "weights", "[0.4, 1.0]", "[1.0]", "[]", "[", "]]", "[0.5,0.5]",
        "[3]", "[1,2,3]", "[-1]", "[1e308]", '"x"', "'", '"', "\\", "{", "}", "true",
        "timing.jam_timeout_ms", "motor.speed", "pins.led", "luck.seed", "state.path",
        "console.port", "audio.backend", "a.b.c", ".", "", "x" * 100, "mild_bam", "bogus",
        # TOML strings that decode to control characters: echoed back, they must be escaped.
        '"\\u001b[2J"', '"a\\u0007b"', '"\\u009b31m"', '"x\\u2028y"', '"\\r\\n"']
VALID = ["status", "press", "lid open", "lid full", "lid close", "side", "load 7", "load 0",
         "inventory", "luck show", "luck set mild hazard [0.4, 1.0]", "luck set wild sizes [3]",
         "luck set mild weights [1,1,1,1,1]", "seed 11", "stats", "log", "log 5", "sleep",
         "wake", "clear", "config get motor.speed", "config set timing.jam_timeout_ms 600",
         "config set motor.speed 0.5", "sounds play mild_bam", "sounds list", "version",
         "help", "help luck", "json on", "json off", "debug on", "debug off",
         "motor run 250", "rotate", "jam", "unjam", "cards 6", "reboot-safe"]
RARE = ["selftest", "config save"]  # slow ones (a whole self-test; a file write and fsync)
ECHOES = ["ok", "ok state=ready", "error unknown x", "# event dry", "// side=mild", '{"ok":true}']


def random_line(rng: random.Random, names: list[str]) -> str | bytes:
    r = rng.random()
    if r < 0.18:  # binary garbage
        return rng.randbytes(rng.randrange(0, 120))
    if r < 0.22:  # huge
        n = rng.choice([MAX_LINE + 1, rng.randrange(MAX_LINE + 1, 5000), 100_000])
        line = (rng.choice(names) + " " + "9" * n)[:n]
        return line.encode() if rng.random() < 0.5 else line
    if r < 0.34:  # unicode, alone or after a command
        text = "".join(rng.choice(WEIRD) if rng.random() < 0.5 else chr(rng.randrange(0x20, 0x3000))
                       for _ in range(rng.randrange(0, 40)))
        line = (rng.choice(names) + " " + text) if rng.random() < 0.5 else text
        return line if rng.random() < 0.7 else line.encode("utf-8", "surrogatepass")
    if r < 0.42:  # control characters inside a command
        words = rng.choice(VALID).split()
        i = rng.randrange(len(words) + 1)
        words.insert(i, rng.choice(["\x00", "\x1b[2J", "\x07", "\x7f", "\x85", "\u2028", "\x0b"]))
        return "".join(w + rng.choice([" ", "", "\t"]) for w in words)
    if r < 0.85:  # a command with random, often bad, arguments
        args = [rng.choice(ARGS) for _ in range(rng.randrange(0, 5))]
        sep = rng.choice([" ", "  ", "\t", " \t "])
        line = sep.join([rng.choice(names), *args])
        if rng.random() < 0.1:
            line = line.upper()
        return line if rng.random() < 0.8 else line.encode()
    if r < 0.99:
        return rng.choice(VALID)
    if r < 0.99998:  # the console's own output coming back: ignored
        return rng.choice(ECHOES)
    return rng.choice(RARE)


def owes_reply(line: str | bytes) -> bool:
    """Whether the console owes a final reply (not when its own output comes back)."""
    if isinstance(line, bytes):
        line = line.removesuffix(b"\n").removesuffix(b"\r")
        if len(line) > MAX_LINE:
            return True
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return True
    else:
        text = line.removesuffix("\n").removesuffix("\r")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_LINE:
            return True
    if any(c != "\t" and not c.isprintable() for c in text):
        return True
    return ECHO.fullmatch(text) is None


def kind(reply: str) -> str:
    """final, info or event; anything else fails."""
    if reply == "ok" or reply.startswith(("ok ", "error ")):
        return "final"
    if reply.startswith("// "):
        return "info"
    if reply.startswith("# event "):
        return "event"
    obj = json.loads(reply)
    if "ok" in obj:
        return "final"
    assert "event" in obj, reply
    return "event"


@dataclass
class FuzzReport:
    lines: int = 0
    replied: int = 0
    echoes: int = 0
    events: int = 0
    unprintable: list[tuple[str | bytes, str]] = field(default_factory=list)
    unprintable_count: int = 0
    traced: list[int] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)


def _note_unprintable(report: FuzzReport, line: str | bytes, reply: str) -> None:
    if not reply.isprintable():
        report.unprintable_count += 1
        if len(report.unprintable) < 20:
            report.unprintable.append((line, reply))


def fuzz(lines: int, seed: int, tmp: Path, samples: int = 20,
         hook: Callable[[int], None] | None = None) -> FuzzReport:
    """``lines`` random lines; ``hook(i)`` after each (for probes)."""
    report = FuzzReport()
    # Small simulator histories: full within the first quarter, so later growth is a leak.
    pin_history, hal.sim.PIN_HISTORY = hal.sim.PIN_HISTORY, 50
    try:
        rig = SimRig(seed=seed, keep=100)
    finally:
        hal.sim.PIN_HISTORY = pin_history

    def heard(event: str) -> None:
        assert kind(event) == "event", event
        report.events += 1
        _note_unprintable(report, "<event>", event)

    console = Console(rig.app, **console_extras(rig.sim), raw_config=config.default_raw(),
                      config_path=tmp / "launcher.toml", write=heard)
    # Every command name (and group word) to put random arguments after; the two slow
    # commands come only from RARE, about twice in 100,000 lines.
    names = sorted(({s.name for s in console.commands} - set(RARE))
                   | {"lid", "luck", "config", "sounds", "motor", "json", "debug"})
    rng = random.Random(seed)
    every = max(1, lines // samples)
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        for i in range(lines):
            line = random_line(rng, names)
            replies = console.handle_line(line)
            kinds = [kind(r) for r in replies]
            if owes_reply(line):
                assert kinds.count("final") == 1 and kinds[-1] == "final", (line, replies)
                report.replied += 1
            else:
                assert replies == [], (line, replies)
                report.echoes += 1
            for r in replies:
                _note_unprintable(report, line, r)
            report.lines += 1
            if i % 10 == 9:
                rig.advance(0.2)  # shots, rotations and debug runs go on meanwhile
                rig.sim.take()
                if len(rig.sim.cartridge) > 300:
                    # `cards N` adds faster than the shots take away: a person would
                    # empty the simulated cartridge (it is not the firmware's memory).
                    rig.sim.unload()
            if hook is not None:
                hook(i)
            if i % every == every - 1:
                gc.collect()
                report.traced.append(tracemalloc.get_traced_memory()[0])
                report.rss.append(rss_bytes())
    finally:
        if not tracing:
            tracemalloc.stop()
    # Still up and answering.
    assert console.handle_line("json off")[-1] == "ok json=off"
    assert console.handle_line("status")[-1].startswith("ok state=")
    report.counters = dict(console.counters)
    console.close()
    rig.close()
    return report


def _growth(values: list[int]) -> int:
    q = max(1, len(values) // 4)
    return values[-1] - values[q - 1]


def _check(report: FuzzReport, lines: int, record_property) -> None:
    traced, rss = _growth(report.traced), _growth(report.rss)
    line = (f"{report.lines} lines: {report.replied} replied, {report.echoes} echoes ignored, "
            f"{report.events} events; internal errors {report.counters['internal']}; "
            f"traced memory {traced:+d} B and RSS {rss:+d} B from the first quarter to the end; "
            f"{report.unprintable_count} unprintable replies")
    print(line)
    record_property("fuzz", line)
    assert report.lines == lines
    assert report.counters["internal"] == 0
    assert report.counters["lines"] == report.replied + 2  # the two checks at the end
    assert traced < TRACED_TOLERANCE, line
    assert rss < RSS_TOLERANCE, line


_RUNS: dict[int, FuzzReport] = {}


def _run(lines: int, tmp_path_factory: pytest.TempPathFactory) -> FuzzReport:
    if lines not in _RUNS:
        _RUNS[lines] = fuzz(lines, seed=lines, tmp=tmp_path_factory.mktemp("fuzz"))
    return _RUNS[lines]


def test_twenty_thousand_random_lines(tmp_path_factory, record_property) -> None:
    _check(_run(20_000, tmp_path_factory), 20_000, record_property)


@pytest.mark.slow
def test_a_million_random_lines(tmp_path_factory, record_property) -> None:
    _check(_run(1_000_000, tmp_path_factory), 1_000_000, record_property)


# Replies and events must be printable (a reply quoting a control character escapes it).
def test_every_reply_is_printable(tmp_path_factory) -> None:
    report = _run(20_000, tmp_path_factory)
    assert report.unprintable_count == 0, report.unprintable[:5]


@pytest.mark.slow
def test_every_reply_of_a_million_is_printable(tmp_path_factory) -> None:
    report = _run(1_000_000, tmp_path_factory)
    assert report.unprintable_count == 0, report.unprintable[:5]
