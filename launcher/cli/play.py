"""``launcher play``: the firmware on a simulated launcher, in a terminal.

On a terminal: single keys, and a live one-screen view with the events scrolling below
(``play_screen.LiveScreen``, with the ``tui`` extra). Otherwise (a pipe, a script, or no
``tui`` extra): one console command per line, replies and events as lines. Either way the
firmware runs on the real reactor, on this thread, exactly as ``launcher run`` does.
"""

from __future__ import annotations

import random
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from launcher.cli.play_screen import Snapshot, shot_text, snapshot
from launcher.core import config
from launcher.core.reactor import NEVER, RealReactor
from launcher.sim.unit import console_extras, simulated_app

BENCH_DECK = 84  # 112 cards less 4 hands of 7: a full launcher at the start of a game
EVENT_LINES = 200  # kept for the event list; the screen shows the newest that fit
FRAME = 0.25  # s between redraws of the live view (and one right after each key)

KEYS: dict[str, str] = {  # key -> console command (the screen lists them)
    " ": "press", "p": "press", "o": "lid full", "a": "lid open", "c": "lid close",
    "j": "jam", "u": "unjam", "s": "sleep", "w": "wake", "x": "clear", "r": "reload",
}


class Playground:
    """The simulated unit plus its console, fed from the keyboard or from lines."""

    def __init__(self, settings: config.Settings, seed: int, config_path: str | None,
                 out: TextIO, live: bool = False) -> None:
        from launcher.firmware.console import Console

        self.out = out
        self.live = live
        self.output_closed = False  # the reader of our stdout went away (`| head`)
        self.warnings: list[str] = []
        self.reactor = RealReactor()
        self.app, self.sim = simulated_app(settings, self.reactor, random.Random(seed),
                                           self._warn)
        self.seed = seed
        self.events: deque[str] = deque(maxlen=EVENT_LINES)
        self.console = Console(self.app, **console_extras(self.sim),
                               raw_config=config.load_raw(config_path),
                               config_path=Path(config_path) if config_path else None,
                               write=self._console_line, reboot=self.reactor.stop)
        self.last_shot = "none yet"
        self.last_cue = "none yet"
        self.reply: list[str] = []  # the reply to the last line run
        self.app.listeners.append(self._event)
        self._view_timer = self.reactor.register_timer(self._redraw, NEVER, "play.view")
        self.view: Any = None
        self.reactor_stopped = False  # set once run() has returned

    def _warn(self, text: str) -> None:
        # On the live screen a warning is shown in its footer (a line printed now would be
        # wiped by the first frame) and printed once more when the screen is gone.
        self.warnings.append(text)
        if not self.live:
            print(f"warning: {text}", file=sys.stderr)

    def write(self, text: str) -> None:
        """Write to stdout; a closed pipe stops the launcher instead of raising."""
        if self.output_closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self.output_closed = True
            self.reactor.stop()

    def _console_line(self, line: str) -> None:
        if not self.live:
            self.write(line + "\n")
        elif not line.startswith(SHOWN_IN_ROWS):
            self.events.append(line)

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "shot":
            self.last_shot = shot_text(data)
        elif kind == "cue":
            self.last_cue = data["name"]

    def reload_cartridge(self) -> None:
        """Fill the simulated cartridge to a full launcher and tell the firmware."""
        self.sim.load(f"card {i}" for i in range(BENCH_DECK - len(self.sim.cartridge)))
        self.app.load(len(self.sim.cartridge))

    def run_line(self, line: str) -> float:
        """Run one typed line; returns how long to hold the next input back (``wait S``)."""
        self.reply = []
        words = line.split()
        if words in (["quit"], ["exit"]):
            self.reactor.stop()
            self._console_line("ok bye")
            return 0.0
        if words == ["reload"]:
            self.reload_cartridge()
            self._console_line("ok reloaded the simulated cartridge")
            return 0.0
        if words[:1] == ["wait"]:
            try:
                seconds = float(words[1]) if len(words) == 2 else -1.0
            except ValueError:
                seconds = -1.0
            if not 0 <= seconds <= 600:
                self._console_line("error usage wait SECONDS (0 to 600): let time pass")
                return 0.0
            self._console_line(f"ok waiting={seconds:g}")
            return seconds
        self.reply = self.console.handle_line(line)
        for reply in self.reply:
            self._console_line(reply)
        return 0.0

    # -- the live view --

    def snapshot(self) -> Snapshot:
        return snapshot(self.app, self.sim, seed=self.seed, last_shot=self.last_shot,
                        events=tuple(self.events), warnings=tuple(self.warnings),
                        last_cue=self.last_cue)

    def _redraw(self, eventtime: float) -> float:
        if self.view is not None:
            self.view.draw(self.snapshot())
        return eventtime + FRAME

    # -- from the live screen's thread: everything goes through reactor.post --

    def key(self, key: str) -> None:
        self.reactor.post(lambda: self._run_now(KEYS[key]))

    def line(self, line: str) -> None:
        def run() -> None:
            from launcher.firmware.console import printable

            self.events.append(printable(f"> {line}"))  # what was typed, above its reply
            self._run_now(line)
            if self.view is not None:
                self.view.reply(line, self.reply)  # a pane opens if it does not fit

        self.reactor.post(run)

    def _run_now(self, line: str) -> None:
        self.run_line(line)  # a `wait` holds nothing back here: a person is typing
        self.reactor.update_timer(self._view_timer, self.reactor.monotonic())  # draw now


