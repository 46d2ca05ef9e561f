"""``launcher play``: the firmware on a simulated launcher, in a terminal.

On a terminal: single keys, and a live one-screen view with the events scrolling below
(``play_screen.LiveScreen``, with the ``tui`` extra). Otherwise (a pipe, a script, ``TERM=dumb``
or no ``tui`` extra): one console command per line, replies and events as lines. Either way
the firmware runs on the real reactor, on this thread, exactly as ``launcher run`` does.

The exit status follows README.md's rule: 0 at ``q``, ``quit`` or the end of the input, 1 when
a line of a script answered ``error``, 130 after Ctrl-C or SIGINT, 143 after SIGTERM, at once
whatever the input is doing.
"""

from __future__ import annotations

import contextlib
import os
import random
import select
import signal
import sys
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from launcher.cli.play_screen import Snapshot, shot_text, snapshot
from launcher.core import config
from launcher.core.reactor import NEVER, RealReactor
from launcher.firmware.runner import relay_signals
from launcher.sim.unit import console_extras, fill_cartridge, resume_cartridge, simulated_app

EVENT_LINES = 200  # kept for the event list; the screen shows the newest that fit
FRAME = 0.25  # s between redraws of the live view (and one right after each key)

KEYS: dict[str, str] = {  # key -> console command (the screen lists them)
    " ": "press", "p": "press", "o": "lid full", "a": "lid open", "c": "lid close",
    "j": "jam", "u": "unjam", "s": "sleep", "w": "wake", "x": "clear", "r": "reload",
}


