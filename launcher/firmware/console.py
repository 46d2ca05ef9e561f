"""Serial debug console: a command registry and a line dispatcher, independent of the transport.

A line in gives zero or more info lines (``// ...``) and exactly one final line, ``ok [data]``
or ``error <code> <message>``. Events from the launcher go to ``write`` as ``# event <kind>
k=v ...`` lines. ``json on`` turns every line into one JSON object. Commands are looked up by
exact words from a table of handlers with one-line helps, in the Klipper manner: argument
helpers raise ``CommandError`` (a user error, answered as ``error``); any other exception is
logged as an internal error and the console goes on. Input is never evaluated as code.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import launcher
from launcher.core import config, cues, luck
from launcher.core import machine as m
from launcher.core.errors import ConfigError, LauncherError
from launcher.core.profiles import Profile, parse_profile
from launcher.core.reactor import NEVER
from launcher.firmware import places
from launcher.firmware.disk import atomic_write
from launcher.firmware.sound import load_pack

if TYPE_CHECKING:
    from launcher.core.config import Settings
    from launcher.firmware.app import Launcher

log = logging.getLogger("launcher.console")

MAX_LINE = 256  # bytes, without the line end
MOTOR_RUN_MAX_MS = 300  # the cap of `motor run`
LOAD_MAX = 200
LOG_DEFAULT = 10
LOG_MAX = 200

# Error codes: the second word of an `error` line.
E_UNKNOWN = "unknown"
E_USAGE = "usage"
E_VALUE = "value"
E_STATE = "state"
E_DEBUG = "debug"
E_HARDWARE = "hardware"
E_LINE = "line"
E_IO = "io"
E_UNAVAILABLE = "unavailable"
E_INTERNAL = "internal"

ERROR_CODES: dict[str, str] = {
    E_UNKNOWN: "no such command or subcommand",
    E_USAGE: "wrong number of arguments",
    E_VALUE: "an argument or a config value is not acceptable (the message names it)",
    E_STATE: "not possible in the launcher's present state",
    E_DEBUG: "moves hardware directly: needs `debug on` first",
    E_HARDWARE: "needs the simulated launcher (on a real one the lid, jams and cards are physical)",
    E_LINE: "the line itself was rejected: too long, not UTF-8, or a control character",
    E_IO: "a file could not be written",
    E_UNAVAILABLE: "not available in this build or setup",
    E_INTERNAL: "a bug: motors off, logged with its traceback, the launcher in an internal fault",
}

# Config keys that take effect on the running launcher. Everything else (pins, audio, the
# state file, the console itself, the seed, and the debounce window, which the shell reads
# when it wires the inputs) is written by `config save` and used after a restart.
_LIVE_PREFIXES = ("luck.mild.", "luck.wild.", "timing.", "motor.", "console.debug_idle_s")
_RESTART_KEYS = ("timing.debounce_ms",)
LUCK_KEYS = ("hazard", "sizes", "weights")

# The debug gate on configuration. Without `debug on` nothing the console changes may make
# the roller or the rotator run longer, harder or on other pins than the config the
# launcher started with allows, or `motor run`'s cap would be a formality (max_run_ms
# 15000 + card_timeout_ms 10000 + a slow roller + `profile deal 30` ran it for 15 s).
# Gated by prefix, so keys added later are gated too: every motor, rotator and pin key, the
# pin factory (it decides how IN1 is driven), and every timing key but the two below, which
# only decide when a press is taken or when the launcher sleeps, never how long a run lasts
# (debounce_ms is gated: it decides whether the exit beam counts each card).
GATED_PREFIXES = ("motor.", "timing.", "rotator.", "pins.", "board.")
UNGATED_KEYS = ("timing.mash_guard_ms", "timing.sleep_after_s")
# Keys that move where the unit writes its files: gated too, and checked against the state
# folder whatever the mode (launcher.firmware.places).
FILE_PREFIXES = ("state.",)
# Shot sizes bound a run too (the roller runs until that many cards are out), so without
# `debug on` a press may not ask for more cards than the started config's largest shot
# (either side; 12 with the defaults), unless the launcher knows it holds them (`deal N`
# with `load N`: a shot never asks for more than the known inventory). Hazards and weights
# only change how often and which of those sizes: not gated.

_INT = re.compile(r"-?[0-9]+")
# What the console itself prints: a line that starts like this came back from an echoing
# line (a TX-RX loopback, a terminal with echo on) and is not answered, or it would echo forever.
_ECHO = re.compile(r'(ok|ok .*|error .*|# .*|// .*|\{".*)', re.DOTALL)


class CommandError(LauncherError):
    """A user error in a command: answered as ``error <code> <message>``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Reply:
    """What a handler returns: data for the ``ok`` line, and rows shown before it."""

    data: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    rows_key: str = "rows"  # the rows' key in JSON mode
    row_text: Callable[[dict[str, Any]], str] | None = None  # text mode: one row, one line


Handler = Callable[["Args"], "Reply | dict[str, Any] | None"]


@dataclass(frozen=True)
class Spec:
    """One registered command."""

    name: str  # one word, or "group word" (e.g. "luck set")
    params: str  # e.g. "SIDE KEY VALUE"
    help: str
    handler: Handler
    min_args: int = 0
    max_args: int | None = 0  # None: the rest of the line
    debug: bool = False  # needs `debug on`
    sim: bool = False  # needs the simulated launcher

    @property
    def usage(self) -> str:
        return f"{self.name} {self.params}".strip()