# Event lines the live screen shows in rows of their own, not in the event list.
SHOWN_IN_ROWS = ("# event cue ", "# event led ")


def _reader(stream: TextIO, post: Callable[[str], None]) -> None:
    """Read lines on a thread of its own; everything goes through reactor.post."""
    for line in stream:
        post(line.rstrip("\n"))
    post("\x04")


def _live_screen() -> Any:
    """The live screen's class, or None without the ``tui`` extra."""
    try:
        import prompt_toolkit  # noqa: F401
        import rich  # noqa: F401
    except ImportError:
        return None
    from launcher.cli.play_screen import LiveScreen

    return LiveScreen


def run_play(settings: config.Settings, seed: int, lines: bool = False,
              config_path: str | None = None, stdin: TextIO | None = None,
              stdout: TextIO | None = None) -> int:
    """Run the firmware on the simulated board until ``q``/``quit``/end of input.

    A closed stdout (``launcher play | head -3``) ends it quietly: ``BrokenPipeError`` is
    raised once everything is stopped, and ``launcher``'s main turns it into status 141.
    """
    from launcher.firmware.runner import install_signal_handlers

    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    terminal = not lines and stdin.isatty() and out.isatty()
    screen = _live_screen() if terminal else None
    if terminal and screen is None:
        print("launcher play: the live screen needs the tui extra (pip install "
              "'uno-launcher[tui]'); reading one command a line", file=sys.stderr)
    live = screen is not None
    play = Playground(settings, seed, config_path, out, live=live)
    install_signal_handlers(play.reactor.stop)
    if not live:
        play.write(f"# SIMULATED launcher (no hardware), luck seed {seed}. One console "
                   "command per line; `help` lists them, `reload` refills the cartridge, "
                   "`wait S` lets time pass, `quit` ends.\n")
    play.app.start()
    play.reload_cartridge()
    try:
        if live:
            _run_live(play, screen)
        else:
            _run_lines(play, stdin)
    finally:
        play.reactor_stopped = True
        play.app.stop()
        play.app.board.close()
    if play.output_closed:
        raise BrokenPipeError("standard output was closed")
    return 0


def _run_live(play: Playground, screen: Any) -> None:
    """The live screen on its thread, the firmware on this one, until either ends."""
    play.view = screen(play.key, play.line, play.reactor.stop, tuple(KEYS))
    play.view.draw(play.snapshot())
    play.view.start()
    play.reactor.update_timer(play._view_timer, play.reactor.monotonic())
    try:
        play.reactor.run()
    finally:
        play.view.stop()
    for text in play.warnings:  # the screen that showed them is gone
        print(f"warning: {text}", file=sys.stderr)


def _run_lines(play: Playground, stdin: TextIO) -> None:
    """One console command a line from ``stdin``, each after the last has been handled."""
    waiting: list[threading.Event] = []  # the input held back by `wait S` (one at most)
    inflight: list[threading.Event] = []  # the input being handled, released at the end

    def wait_over(eventtime: float) -> float:
        while waiting:
            waiting.pop().set()
        return NEVER

    # One timer for every `wait`, re-armed each time: a long script must not pile up timers.
    wait_timer = play.reactor.register_timer(wait_over, NEVER, "play.wait")

    def on_input(item: str) -> float:
        if item == "\x04":
            play.reactor.stop()
            return 0.0
        return play.run_line(item)

    def post(item: str) -> None:
        # One input at a time: the next waits until this one and the pin edges it caused
        # (posted behind it) have been handled, so a script reads what a person would see.
        done = threading.Event()
        inflight[:] = [done]

        def handle() -> None:
            hold = 0.0
            try:
                hold = on_input(item)
            finally:  # whatever happened, the reader must not wait for ever
                if hold > 0:
                    waiting.append(done)
                    play.reactor.update_timer(wait_timer, play.reactor.monotonic() + hold)
                else:
                    play.reactor.post(done.set)

        play.reactor.post(handle)
        while not done.wait(0.5):
            if play.reactor_stopped:
                return

    thread = threading.Thread(target=_reader, args=(stdin, post), daemon=True,
                              name="play-input")
    thread.start()
    try:
        play.reactor.run()
    finally:
        play.reactor_stopped = True
        for done in inflight:
            done.set()  # the reactor has stopped: let the reader thread see its input through
    thread.join(timeout=5)