class Playground:
    """The simulated unit plus its console, fed from the keyboard or from lines."""

    def __init__(self, settings: config.Settings, seed: int, config_path: str | None,
                 out: TextIO, live: bool = False, resumed: bool = False) -> None:
        from launcher.firmware.console import Console

        self.out = out
        self.live = live
        self.resumed = resumed  # started from the state file's side and counters
        self.output_closed = False  # the reader of our stdout went away (`| head`)
        self.signal: int | None = None  # the signal that stopped it (SIGINT, SIGTERM)
        self.failed = 0  # lines that answered `error`
        self.scripted = False  # the lines come from a script (a pipe, a file): see exit_status
        self.warnings: list[str] = []
        self.reactor = RealReactor()
        self.app, self.sim = simulated_app(settings, self.reactor, random.Random(seed),
                                           self._warn)
        self.seed = seed
        self.events: deque[str] = deque(maxlen=EVENT_LINES)
        self.console = Console(self.app, **console_extras(self.sim), seed=seed,
                               raw_config=config.load_raw(config_path),
                               config_path=Path(config_path) if config_path else None,
                               write=self._console_line, reboot=self.reactor.stop)
        self.last_shot = "none yet"
        self._shooting: tuple[dict[str, Any], int] | None = None  # the shot under way
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
        if kind == "shoot":  # a shot starts: what it asked, and the cards out so far
            self._shooting = (data, self.sim.ejected_total)
        elif kind == "shot":
            self.last_shot = shot_text(data)
            self._shooting = None
        elif kind in ("fault", "shot_aborted") and self._shooting is not None:
            # A shot that ended in a jam (or an overrun, or an opened lid) was a shot too.
            started, before = self._shooting
            self._shooting = None
            out = shot_text({"cards": self.sim.ejected_total - before, "side": started["side"]})
            end = f"fault {data['code']}" if kind == "fault" else data["reason"]
            self.last_shot = f"{out} of {started['cards']}, then {end}"
        elif kind == "cue":
            self.last_cue = data["name"]

    def reload_cartridge(self) -> None:
        """Fill the simulated cartridge to a full launcher and tell the firmware."""
        fill_cartridge(self.app, self.sim)

    def stop_by(self, signum: int) -> None:
        """A signal's handler: stop, and remember which signal for the exit status."""
        self.signal = signum
        self.reactor.stop()

    def exit_status(self) -> int:
        """README.md's rule: 128 + the signal that stopped it, 1 if a line of a script
        answered ``error`` (a person at a terminal has read the reply already), else 0."""
        if self.signal is not None:
            return 128 + self.signal
        return 1 if self.failed and self.scripted else 0

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
                self.failed += 1
                self._console_line("error usage wait SECONDS (0 to 600): let time pass")
                return 0.0
            if self.live:  # a person is typing: nothing to hold back, time runs by itself
                self._console_line(f"ok waiting=0 (on the screen time runs by itself; "
                                   f"`wait {seconds:g}` spaces the lines of a script)")
                return 0.0
            self._console_line(f"ok waiting={seconds:g}")
            return seconds
        errors = self.console.counters["errors"]
        self.reply = self.console.handle_line(line)
        self.failed += self.console.counters["errors"] > errors
        for reply in self.reply:
            self._console_line(reply)
        return 0.0

    # -- the live view --

    def snapshot(self) -> Snapshot:
        return snapshot(self.app, self.sim, seed=self.seed, resumed=self.resumed,
                        last_shot=self.last_shot,
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
            from launcher.firmware.registry import printable

            self.events.append(printable(f"> {line}"))  # what was typed, above its reply
            self._run_now(line)
            if self.view is not None:
                self.view.reply(line, self.reply)  # a pane opens if it does not fit

        self.reactor.post(run)

    def _run_now(self, line: str) -> None:
        self.run_line(line)  # a `wait` holds nothing back here, and says so
        self.reactor.update_timer(self._view_timer, self.reactor.monotonic())  # draw now


# Event lines the live screen shows in rows of their own, not in the event list.
SHOWN_IN_ROWS = ("# event cue ", "# event led ")
POLL = 0.1  # s: how soon the input's reader sees a stop while no input comes
DUMB_TERMINALS = ("", "dumb", "unknown")  # TERM values with no cursor addressing


def input_lines(stream: TextIO, stop: threading.Event) -> Iterator[str]:
    """The lines of ``stream`` (without their ``\\n``) until its end or until ``stop`` is set.

    A stream with a file descriptor (stdin: a terminal, a pipe, a file) is read with
    ``select``, so a stop is seen within ``POLL`` even while nothing comes (a person at a
    terminal, the live writer of a pipe), and no thread is left blocked in a read. Bytes that
    are not UTF-8 reach the console as surrogates, which it refuses by name.
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.StringIO and the like never block
        for line in stream:
            if stop.is_set():
                return
            yield line.rstrip("\n")
        return
    pending = b""
    while not stop.is_set():
        ready, _, _ = select.select([fd], [], [], POLL)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            yield line.decode("utf-8", "surrogateescape")
            if stop.is_set():
                return
    if pending and not stop.is_set():
        yield pending.decode("utf-8", "surrogateescape")


def _live_screen() -> Any:
    """The live screen's class, or None without the ``tui`` extra."""
    try:
        import prompt_toolkit  # noqa: F401
        import rich  # noqa: F401
    except ImportError:
        return None
    from launcher.cli.play_screen import LiveScreen

    return LiveScreen


def _screen_for(stdin: TextIO, out: TextIO, lines: bool) -> Any:
    """The live screen's class if this is a terminal it can draw on, else None (lines)."""
    if lines or not (stdin.isatty() and out.isatty()):
        return None
    term = os.environ.get("TERM", "")
    if term in DUMB_TERMINALS:
        print(f"launcher play: TERM={term or '(unset)'} cannot draw the live screen; reading "
              "one command a line", file=sys.stderr)
        return None
    screen = _live_screen()
    if screen is None:
        print("launcher play: the live screen needs the tui extra (pip install "
              "'uno-launcher[tui]'); reading one command a line", file=sys.stderr)
    return screen


@contextlib.contextmanager
def _signals_stop(play: Playground) -> Iterator[None]:
    """SIGINT and SIGTERM stop the firmware (and say which, for the exit status) while
    inside, from the thread ``relay_signals`` keeps for them; the handlers before are put
    back after."""
    put_back = relay_signals(play.stop_by)
    try:
        yield
    finally:
        put_back()


def run_play(settings: config.Settings, seed: int, lines: bool = False,
              config_path: str | None = None, stdin: TextIO | None = None,
              stdout: TextIO | None = None, resume: bool = True) -> int:
    """Run the firmware on the simulated board until ``q``/``quit``/end of input or a signal;
    the exit status (README.md's rule).

    ``resume``: start from the state file's side and counters, as a unit does at power-on;
    otherwise from a fresh unit's (the file is started over), so that a seed and a script
    give the same output every time. A closed stdout (``launcher play | head -3``) ends it
    quietly: ``BrokenPipeError`` is raised once everything is stopped, and ``launcher``'s
    main turns it into status 141.
    """
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    screen = _screen_for(stdin, out, lines)
    live = screen is not None
    path = settings.state_path
    resumed = resume and path.exists()
    if not resume:
        start_fresh(path)
    play = Playground(settings, seed, config_path, out, live=live, resumed=resumed)
    unreadable = resumed and play.app.store.problem is not None
    if unreadable:  # the warning said "starting from defaults": so it is, not resumed
        play.resumed = resumed = False
    play.scripted = not live and not stdin.isatty()
    if not live:
        how = (f"resumed from {path} (--no-resume starts fresh)" if resumed else
               f"a fresh unit, as {path} could not be read (the warning says why); it is "
               f"written again as the unit plays" if unreadable else
               f"a fresh unit, its state kept in {path} (--resume starts from it)")
        play.write(f"# SIMULATED launcher (no hardware), luck seed {seed}, {how}. One console "
                   "command per line; `help` lists them, `reload` refills the cartridge, "
                   "`wait S` lets time pass, `quit` ends.\n")
    with _signals_stop(play):
        play.app.start()
        resume_cartridge(play.app, play.sim)  # the saved count (a fresh unit: full)
        try:
            if live:
                _run_live(play, screen)
            else:
                _run_lines(play, stdin)
        finally:
            play.reactor_stopped = True
            play.app.stop()
            play.app.board.close()
    if live:
        print(f"launcher play: the state is kept in {path}", file=sys.stderr)
    if play.output_closed:
        raise BrokenPipeError("standard output was closed")
    if live and play.signal == signal.SIGINT:
        interrupt_the_job(stdin)
    return play.exit_status()


def interrupt_the_job(tty: TextIO) -> None:
    """Do what the terminal would have done for Ctrl-C: SIGINT to its foreground job.

    The live screen reads Ctrl-C as a key (the terminal's ISIG is off while it draws), so
    only this process heard it; a ``make play`` around it would then see a program that
    failed with 130 and end with 2. Sent to the job, ``make`` ends as interrupted (130), as
    it does when the key reaches it as a signal. This process ignores its own copy: it is
    ending with 130 already.
    """
    try:
        job = os.tcgetpgrp(tty.fileno())
    except (AttributeError, OSError, ValueError):
        return  # not a controlling terminal: no job to tell
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.killpg(job, signal.SIGINT)


def start_fresh(path: Path) -> None:
    """Start the state file at ``path`` over: the unit starts as a new one does (Mild side,
    no counters) and writes the file again as it plays."""
    from launcher.cli.paths import writing

    with writing(path, "--state"):
        path.unlink(missing_ok=True)


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
    if play.view.interrupted and play.signal is None:
        play.signal = signal.SIGINT  # Ctrl-C on the screen is the terminal's interrupt key
    for text in play.warnings:  # the screen that showed them is gone
        print(f"warning: {text}", file=sys.stderr)


def _run_lines(play: Playground, stdin: TextIO) -> None:
    """One console command a line from ``stdin``, each after the last has been handled."""
    waiting: list[threading.Event] = []  # the input held back by `wait S` (one at most)
    inflight: list[threading.Event] = []  # the input being handled, released at the end
    stop = threading.Event()  # the reactor has stopped: the reader ends

    def wait_over(eventtime: float) -> float:
        while waiting:
            waiting.pop().set()
        return NEVER

    # One timer for every `wait`, re-armed each time: a long script must not pile up timers.
    wait_timer = play.reactor.register_timer(wait_over, NEVER, "play.wait")

    def on_input(item: str | None) -> float:
        if item is None:  # the end of the input
            play.reactor.stop()
            return 0.0
        return play.run_line(item)

    def post(item: str | None) -> None:
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
        while not done.wait(POLL):
            if stop.is_set():
                return

    def read() -> None:
        for line in input_lines(stdin, stop):
            post(line)
        if not stop.is_set():
            post(None)

    thread = threading.Thread(target=read, daemon=True, name="play-input")
    thread.start()
    try:
        play.reactor.run()
    finally:
        stop.set()
        for done in inflight:
            done.set()  # the reactor has stopped: let the reader thread see its input through
    thread.join(timeout=5)