class Args:
    """The words after a command, with helpers that raise ``CommandError`` naming the problem."""

    def __init__(self, spec: Spec, line: str, spans: list[tuple[int, int]]) -> None:
        self.spec = spec
        self._line = line
        self._spans = spans
        self.words = [line[a:b] for a, b in spans]

    def __len__(self) -> int:
        return len(self.words)

    def word(self, i: int) -> str:
        return self.words[i]

    def integer(self, i: int, name: str, lo: int, hi: int | None = None) -> int:
        text = self.words[i]
        if not _INT.fullmatch(text):
            raise CommandError(E_VALUE, f"{name} must be a whole number, not {_quote(text)}")
        value = int(text)
        if value < lo or (hi is not None and value > hi):
            span = f"at least {lo}" if hi is None else f"within {lo}..{hi}"
            raise CommandError(E_VALUE, f"{name} must be {span}, not {value}")
        return value

    def choice(self, i: int, name: str, choices: tuple[str, ...]) -> str:
        text = self.words[i]
        if text not in choices:
            raise CommandError(E_VALUE, f"{name} must be one of {', '.join(choices)}; "
                                        f"not {_quote(text)}")
        return text

    def rest(self, i: int, end: int | None = None) -> str:
        """The raw text from word ``i`` up to word ``end`` (default: the end of the line)."""
        stop = len(self._line) if end is None or end >= len(self) else self._spans[end][0]
        return self._line[self._spans[i][0]:stop].strip()


class Registry:
    """Commands by exact name; two-word commands are grouped under their first word."""

    def __init__(self) -> None:
        self._specs: dict[str, Spec] = {}
        self._groups: dict[str, list[str]] = {}

    def add(self, spec: Spec) -> None:
        words = spec.name.split(" ")
        if len(words) > 2 or spec.name in self._specs:
            raise ValueError(f"bad or duplicate command name {spec.name!r}")
        if len(words) == 2:
            if words[0] in self._specs:
                raise ValueError(f"{words[0]!r} is already a command")
            self._groups.setdefault(words[0], []).append(words[1])
        elif spec.name in self._groups:
            raise ValueError(f"{spec.name!r} is already a group")
        self._specs[spec.name] = spec

    def __iter__(self) -> Any:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def find(self, words: list[str]) -> tuple[Spec, int]:
        """The command named by the first words, and how many words its name took."""
        first = words[0]
        if first in self._specs:
            return self._specs[first], 1
        if first in self._groups:
            subs = ", ".join(self._groups[first])
            if len(words) < 2:
                raise CommandError(E_USAGE, f"{first} needs a subcommand: {subs}")
            spec = self._specs.get(f"{first} {words[1]}")
            if spec is None:
                raise CommandError(E_UNKNOWN, f"{first} has no subcommand {_quote(words[1])} "
                                              f"(it has {subs})")
            return spec, 2
        raise CommandError(E_UNKNOWN, f"no command {_quote(first)}; `help` lists them")

    def topic(self, words: list[str]) -> list[Spec]:
        """The commands `help WORDS` is about."""
        if len(words) == 1 and words[0] in self._groups:
            return [self._specs[f"{words[0]} {w}"] for w in self._groups[words[0]]]
        spec, used = self.find(words)
        if used != len(words):
            raise CommandError(E_UNKNOWN, f"no command {_quote(' '.join(words))}")
        return [spec]


# --- formatting --------------------------------------------------------------------------


def _quote(word: str, limit: int = 40) -> str:
    """A word of the user's, quoted for an error message (long ones are shortened)."""
    return repr(word if len(word) <= limit else word[:limit] + "...")


def printable(line: str) -> str:
    """``line`` with every character that is not printable escaped as JSON escapes it."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in line)


def text_value(value: Any) -> str:
    """One value as the text protocol writes it: no spaces unless quoted."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(text_value(v) for v in value) + "]"
    text = str(value)
    if text and text.isprintable() and not any(c.isspace() or c in '="' for c in text):
        return text
    return json.dumps(text, ensure_ascii=False)


def text_fields(data: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={text_value(v)}" for k, v in data.items())


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=str)


def _side_of(yellow_back: bool) -> str:
    return "mild" if yellow_back else "wild"


class SimulatedBoard(Protocol):
    """What the sim-only commands use of a simulated launcher (``hal.sim.SimLauncher``)."""

    cartridge: list[Any]
    tray: list[Any]
    ejected_total: int

    @property
    def lid(self) -> str: ...
    def open_lid(self, full: bool = True) -> None: ...
    def close_lid(self) -> None: ...
    def jam(self) -> None: ...
    def clear_jam(self) -> None: ...
    def load(self, cards: Any) -> None: ...


SelfTestRun = Callable[["Settings"], Any]  # settings -> a report with .results and .failed()


