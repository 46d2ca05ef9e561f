"""`launcher play` in a real terminal: a pty of 80x24 or 120x40, read by a terminal emulator.

The program runs as a user runs it (its own process, its stdin and stdout a pty); pyte
plays the terminal, so each test reads the screen a person would see. Keys are the bytes a
terminal sends (an arrow is ``ESC [ A``). Waits are for something to show on the screen,
with a generous bound; nothing here sleeps for a fixed time.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pyte = pytest.importorskip("pyte")
pytest.importorskip("prompt_toolkit")
pytest.importorskip("rich")

from launcher.cli.play_screen import FAULT_WAY_OUT  # noqa: E402

SIZES = [(80, 24), (120, 40)]
LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
ESC, UP, LEFT, BACKSPACE, PAGE_DOWN = "\x1b", "\x1b[A", "\x1b[D", "\x7f", "\x1b[6~"
PANE = "Esc or Enter close"  # the footer while a reply's pane is open
BOUND = 30.0  # s: the most any screen may take to show up (a loaded machine is slow)


class Terminal:
    """A pty of a given size with `launcher play` on it, and a pyte screen reading it."""

    def __init__(self, tmp: Path, columns: int, rows: int, *args: str) -> None:
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.lock = threading.Lock()
        self.wrote = threading.Condition(self.lock)  # notified at each write the reader sees
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        conf = tmp / "alsa.conf"
        conf.write_text("pcm.!default { type null }\n")
        env = {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "",
               "TERM": "xterm-256color", "COLUMNS": "", "LINES": ""}
        self.stderr = tmp / "stderr"
        with self.stderr.open("wb") as err:
            self.proc = subprocess.Popen(
                [*LAUNCHER, "play", "--seed", "4", "--state", str(tmp / "state.json"), *args],
                stdin=slave, stdout=slave, stderr=err, env=env, start_new_session=True)
        os.close(slave)
        self.raw = bytearray()  # everything the program wrote, for the raw-escape check
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.2)
                if not ready:
                    if self.proc.poll() is not None:
                        return
                    continue
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self.wrote:
                self.raw += data
                self.stream.feed(data)
                self.wrote.notify_all()

    def text(self) -> str:
        with self.lock:
            return self._text()

    def _text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def lines(self) -> list[str]:
        return self.text().split("\n")

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def until(self, ok: Callable[[str], bool], what: str) -> str:
        """The screen once ``ok`` holds for it, looked at again at each write the program
        makes (and every 0.2 s, for its exit)."""
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            with self.wrote:
                text = self._text()
                if ok(text):
                    return text
                if self.proc.poll() is not None:
                    break
                self.wrote.wait(0.2)
        pytest.fail(f"never showed {what}; the screen:\n{self.text()}\n"
                    f"stderr:\n{self.stderr.read_text(errors='replace')}")

    def shows(self, needle: str) -> str:
        return self.until(lambda t: needle in t, repr(needle))

    def settled(self, quiet: float = 0.15) -> str:
        """The screen once the program has written nothing for ``quiet`` seconds: a redraw
        read half-way (the pane's frame drawn, its rows not yet) is not a page."""
        deadline = time.monotonic() + BOUND
        with self.wrote:
            while time.monotonic() < deadline:
                if not self.wrote.wait(quiet):  # ``quiet`` s went by with no write
                    break
            return self._text()

    def row(self, label: str, having: str = "") -> str:
        """The status box's line that starts with ``label``, once it holds ``having`` (a row
        read just after a change may still be the one before it: the redraw is under way)."""
        def line(t: str) -> str | None:
            return next((x for x in t.split("\n")
                         if re.match(rf"│ {re.escape(label)}\s", x) and having in x), None)

        return line(self.until(lambda t: line(t) is not None,
                               f"the {label} row" + (f" with {having!r}" if having else "")))

    def close(self) -> int:
        if self.proc.poll() is None:
            self.send(ESC)  # out of a pane or the command line first, then quit
            self.until(lambda t: PANE not in t and not t.split("\n")[-1].startswith(":"),
                       "the keys again")
            self.send("q")
            try:
                self.proc.wait(timeout=BOUND)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        os.close(self.master)
        return self.proc.returncode


@pytest.fixture(params=SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def term(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Terminal]:
    columns, rows = request.param
    t = Terminal(tmp_path, columns, rows)
    try:
        t.shows("SIMULATED BOARD")
        t.shows("loaded cards=84")
        yield t
    finally:
        code = t.close()
        assert code == 0, t.stderr.read_text(errors="replace")


def footer(t: Terminal) -> str:
    return t.lines()[-1]


def test_colon_then_escape_or_an_empty_backspace_returns_to_the_keys(term: Terminal):
    term.send(":")
    term.until(lambda t: t.split("\n")[-1].startswith(":"), "the : prompt")
    term.send("o")  # typed into the command line, not the lid key
    term.until(lambda t: t.split("\n")[-1] == ":o", "':o' typed")
    assert "lid=full" not in term.text()
    term.send(ESC)
    term.until(lambda t: not t.split("\n")[-1].startswith(":"), "the prompt gone after Esc")
    term.send("o")  # a key again: the lid opens fully and the cartridge turns
    term.shows("ok lid=full")
    assert "unknown" not in term.text()  # 'o' was never run as a command
    term.send("c")
    term.shows("ok lid=closed")
    # Backspace over the ':' itself leaves as well, and so does a backspace after a word.
    term.send(":")
    term.until(lambda t: t.split("\n")[-1] == ":", "the : prompt")
    term.send("p" + BACKSPACE)
    term.until(lambda t: t.split("\n")[-1] == ":", "the p rubbed out")
    term.send(BACKSPACE)
    term.until(lambda t: not t.split("\n")[-1].startswith(":"), "the prompt gone")
    term.send(" ")
    term.shows("ok state=")  # the space is a press again


def test_arrow_keys_edit_the_line_and_recall_the_history(term: Terminal):
    term.send(":inventor" + "\r")
    term.shows("error unknown")
    term.send(":")
    term.until(lambda t: t.split("\n")[-1] == ":", "the : prompt")
    term.send(UP)  # the last command comes back, to be put right
    term.until(lambda t: t.split("\n")[-1] == ":inventor", "the recalled line")
    term.send("y\r")
    term.shows("ok inventory=84")
    term.send(":tatus" + LEFT * 5 + "s\r")  # an arrow moves the cursor; nothing raw typed
    term.shows("ok state=ready")
    term.send(":version \x1b[200~\x1b[31mred\x1b[201~\r")  # a paste with an escape in it
    text = term.shows("> version [31mred")  # the paste's escape left out, nothing raw
    assert "> status" in text  # each typed line shows above its reply
    assert "\x1b" not in text and "U+001B" not in text and "error line" not in text
    with term.lock:
        raw = bytes(term.raw)
    assert b"error line" not in raw


def test_a_long_reply_opens_in_a_pane_that_scrolls_to_its_end(term: Terminal):
    from launcher.core.config import load
    from launcher.firmware.console import Console
    from launcher.sim.rig import SimRig
    from launcher.sim.unit import console_extras

    rig = SimRig(seed=4)
    try:
        console = Console(rig.app, **console_extras(rig.sim))
        help_rows = [x[3:].split("  ")[0] for x in console.handle_line("help")[:-1]]
        console.close()
    finally:
        rig.close()
    assert load() and len(help_rows) > 30  # `help` is longer than either screen
    term.send(":help\r")
    term.shows("help (")
    seen: set[str] = set()
    for _ in range(20):  # page down until the last row is on screen
        text = term.settled()
        # A row of the pane starts at its frame, without the console's `// `.
        seen.update(r for r in help_rows if re.search(rf"│{re.escape(r)}(\s|│)", text))
        if "ok commands=" in text:
            break
        term.send(PAGE_DOWN)
        term.until(lambda t, before=text: t != before, "the pane scrolled")
    assert "ok commands=" in term.text()
    assert set(help_rows) == seen  # every row was on screen at some point, whole
    assert "// " not in term.text()
    term.send("q")
    term.until(lambda t: "help (" not in t, "the pane closed")
    term.row("side")  # the status is back

    # `status` is one line longer than the screen is wide: the event list wraps it, whole.
    term.send(":status\r")
    text = term.shows("debug=off")
    assert PANE not in text
    events = text.split("─ events ─")[1]
    joined = " ".join(x.strip("│ ") for x in events.split("\n"))
    for field in ("ok state=ready", "side=mild", "profile=flip-attack", "simulated=true",
                  "debug=off"):
        assert field in joined
    assert "…" not in events


def test_the_led_rotator_cue_and_fault_rows_show(term: Terminal):
    assert "on: ready to shoot" in term.row("LED")
    assert "still" in term.row("rotator")
    assert "startup" in term.row("rotator")  # the last cue shares the rotator's line
    assert term.row("way out").split()[-2:] == ["-", "│"]
    term.send(":luck set mild hazard [1.0] sizes [2] weights [1]\r")
    term.shows("applied=now")
    term.send("j")  # the next card sticks in the slot
    term.shows("jam=armed")
    term.send(" ")
    term.until(lambda t: "fault       jam" in t or "fault      jam" in t, "the jam fault")
    # Each row shows what it should within the bound (``row`` fails the test otherwise).
    term.row("LED", "2 blinks, pause: fault jam")
    term.row("way out", FAULT_WAY_OUT["jam"])
    term.row("rotator", "jam")  # the jam cue played
    # The hint is right: `x` with the card still stuck faults again...
    term.send("x")
    term.shows("cleared=jam")
    term.send(" ")
    term.until(lambda t: "beam_blocked" in t.split("╰")[0], "the beam_blocked fault")
    term.row("way out", FAULT_WAY_OUT["beam_blocked"])
    term.row("LED", "6 blinks, pause: fault beam_blocked")
    # ...and `u` then `x` gets out.
    term.send("u")
    term.shows("jam=cleared")
    term.send("x")
    term.shows("cleared=beam_blocked")
    term.until(lambda t: "on: ready to shoot" in t, "the LED ready again")
    assert term.row("way out", " - ").split()[-2:] == ["-", "│"]
    # The rotator row follows a turn: open the lid fully.
    term.send("o")
    term.until(lambda t: "turning" in t or "flip" in t, "the turn")
