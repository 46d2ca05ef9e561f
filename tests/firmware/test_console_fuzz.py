"""Random byte streams into the console: every complete line gets exactly one final reply.

The expected number of replies comes from a model written here, independently of the
framer: a complete line ends at CR, LF or CR LF, and only lines that are the console's own
output coming back (``ok ...``, ``error ...``, ``# ...``, ``// ...``, ``{"...``) go unanswered.
"""

from __future__ import annotations

import json
import os
import queue
import random
import re
import select
import tempfile
import threading
import tty
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.core import config
from launcher.core import machine as m
from launcher.firmware.console import MAX_LINE, Console
from launcher.firmware.transport import TICK, LineFramer, Overlong, SerialTransport
from launcher.sim.rig import SimRig

VOCABULARY = [
    "status", "press", "lid open", "lid full", "lid close", "side", "load 7", "load 999",
    "inventory", "luck show", "luck set mild hazard [0.4, 1.0]", "luck set wild sizes [3]",
    "seed 11", "stats", "log", "log 5", "sleep", "wake", "clear", "config get motor.speed",
    "config set timing.jam_timeout_ms 600", "config set pins.led 99", "config save",
    "selftest", "sounds play mild_bam", "sounds list", "version", "help", "help luck",
    "json on", "json off", "debug on", "debug off", "motor run 250", "motor run 9999",
    "rotate", "jam", "unjam", "cards 6", "", "ok", "# event x", "bogus", "luck", "\t load\t3",
]
ECHO = re.compile(r'(ok|ok .*|error .*|# .*|// .*|\{".*)', re.DOTALL)


def expected_replies(stream: bytes) -> int:
    """How many final lines the console owes for ``stream`` (the unfinished tail owes none)."""
    lines = re.split(rb"\r\n|\r|\n", stream)[:-1]
    return sum(not _is_echo(line) for line in lines)


def _is_echo(line: bytes) -> bool:
    if len(line) > MAX_LINE:
        return False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if any(c != "\t" and not c.isprintable() for c in text):
        return False
    return ECHO.fullmatch(text) is not None


def kind(line: str) -> str:
    """final, event or info; anything else is a protocol error."""
    if line == "ok" or line.startswith(("ok ", "error ")):
        return "final"
    if line.startswith("# event "):
        return "event"
    if line.startswith("// "):
        return "info"
    obj = json.loads(line)  # raises on anything that is not one of the forms above
    if "ok" in obj:
        return "final"
    assert "event" in obj, line
    return "event"


chunks = st.lists(
    st.one_of(
        st.binary(max_size=40),
        st.sampled_from(VOCABULARY).map(lambda s: s.encode()),
        st.sampled_from([b"\n", b"\r", b"\r\n", b"\n\r"]),
        st.integers(250, 300).map(lambda n: b"z" * n),
        st.sampled_from(VOCABULARY).map(lambda s: s.encode() + b"\r\n"),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=chunks, pauses=st.lists(st.sampled_from([0.0, 0.01, 0.1, 0.5, 2.0]),
                                      min_size=1, max_size=8))
def test_random_bytes_get_one_final_line_per_complete_line(chunks: list[bytes],
                                                           pauses: list[float]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rig = SimRig()
        out: list[str] = []
        console = Console(rig.app, sim=rig.sim, write=out.append,
                          raw_config=config.default_raw(),
                          config_path=Path(tmp) / "launcher.toml")
        framer = LineFramer()
        finals = 0
        try:
            for i, chunk in enumerate(chunks):
                for item in framer.feed(chunk):
                    if isinstance(item, Overlong):
                        replies = console.handle_overlong(item.size)
                    else:
                        replies = console.handle_line(item)
                    kinds = [kind(x) for x in replies]
                    assert kinds.count("final") <= 1 and (not kinds or kinds[-1] == "final")
                    finals += kinds.count("final")
                    rig.advance(0)
                rig.advance(pauses[i % len(pauses)])
            assert finals == expected_replies(b"".join(chunks))
            assert all(kind(x) == "event" for x in out)
            # Still up.
            console.handle_line(b"json off")
            assert console.handle_line(b"status")[-1].startswith("ok state=")
            assert console.counters["internal"] == 0
            board = rig.app.board
            assert board.motor.speed == 0 or rig.state == m.SHOOTING or console._run is not None
        finally:
            console.close()
            rig.close()


def test_the_model_counts_lines_as_the_framer_does() -> None:
    rng = random.Random(5)
    for _ in range(300):
        stream = bytes(rng.choice(b"ab\r\n\xff") for _ in range(rng.randrange(60)))
        framer = LineFramer()
        pieces = []
        i = 0
        while i < len(stream):
            j = i + rng.randrange(1, 6)
            pieces += framer.feed(stream[i:j])
            i = j
        assert len(pieces) == len(re.split(rb"\r\n|\r|\n", stream)) - 1


def test_random_bytes_over_a_real_pty() -> None:
    """The same promise through the serial transport: 20 kB of noise and commands."""
    rng = random.Random(2024)
    parts = []
    for _ in range(600):
        r = rng.random()
        if r < 0.5:
            parts.append(rng.choice(VOCABULARY).encode() + rng.choice([b"\n", b"\r\n", b"\r"]))
        elif r < 0.95:
            parts.append(bytes(rng.randrange(256) for _ in range(rng.randrange(40))))
        else:
            parts.append(b"q" * rng.randrange(200, 400))
    parts.append(b"\r\njson off\r\nseed 987654321\r\n")
    stream = b"".join(parts)
    want = expected_replies(stream)

    rig = SimRig()
    wake: queue.Queue[str] = queue.Queue()
    post = rig.reactor.post

    def posted(callback: object) -> None:
        post(callback)  # type: ignore[arg-type]
        wake.put("post")

    rig.reactor.post = posted  # type: ignore[method-assign]
    master, slave = os.openpty()
    tty.setraw(slave)
    console = Console(rig.app, sim=rig.sim)
    t = SerialTransport(console, rig.reactor, os.ttyname(slave))
    got: list[str] = []
    stop_r, stop_w = os.pipe()

    def collect() -> None:
        buf = b""
        while True:
            ready, _, _ = select.select([master, stop_r], [], [])
            if stop_r in ready:
                return
            buf += os.read(master, 65536)
            *lines, buf = buf.split(b"\r\n")
            got.extend(x.decode("utf-8") for x in lines)
            wake.put("line")

    collector = threading.Thread(target=collect, name="collector")
    feeder = threading.Thread(target=os.write, args=(master, stream), name="feeder")
    try:
        assert t.start()
        collector.start()
        while not got:
            wake.get(timeout=10)
            rig.advance(TICK)
        feeder.start()
        while not (got and got[-1] == "ok seed=987654321"):
            rig.advance(TICK)
            if not t.inbox.pending:
                wake.get(timeout=10)
        finals = [x for x in got[1:] if kind(x) == "final"]
        assert len(finals) == want
        assert console.counters["internal"] == 0
    finally:
        feeder.join(10)
        t.stop()
        os.write(stop_w, b"x")
        collector.join(10)
        for fd in (master, slave, stop_r, stop_w):
            os.close(fd)
        rig.close()