class Console:
    """The command table and dispatcher for one console session (serial port, stdin...)."""

    def __init__(self, app: Launcher, *, sim: SimulatedBoard | None = None,
                 selftest: SelfTestRun | None = None,
                 raw_config: dict[str, Any] | None = None, config_path: Path | None = None,
                 write: Callable[[str], None] | None = None,
                 reboot: Callable[[], None] | None = None, seed: int | None = None) -> None:
        self.app = app
        self.sim = sim
        # The luck seed the firmware started with (its owner drew it: `--seed`, luck.seed or
        # a fresh one), then the last `seed N`; None: luck.seed says.
        self.seed = seed
        self.run_selftest = selftest  # the walk-through on a fresh simulated unit
        self.config_path = config_path
        # The configuration as it should be saved, and as the launcher is running it.
        self.raw: dict[str, Any] = (copy.deepcopy(raw_config) if raw_config is not None
                                    else config.load_raw(config_path))
        self.running_raw: dict[str, Any] = copy.deepcopy(self.raw)
        # The largest shot a press may ask for without `debug on` (see GATED_PREFIXES).
        self.shot_cap = _largest_shot(self.raw)
        self.unsaved: set[str] = set()
        # The config file as `config save` last saw it (at start, then after each save): a
        # key that differs on disk now was edited underneath the firmware.
        self._file_seen: dict[str, Any] | None = self._read_file()
        self.write = write  # where event lines go (the transport, the play screen, a test)
        self.reboot = reboot  # the owner's "exit so that systemd restarts us"
        self.json = False
        self.debug = False
        # `debug on` lapses after console.debug_idle_s without a line: a bare UART cannot
        # tell one person at it from the next.
        self._debug_timer = app.reactor.register_timer(self._debug_idle, NEVER,
                                                       "console.debug_idle")
        self.stopped = False  # after reboot-safe: the launcher is stopped
        self.counters = {"lines": 0, "errors": 0, "echoes": 0, "internal": 0}
        self.commands = Registry()
        self._register_builtins()
        app.listeners.append(self._on_event)

    # -- the public face ------------------------------------------------------------------

    def register(self, name: str, params: str, help: str, handler: Handler, *,
                 min_args: int = 0, max_args: int | None = 0, debug: bool = False,
                 sim: bool = False) -> None:
        """Add a command (``name`` is one word, or two for a subcommand)."""
        self.commands.add(Spec(name, params, help, handler, min_args, max_args, debug, sim))

    def banner(self) -> str:
        board = "simulated" if self.app.board.simulated else self.app.board.name
        return (f"# launcher {launcher.__version__} console on {board} board; "
                "`help` lists commands")

    def reset(self) -> None:
        """A new session: text mode, debug off (and any debug run stopped)."""
        self.json = False
        self._debug_off()

    def close(self) -> None:
        """Stop listening to the launcher and stop any debug run."""
        if self.app.started:
            self.app.debug_stop()
        self.app.reactor.unregister_timer(self._debug_timer)
        if self._on_event in self.app.listeners:
            self.app.listeners.remove(self._on_event)

    def _debug_off(self) -> None:
        self.debug = False
        self.app.reactor.update_timer(self._debug_timer, NEVER)
        self.app.debug_stop()

    def _debug_lasts(self) -> None:
        """A line came: debug mode, if on, lasts console.debug_idle_s from now."""
        if self.debug:
            idle = self.app.settings.console.debug_idle
            self.app.reactor.update_timer(self._debug_timer, self.app.reactor.monotonic() + idle)

    def _debug_idle(self, eventtime: float) -> float:
        if self.debug:
            idle = self.app.settings.console.debug_idle
            log.warning("console: debug mode off after %gs without a line", idle)
            self._debug_off()
            self._emit(self.event_line("debug_off", {"reason": "idle", "idle_s": idle}))
        return NEVER

    def handle_line(self, line: str | bytes) -> list[str]:
        """Run one line (without its line end); the info lines and the one final line.

        Every line returned is printable: a control character a user typed into a value
        comes back escaped (``\\u001b``), never raw to the operator's terminal.
        """
        return [printable(out) for out in self._handle_line(line)]

    def _handle_line(self, line: str | bytes) -> list[str]:
        self.counters["lines"] += 1
        # Callers that read whole lines (input(), readline) may pass the line end along.
        if isinstance(line, bytes):
            line = line.removesuffix(b"\n").removesuffix(b"\r")
        else:
            line = line.removesuffix("\n").removesuffix("\r")
        try:
            text = self._check(line)
            if _ECHO.fullmatch(text):
                self.counters["lines"] -= 1
                self.counters["echoes"] += 1
                return []  # not a person's line: it does not keep debug mode on
            self._debug_lasts()
            return self._dispatch(text)
        except CommandError as exc:
            return [self._error(exc.code, exc.message)]
        except Exception as exc:
            # A bug, not a user's mistake: the board is made safe and the launcher faults.
            self.counters["internal"] += 1
            self.app.internal_fault(exc, f"console line {_quote(str(line))}")
            return [self._error(E_INTERNAL, f"{type(exc).__name__}: {exc} (logged; "
                                            "launcher in fault, `clear` leaves it)")]

    def handle_overlong(self, size: int) -> list[str]:
        """The answer to a line the transport cut off because it was too long."""
        self.counters["lines"] += 1
        self._debug_lasts()
        return [self._error(E_LINE, f"too long ({size} bytes; at most {MAX_LINE})")]

    def event_line(self, kind: str, data: Mapping[str, Any]) -> str:
        """An asynchronous event as this session shows it."""
        if self.json:
            t = round(self.app.reactor.monotonic(), 3)
            return _json({"event": kind, "t": t, "data": dict(data)})
        fields = text_fields(data)
        return printable(f"# event {kind} {fields}" if fields else f"# event {kind}")

    # -- lines ----------------------------------------------------------------------------

    def _check(self, line: str | bytes) -> str:
        if isinstance(line, bytes):
            if len(line) > MAX_LINE:
                raise CommandError(E_LINE, f"too long ({len(line)} bytes; at most {MAX_LINE})")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CommandError(E_LINE, f"not UTF-8 (byte 0x{line[exc.start]:02x} at "
                                           f"offset {exc.start})") from None
        else:
            text = line
            try:
                size = len(text.encode("utf-8"))
            except UnicodeEncodeError:
                # Bytes that were not UTF-8, decoded by the caller with surrogateescape
                # (stdin in a C locale): the same answer as the bytes themselves get.
                return self._check(text.encode("utf-8", "surrogateescape")
                                   if _escaped_only(text) else
                                   text.encode("utf-8", "surrogatepass"))
            if size > MAX_LINE:
                raise CommandError(E_LINE, f"too long (at most {MAX_LINE} bytes)")
        text = _erase(text)
        for i, ch in enumerate(text):
            if ch != "\t" and not ch.isprintable():
                raise CommandError(E_LINE, f"control character U+{ord(ch):04X} at offset {i}")
        return text

    def _dispatch(self, text: str) -> list[str]:
        spans = [mt.span() for mt in re.finditer(r"\S+", text)]
        if not spans:
            return [self._ok(Reply())]
        words = [text[a:b] for a, b in spans]
        spec, used = self.commands.find(words)
        if self.stopped and spec.name not in ("help", "version", "status"):
            raise CommandError(E_STATE, "the launcher is stopped for a restart")
        if spec.sim and self.sim is None:
            raise CommandError(*_NOT_SIMULATED.get(spec.name, (
                E_HARDWARE, f"{spec.name} needs the simulated launcher")))
        if spec.debug and not self.debug:
            raise CommandError(E_DEBUG, f"{spec.name} moves hardware directly: "
                                        "send `debug on` first")
        args = Args(spec, text, spans[used:])
        n = len(args)
        if n < spec.min_args or (spec.max_args is not None and n > spec.max_args):
            raise CommandError(E_USAGE, f"expected: {spec.usage}")
        result = spec.handler(args)
        reply = result if isinstance(result, Reply) else Reply(dict(result or {}))
        return self._render(reply)

    def _render(self, reply: Reply) -> list[str]:
        if self.json:
            obj: dict[str, Any] = {"ok": True, "data": reply.data}
            if reply.rows:
                obj[reply.rows_key] = reply.rows
            return [_json(obj)]
        show = reply.row_text or text_fields
        return [f"// {show(row)}" for row in reply.rows] + [self._ok(reply)]

    def _ok(self, reply: Reply) -> str:
        if self.json:
            return _json({"ok": True, "data": reply.data})
        fields = text_fields(reply.data)
        return f"ok {fields}" if fields else "ok"

    def _error(self, code: str, message: str) -> str:
        self.counters["errors"] += 1
        if self.json:
            return _json({"ok": False, "error": code, "message": message})
        return f"error {code} {message}"

    def _emit(self, line: str) -> None:
        write = self.write
        if write is None:
            return
        try:
            write(line)
        except Exception:
            log.exception("console: event writer failed")

    def _on_event(self, kind: str, data: dict[str, Any]) -> None:
        # Runs inside the launcher's dispatch: nothing may escape from here.
        try:
            self._emit(self.event_line(kind, data))
        except Exception:
            log.exception("console: event %s not shown", kind)

    # -- the commands ---------------------------------------------------------------------

    def _register_builtins(self) -> None:
        r = self.register
        r("help", "[COMMAND]", "list the commands, or show one command's usage", self._help,
          max_args=2)
        r("status", "", "the launcher's state, side, lid, inventory and fault", self._status)
        r("version", "", "firmware, Python and board", self._version)
        r("press", "", "press the button once (as the real button does)", self._press)
        r("lid", "open|full|close", "move the simulated lid: ajar, fully open, or shut",
          self._lid, min_args=1, max_args=1, sim=True)
        r("side", "", "the side in play, and what the cartridge sensor says", self._side)
        r("pins", "", "every configured pin's level: outputs (PWM as its duty), inputs raw "
          "(1 high, 0 low)", self._pins)
        r("load", "N", "tell the launcher it now holds N cards", self._load,
          min_args=1, max_args=1)
        r("inventory", "", "cards left and cards shot", self._inventory)
        r("luck show", "", "both sides' hazard curves and shot sizes", self._luck_show)
        r("luck set", "SIDE KEY VALUE [KEY VALUE]...",
          "change a side's hazard, sizes or weights (checked as the config file is)",
          self._luck_set, min_args=3, max_args=None)
        r("profile", "[NAME]", "what a press does: flip-attack, dealer, uno-flip, gin or deal N "
          "(no NAME: show it)", self._profile, max_args=2)
        r("seed", "N", "reseed the press-your-luck generator (replays a run)", self._seed,
          min_args=1, max_args=1)
        r("stats", "", "the launcher's counters and the console's", self._stats)
        r("log", "[N]", f"the last N events (default {LOG_DEFAULT}, at most {LOG_MAX})",
          self._log, max_args=1)
        r("sleep", "", "go to sleep now", self._sleep)
        r("wake", "", "wake up now", self._wake)
        r("clear", "", "leave a fault", self._clear)
        r("config get", "KEY", "one config value, e.g. timing.jam_timeout_ms", self._config_get,
          min_args=1, max_args=1)
        r("config set", "KEY VALUE", "change a config value (checked as the file is)",
          self._config_set, min_args=2, max_args=None)
        r("config save", "", "write the changed keys to the config file", self._config_save)
        r("selftest", "", "the self-test walk-through on a fresh unit", self._selftest,
          sim=True)
        r("sounds play", "CUE", "play one cue", self._sounds_play, min_args=1, max_args=1)
        r("sounds list", "", "every cue name", self._sounds_list)
        r("reboot-safe", "", "motors safe, state saved, then restart the firmware",
          self._reboot_safe)
        r("json", "on|off", "one JSON object per line (for tools), or text", self._json_mode,
          min_args=1, max_args=1)
        r("session new", "", "a fresh session: text mode, debug off, a debug run ended",
          self._session_new)
        r("debug", "on|off", "allow the commands that move hardware directly", self._debug_mode,
          min_args=1, max_args=1)
        r("motor run", "MS", f"run the shooter motor MS ms (at most {MOTOR_RUN_MAX_MS})",
          self._motor_run, min_args=1, max_args=1, debug=True)
        r("rotate", "", "turn the cartridge to its next detent (a flip; the lid fully open)",
          self._rotate, debug=True)
        r("jam", "", "the next card sticks in the slot", self._jam, sim=True)
        r("unjam", "", "free the stuck card", self._unjam, sim=True)
        r("cards", "N", "put N cards into the cartridge", self._cards,
          min_args=1, max_args=1, sim=True)

    # help, status, version

    def _help(self, a: Args) -> Reply:
        specs = self.commands.topic(a.words) if a.words else list(self.commands)

        def row(s: Spec) -> dict[str, Any]:
            return {"command": s.usage, "help": s.help, "debug": s.debug, "sim": s.sim}

        width = max(len(s.usage) for s in specs)

        def line(r: dict[str, Any]) -> str:
            tags = "".join(f" ({t})" for t in ("debug", "sim") if r[t])
            return f"{r['command']:<{width}}  {r['help']}{tags}"

        return Reply({"commands": len(specs)}, [row(s) for s in specs], "commands", line)

    def _status(self, a: Args) -> dict[str, Any]:
        status = self.app.status()
        status["debug"] = _on_off(self.debug)
        if self.stopped:
            status["stopped"] = "restart requested"
        return status

    def _version(self, a: Args) -> dict[str, Any]:
        import platform  # here, not at the service's start: it compiles regexes on import

        b = self.app.board
        return {"firmware": launcher.__version__, "python": platform.python_version(),
                "board": "simulated" if b.simulated else b.name}

    # the launcher

    def _press(self, a: Args) -> dict[str, Any]:
        self.app.press()
        return {"state": self.app.machine.state}

    def _lid(self, a: Args) -> dict[str, Any]:
        where = a.choice(0, "the lid position", ("open", "full", "close"))
        sim = self.sim
        assert sim is not None
        if where == "close":
            sim.close_lid()
        else:
            sim.open_lid(full=where == "full")
        return {"lid": sim.lid}

    def _side(self, a: Args) -> dict[str, Any]:
        b = self.app.board
        return {"side": self.app.machine.memory.side,
                "sensor": _side_of(b.yellow_back.is_active), "home": b.home.is_active}

    def _pins(self, a: Args) -> dict[str, Any]:
        # Every pin of [pins] that is wired, by its config name (new optional pins appear
        # by themselves), in the board's order: outputs, then inputs. Read, never driven.
        pins = self.app.settings.pins
        names = {getattr(pins, f.name): f.name for f in dataclasses.fields(pins)
                 if getattr(pins, f.name) is not None}
        levels = self.app.board.levels()
        out = {names[n]: level for n, level in levels.items() if n in names}
        out.update((name, None) for name in names.values() if name not in out)  # no part
        return out

    def _load(self, a: Args) -> dict[str, Any]:
        n = a.integer(0, "N", 0, LOAD_MAX)
        self.app.load(n)
        return {"inventory": n}

    def _inventory(self, a: Args) -> dict[str, Any]:
        mem = self.app.machine.memory
        out: dict[str, Any] = {
            "inventory": "unknown" if mem.inventory is None else mem.inventory,
            "cards_shot": mem.counters.get("cards_shot", 0),
        }
        if self.sim is not None:
            out["cartridge"] = len(self.sim.cartridge)
            out["tray"] = len(self.sim.tray)
        return out

    # luck

    def _luck_row(self, side: str) -> dict[str, Any]:
        s = self.app.settings.luck.side(side)
        return {"side": side, "hazard": list(s.hazard), "sizes": list(s.sizes),
                "weights": list(s.weights), "max_dry": s.max_dry,
                "shot_rate": round(luck.shot_rate(s), 4), "mean_shot": round(luck.mean_shot(s), 3)}

    def _seed_now(self) -> int | None:
        return self.seed if self.seed is not None else self.app.settings.luck.seed

    def _luck_show(self, a: Args) -> Reply:
        mem = self.app.machine.memory
        rows = [self._luck_row(side) for side in config.SIDES]
        return Reply({"side": mem.side, "dry_streak": mem.dry_streak, "seed": self._seed_now()},
                     rows, "sides")

    def _luck_set(self, a: Args) -> dict[str, Any]:
        side = a.choice(0, "SIDE", config.SIDES)
        # KEY VALUE pairs; a value runs until the next key word, so `[0.2, 1.0]` may hold spaces.
        pairs: list[tuple[str, str]] = []
        i = 1
        while i < len(a):
            key = a.choice(i, "KEY", LUCK_KEYS)
            j = i + 1
            while j < len(a) and a.word(j) not in LUCK_KEYS:
                j += 1
            if j == i + 1:
                raise CommandError(E_USAGE, f"{key} needs a value; expected: {a.spec.usage}")
            pairs.append((key, a.rest(i + 1, j)))
            i = j
        changes = {f"luck.{side}.{key}": config.parse_value(text) for key, text in pairs}
        self._apply(changes)
        row = self._luck_row(side)
        row.update(applied="now", unsaved=len(self.unsaved))
        return row

    def _profile(self, a: Args) -> dict[str, Any]:
        machine = self.app.machine
        if not a.words:
            return {"profile": machine.profile.name}
        try:
            profile = parse_profile(a.rest(0))
        except ValueError as exc:
            raise CommandError(E_VALUE, str(exc)) from None
        self._gate_profile(profile, f"profile {profile.name}")
        if not self.app.use_profile(profile):
            raise CommandError(E_STATE, f"refused while {machine.state}; ask again when ready")
        return {"profile": profile.name}

    def _seed(self, a: Args) -> dict[str, Any]:
        n = a.integer(0, "N", 0)
        self.app.set_seed(n)
        self.seed = n
        return {"seed": n}

    def _stats(self, a: Args) -> dict[str, Any]:
        counters = dict.fromkeys(("presses", "dry", "shots", "cards_shot", "flips", "faults",
                                  "sleeps", "mashed"), 0)
        counters.update(sorted(self.app.machine.memory.counters.items()))
        counters.update({f"console_{k}": v for k, v in self.counters.items()})
        store = self.app.store
        # Saves of the state file: a failed one is kept and written at the next save.
        counters.update(state_writes=store.writes, state_failed_writes=store.failed_writes,
                        state_unwritten=store.unwritten)
        if store.last_error is not None:
            counters["state_error"] = store.last_error
        return counters

    def _log(self, a: Args) -> Reply:
        n = a.integer(0, "N", 1, LOG_MAX) if len(a) else LOG_DEFAULT
        history = list(self.app.history)[-n:]
        rows = [{"t": round(t, 3), "event": kind, "data": dict(data)} for t, kind, data in history]

        def line(r: dict[str, Any]) -> str:
            return f"{r['t']:.3f} {r['event']} {text_fields(r['data'])}".rstrip()

        return Reply({"events": len(rows)}, rows, "events", line)

    def _sleep(self, a: Args) -> dict[str, Any]:
        before = self.app.machine.state
        if before == m.ASLEEP:
            raise CommandError(E_STATE, "already asleep")
        self.app.sleep()
        if self.app.machine.state != m.ASLEEP:
            raise CommandError(E_STATE, f"cannot sleep while {before}")
        return {"state": m.ASLEEP}

    def _wake(self, a: Args) -> dict[str, Any]:
        before = self.app.machine.state
        if before != m.ASLEEP:
            raise CommandError(E_STATE, f"not asleep ({before})")
        self.app.wake()
        return {"state": self.app.machine.state}

    def _clear(self, a: Args) -> dict[str, Any]:
        fault = self.app.machine.memory.fault
        if self.app.machine.state != m.FAULT:
            raise CommandError(E_STATE, f"no fault to clear ({self.app.machine.state})")
        self.app.clear_fault()
        return {"cleared": fault, "state": self.app.machine.state}

    # config

    def _apply(self, changes: dict[str, Any]) -> bool:
        """Check ``changes`` as a config file is checked; apply the live ones. True if live."""
        new = self.raw
        for key, value in changes.items():
            try:
                new = self._put(new, key, value)
            except ConfigError as exc:
                raise CommandError(E_VALUE, str(exc)) from None
        try:
            settings = config.settings_from_dict(new)
            # A path or a device outside the unit's own, whatever the mode (and before a
            # pack is read); then a pack that is not there, which would stop the start.
            places.check_places(settings, changes)
            if "audio.pack" in changes:
                _check_pack(settings.audio.pack)
        except ConfigError as exc:
            raise CommandError(E_VALUE, str(exc)) from None
        self._gate(changes, settings)
        live = {k: v for k, v in changes.items() if _is_live(k)}
        if live:
            running = self.running_raw
            for key, value in live.items():
                running = self._put(running, key, value)
            try:
                settings = config.settings_from_dict(running)
            except ConfigError as exc:
                raise CommandError(E_VALUE, str(exc)) from None
            self.app.use_settings(settings)
            self.running_raw = running
            self._clamp_streak(settings)
            self._debug_lasts()  # a new console.debug_idle_s counts from now
        self.raw = new
        self.unsaved.update(changes)
        return len(live) == len(changes)

    def _clamp_streak(self, settings: Settings) -> None:
        """A hazard curve made shorter while the launcher runs: a dry streak longer than the
        new curve allows is cut to its maximum (where the next press shoots), so the status
        never shows a streak the luck table cannot reach."""
        mem = self.app.machine.memory
        longest = settings.luck.side(mem.side).max_dry
        if mem.streak.count > longest:
            mem.streak.count = longest

    def _gate(self, changes: Mapping[str, Any], settings: Settings) -> None:
        """Refuse, without `debug on`, a valid change to how or how long the motors run."""
        if self.debug:
            return
        for key in changes:
            if _is_gated(key):
                raise CommandError(E_DEBUG, f"{key} changes how or how long the motors run: "
                                            "send `debug on` first")
            if key.startswith(FILE_PREFIXES):
                raise CommandError(E_DEBUG, f"{key} moves the unit's files: send `debug on` "
                                            "first")
            side, _, name = key.removeprefix("luck.").partition(".")
            if name == "sizes" and side in config.SIDES:
                largest = max(settings.luck.side(side).sizes)
                if largest > self.shot_cap:
                    raise CommandError(E_DEBUG, f"{key}: a shot of {largest} cards is more "
                                                f"than the largest ({self.shot_cap}) the "
                                                "launcher started with: send `debug on` first")
            if key == "game.profile":
                self._gate_profile(settings.profile, key)

    def _gate_profile(self, profile: Profile, what: str) -> None:
        """Refuse, without `debug on`, a profile whose press shoots beyond the stock: more
        cards than the launcher is known to hold, or, with the count unknown, more than the
        largest shot the launcher started with."""
        n = profile.per_press
        if self.debug or n is None or n <= self.shot_cap:
            return
        known = self.app.machine.memory.inventory
        if known is not None and n <= known:
            return
        held = ("with the inventory unknown (`load N` sets it)" if known is None
                else f"and the {known} cards loaded")
        raise CommandError(E_DEBUG, f"{what} shoots {n} cards a press, more than the largest "
                                    f"shot ({self.shot_cap}) {held}: send `debug on` first")

    @staticmethod
    def _put(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
        """``raw`` with one key changed, not yet checked as a whole.

        ``config.set_key`` checks after every key, so a side's sizes and weights could never
        change length together; ``_apply`` checks once, after all of them.
        """
        old = config.get_key(raw, key)
        if isinstance(old, dict):
            raise ConfigError(key, value, "is a table; set one of its keys")
        out = copy.deepcopy(raw)
        node = out
        *path, last = key.split(".")
        for part in path:
            node = node[part]
        node[last] = value
        return out

    def _config_get(self, a: Args) -> dict[str, Any]:
        key = a.word(0)
        try:
            value = config.get_key(self.raw, key)
        except ConfigError as exc:
            raise CommandError(E_VALUE, str(exc)) from None
        if isinstance(value, dict):
            raise CommandError(E_VALUE, f"{key} is a table; ask for one of its keys: "
                                        + ", ".join(value))
        out = {key: value}
        running = config.get_key(self.running_raw, key)
        if running != value:
            out["running"] = running  # changed, but it takes effect after a restart
        return out

    def _config_set(self, a: Args) -> dict[str, Any]:
        key = a.word(0)
        value = config.parse_value(a.rest(1))
        live = self._apply({key: value})
        return {key: value, "applied": "now" if live else "restart",
                "unsaved": len(self.unsaved)}

    def _read_file(self) -> dict[str, Any] | None:
        """The config file's own tables as they are on disk ({} if there is none; None if
        it cannot be read)."""
        path = self.config_path
        if path is None or not path.exists():
            return {}
        try:
            return config.read_toml(path)
        except ConfigError:
            return None

    def _config_save(self, a: Args) -> dict[str, Any]:
        path = self.config_path
        if path is None:
            raise CommandError(E_UNAVAILABLE, "no config file: the launcher started on the "
                                              "defaults (give it --config FILE)")
        if not self.unsaved:
            return {"path": str(path), "saved": 0, "written": False,
                    "reason": "nothing changed since the last save"}
        # Merge into the file as it is now: edits made to it while the firmware ran stay.
        try:
            text, on_disk = config.read_toml_text(path) if path.exists() else ("", {})
        except ConfigError as exc:
            raise CommandError(E_IO, f"cannot merge into {path}: {exc}") from None
        seen = self._file_seen if self._file_seen is not None else {}
        keys = sorted(self.unsaved)
        clashes = [k for k in keys
                   if _lookup(on_disk, k) != _lookup(seen, k)
                   and _lookup(on_disk, k) != config.get_key(self.raw, k)]
        if clashes:
            raise CommandError(E_STATE, f"{path} was edited since the firmware read it, "
                                        f"and so were {', '.join(clashes)}: not saved (edit "
                                        "the file, or `config set` those keys again to its "
                                        "values)")
        merged = copy.deepcopy(on_disk)
        defaults = config.default_raw()
        changes: dict[str, Any] = {}
        for key in keys:
            value = config.get_key(self.raw, key)
            if _lookup(on_disk, key) is _ABSENT and value == config.get_key(defaults, key):
                continue  # back to the default and not in the file: nothing to write
            if _lookup(on_disk, key) != value:
                changes[key] = value
            _store(merged, key, value)
        try:
            config.settings_from_dict(config.merge(defaults, merged))
        except ConfigError as exc:
            raise CommandError(E_VALUE, f"the file with these changes would not load: {exc}"
                               ) from None
        saved = len(self.unsaved)
        if merged == on_disk:
            self.unsaved.clear()
            self._file_seen = on_disk
            return {"path": str(path), "saved": saved, "written": False,
                    "reason": "the file already holds these values"}
        if text.strip():
            # The file as it is, with these keys changed: its comments and layout stay.
            text = config.set_in_toml(text, changes)
        else:
            text = ("# Written by the console's `config save`: the file's own keys with the\n"
                    "# console's changes (launcher/default.toml documents every key).\n\n"
                    + config.to_toml(merged))
        try:
            # The file keeps its mode and owner (the installer makes it 0644, so that the
            # self-test runs as the maker's user); a new one is readable by all, as there.
            atomic_write(path, text, keep_mode=True, new_mode=0o644)
        except OSError as exc:
            raise CommandError(E_IO, f"cannot write {path}: {exc.strerror or exc}") from None
        self.unsaved.clear()
        self._file_seen = merged
        return {"path": str(path), "saved": saved, "written": True}

    # the rest

    def _selftest(self, a: Args) -> Reply:
        if self.run_selftest is None:
            raise CommandError(E_UNAVAILABLE, "no self-test was given to this console")
        try:
            report = self.run_selftest(self.app.settings)
        except LauncherError as exc:
            raise CommandError(E_UNAVAILABLE, f"selftest cannot start: {exc}") from None
        rows = [{"part": r.part, "status": r.status, "detail": r.detail}
                for r in report.results.values()]

        def line(r: dict[str, Any]) -> str:
            return f"{r['status']:<4} {r['part']}" + (f": {r['detail']}" if r["detail"] else "")

        failed = report.failed()
        return Reply({"parts": len(rows), "passed": len(rows) - len(failed),
                      "failed": len(failed), "on": "a fresh simulated launcher"},
                     rows, "parts", line)

    def _sounds_play(self, a: Args) -> dict[str, Any]:
        cue = a.word(0)
        names = cues.all_cues()
        if cue not in names:
            raise CommandError(E_VALUE, f"no cue {_quote(cue)}; `sounds list` shows the "
                                        f"{len(names)} cues")
        self.app.cues.play(cue)
        return {"cue": cue}

    def _sounds_list(self, a: Args) -> Reply:
        names = cues.all_cues()
        return Reply({"cues": len(names)}, [{"cue": c} for c in names], "cues",
                     lambda r: r["cue"])

    def _reboot_safe(self, a: Args) -> dict[str, Any]:
        reboot = self.reboot
        if reboot is None:
            raise CommandError(E_UNAVAILABLE, "nothing here can restart this process")
        state = self.app.machine.state
        if state in (m.SHOOTING, m.ROTATING):
            # Both end by themselves within seconds; stopping now would lose the count of
            # a shot half out, or leave the cartridge between detents.
            raise CommandError(E_STATE, f"refused while {state}; ask again when it is done")
        self.app.debug_stop()
        self.app.stop()  # motors safe, state written
        self.stopped = True
        reboot()  # the owner stops its reactor and exits with a code systemd restarts
        return {"restart": "requested", "unsaved": len(self.unsaved)}

    def _json_mode(self, a: Args) -> dict[str, Any]:
        self.json = a.choice(0, "json mode", ("on", "off")) == "on"
        return {"json": _on_off(self.json)}

    def _debug_mode(self, a: Args) -> dict[str, Any]:
        if a.choice(0, "debug mode", ("on", "off")) == "on":
            self.debug = True
            self._debug_lasts()
        else:
            self._debug_off()
        return {"debug": _on_off(self.debug)}

    def _session_new(self, a: Args) -> dict[str, Any]:
        self.reset()
        return {"session": "new", "json": "off", "debug": "off",
                "debug_idle_s": self.app.settings.console.debug_idle}

    # debug runs: requests to the state machine, which owns the motor and the rotator

    def _refusal(self) -> CommandError:
        state = self.app.machine.state
        if state is m.LID_OPEN or not self.app.actuators.lid_closed:
            return CommandError(E_STATE, "refused: the lid is not closed")
        if state is m.DEBUG_RUN:
            return CommandError(E_STATE, "a debug motor run is going on")
        return CommandError(E_STATE, f"refused while {state}")

    def _motor_run(self, a: Args) -> dict[str, Any]:
        ms = a.integer(0, "MS", 1, MOTOR_RUN_MAX_MS)
        if self.app.machine.state is not m.READY or not self.app.debug_run(ms):
            raise self._refusal()
        return {"motor": "on", "ms": ms, "speed": self.app.settings.motor.speed}

    def _rotate(self, a: Args) -> dict[str, Any]:
        # The rotator turns only with the lid fully open (fingers), as in a flip.
        if not self.app.actuators.lid_full:
            raise CommandError(E_STATE, "refused: the rotator turns only with the lid fully open")
        if self.app.machine.state is not m.LID_OPEN or not self.app.debug_rotate():
            raise CommandError(E_STATE, f"refused while {self.app.machine.state}")
        return {"rotator": "on", "limit": self.app.settings.timing.rotation_timeout}

    # the simulated launcher

    def _jam(self, a: Args) -> dict[str, Any]:
        assert self.sim is not None
        self.sim.jam()
        return {"jam": "armed"}

    def _unjam(self, a: Args) -> dict[str, Any]:
        assert self.sim is not None
        self.sim.clear_jam()
        return {"jam": "cleared"}

    def _cards(self, a: Args) -> dict[str, Any]:
        assert self.sim is not None
        n = a.integer(0, "N", 1, LOAD_MAX)
        start = self.sim.ejected_total + len(self.sim.cartridge)  # ejected keeps the newest
        self.sim.load(f"card{start + i + 1}" for i in range(n))
        return {"cartridge": len(self.sim.cartridge)}


# What a sim-only command says on a real board, when more than "needs the simulated launcher".
_NOT_SIMULATED = {
    # The self-test drives the pins itself, takes the inputs' callbacks and needs a person
    # at the launcher for each step: not something to do under the running firmware.
    "selftest": (E_UNAVAILABLE, "on a real board the self-test needs the board to itself and "
                                "a person at it: stop the firmware (sudo systemctl stop "
                                "launcher) and run `launcher selftest`"),
    "lid": (E_HARDWARE, "the lid is physical on this board: open or close it by hand"),
}


def _erase(text: str) -> str:
    """Apply the backspaces a raw terminal sends: BS (U+0008, miniterm) or DEL (U+007F, most
    others) removes the character before it, as the person saw it happen on their screen."""
    if "\b" not in text and "\x7f" not in text:
        return text
    kept: list[str] = []
    for ch in text:
        if ch in "\b\x7f":
            if kept:
                kept.pop()
        else:
            kept.append(ch)
    return "".join(kept)


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT: Any = _Absent()


def _lookup(table: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` in a config file's tables, or ``_ABSENT``."""
    node: Any = table
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _store(table: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``dotted`` in a config file's tables, making the tables on its way."""
    *parts, last = dotted.split(".")
    node = table
    for part in parts:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value


def _check_pack(pack: str) -> None:
    """Load the sound pack ``pack`` names, as the start does; ConfigError if it cannot be."""
    try:
        load_pack(pack)
    except ConfigError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:  # the file system refused the path
        raise ConfigError("audio.pack", pack, f"cannot be read ({type(exc).__name__}: "
                                              f"{exc})") from None


def _escaped_only(text: str) -> bool:
    """Whether every surrogate in ``text`` stands for a byte (surrogateescape's U+DC80..)."""
    return all("\udc80" <= c <= "\udcff" for c in text if "\ud800" <= c <= "\udfff")


def _on_off(flag: bool) -> str:
    return "on" if flag else "off"


def _is_live(key: str) -> bool:
    return key.startswith(_LIVE_PREFIXES) and key not in _RESTART_KEYS


def _is_gated(key: str) -> bool:
    """Whether ``config set KEY`` needs `debug on` whatever the value (GATED_PREFIXES)."""
    return key.startswith(GATED_PREFIXES) and key not in UNGATED_KEYS


def _largest_shot(raw: Mapping[str, Any]) -> int:
    """The most cards one press of ``raw``'s luck tables can ask for (either side)."""
    try:
        return max(max(config.side_luck(f"luck.{side}", raw["luck"][side]).sizes)
                   for side in config.SIDES)
    except (KeyError, TypeError, ValueError):
        return _largest_shot(config.default_raw()) if raw != config.default_raw() else 1
