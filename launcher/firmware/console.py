"""Serial debug console: one session's line dispatcher, independent of the transport.

A line in gives zero or more info lines (``// ...``) and exactly one final line, ``ok [data]``
or ``error <code> <message>``. Events from the launcher go to ``write`` as ``# event <kind>
k=v ...`` lines. ``json on`` turns every line into one JSON object. The commands are looked
up by exact words in a registry (launcher.firmware.registry) that each group of commands
fills from its own module, next to the code it drives; this module wires the registry, the
session (its modes) and the running configuration, and checks each line before it runs:
a user's mistake is answered as ``error``; any other exception is a bug, which faults the
launcher (motors off first) and is answered ``error internal``. Input is never evaluated
as code.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import launcher
from launcher.core import machine as m
from launcher.firmware.app_commands import register_app_commands
from launcher.firmware.doctor_report import register_doctor_commands
from launcher.firmware.live_config import LiveConfig, register_config_commands
from launcher.firmware.luck_commands import register_luck_commands
from launcher.firmware.pairing import register_pairing_commands
from launcher.firmware.registry import (
    E_DEBUG,
    E_HARDWARE,
    E_INTERNAL,
    E_LINE,
    E_STATE,
    E_UNAVAILABLE,
    Args,
    CommandError,
    Registry,
    Spec,
    error_line,
    on_off,
    printable,
    quote,
    reply_lines,
)
from launcher.firmware.session import Session, register_session_commands
from launcher.firmware.sim_commands import SelfTestRun, SimulatedBoard, register_sim_commands
from launcher.firmware.sound import register_sound_commands

if TYPE_CHECKING:
    from launcher.firmware.app import Launcher

log = logging.getLogger("launcher.console")

MAX_LINE = 256  # bytes, without the line end

# The order `help` lists the commands in, by first word: what a person at the launcher
# looks at and does first, then luck, config, sounds, web pairing, the session, and last
# what moves hardware directly and what only the simulated launcher has.
HELP_ORDER = ("help", "status", "version", "press", "lid", "button", "side", "pins", "load",
              "inventory", "luck", "profile", "seed", "stats", "log", "sleep", "wake", "clear",
              "config", "selftest", "doctor", "sounds", "web", "reboot-safe", "json", "session",
              "debug", "motor", "rotate", "jam", "unjam", "cards")
# What still answers after `reboot-safe` has stopped the launcher.
WHEN_STOPPED = ("help", "version", "status")

# What the console itself prints: a line that starts like this came back from an echoing
# line (a TX-RX loopback, a terminal with echo on) and is not answered, or it would echo forever.
_ECHO = re.compile(r'(ok|ok .*|error .*|# .*|// .*|\{".*)', re.DOTALL)


class Console:
    """One console (serial port, stdin, a web session...): its registry, session and the
    running configuration wired together, and each line checked, then dispatched.

    The running configuration is made here from ``raw_config``, ``config_path`` and
    ``seed``, or, for a second console on the same launcher, handed over as ``live`` (the
    first console's ``config``): one running configuration, one save, whichever console
    changes it. ``remote``: a session over the network (a web panel's): its replies are
    always read as JSON, and it may not change how the network reaches the unit (``web.*``).
    """

    def __init__(self, app: Launcher, *, sim: SimulatedBoard | None = None,
                 selftest: SelfTestRun | None = None,
                 raw_config: dict[str, Any] | None = None, config_path: Path | None = None,
                 write: Callable[[str], None] | None = None,
                 reboot: Callable[[], None] | None = None, seed: int | None = None,
                 live: LiveConfig | None = None, remote: bool = False) -> None:
        self.app = app
        self.sim = sim
        self.write = write  # where event lines go (the transport, the play screen, a test)
        self.reboot = reboot  # the owner's "exit so that systemd restarts us"
        self.stopped = False  # after reboot-safe: the launcher is stopped
        self.counters = {"lines": 0, "errors": 0, "echoes": 0, "internal": 0}
        # The configuration as it should be saved, and as the launcher is running it.
        if live is None:
            live = LiveConfig(app, raw_config, config_path, seed)
        elif raw_config is not None or config_path is not None or seed is not None:
            raise TypeError("a console handed the running configuration (live) reads no "
                            "other (raw_config, config_path, seed)")
        self.config = live
        self.session = Session(app, self._emit, debug_idle=lambda: live.debug_idle,
                               remote=remote)
        self.commands = reg = Registry(HELP_ORDER)
        reg.register("status", "", "the launcher's state, side, lid, inventory and fault",
                     lambda a: self.status())
        reg.register("version", "", "firmware, Python and board", self._version)
        reg.register("reboot-safe", "", "motors safe, state saved, then restart the firmware",
                     self._reboot_safe)
        register_app_commands(reg, app, sim, self.counters)
        register_luck_commands(reg, app, self.config, self.session)
        register_config_commands(reg, self.config, self.session)
        register_sound_commands(reg, app.cues)
        register_doctor_commands(reg, app.state_path)
        register_pairing_commands(reg, app.pairing)
        register_session_commands(reg, self.session)
        register_sim_commands(reg, app, sim, selftest, self.config)
        app.listeners.append(self._on_event)

    # -- the public face ------------------------------------------------------------------

    def banner(self) -> str:
        board = "simulated" if self.app.board.simulated else self.app.board.name
        return (f"# launcher {launcher.__version__} console on {board} board; "
                "`help` lists commands")

    def reset(self) -> None:
        """A new session: text mode, debug off (and any debug run stopped)."""
        self.session.reset()

    def close(self) -> None:
        """Stop listening to the launcher and stop any debug run."""
        if self.app.started:
            self.app.debug_stop()
        self.session.close()
        if self._on_event in self.app.listeners:
            self.app.listeners.remove(self._on_event)

    def handle_line(self, line: str | bytes) -> list[str]:
        """Run one line (without its line end); the info lines and the one final line.

        Every line returned is printable: a control character a user typed into a value
        comes back escaped (``\\u001b``), never raw to the operator's terminal.
        """
        return [printable(out) for out in self._handle_line(line)]

    def handle_overlong(self, size: int) -> list[str]:
        """The answer to a line the transport cut off because it was too long."""
        self.counters["lines"] += 1
        self.session.lasts()
        return [self._error(E_LINE, f"too long ({size} bytes; at most {MAX_LINE})")]

    def event_line(self, kind: str, data: Mapping[str, Any]) -> str:
        """An asynchronous event as this session shows it."""
        return self.session.event_line(kind, data)

    # -- lines ----------------------------------------------------------------------------

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
            self.session.lasts()
            return reply_lines(self.commands.dispatch(text, self._gate), self.session.json)
        except CommandError as exc:
            return [self._error(exc.code, exc.message)]
        except Exception as exc:
            # A bug, not a user's mistake: the board is made safe and the launcher faults.
            self.counters["internal"] += 1
            self.app.internal_fault(exc, f"console line {quote(str(line))}")
            return [self._error(E_INTERNAL, f"{type(exc).__name__}: {exc} (logged; "
                                            "launcher in fault, `clear` leaves it)")]

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

    def _gate(self, spec: Spec) -> None:
        """Refuse a command found but not possible here or now."""
        if self.stopped and spec.name not in WHEN_STOPPED:
            raise CommandError(E_STATE, "the launcher is stopped for a restart")
        if spec.sim and self.sim is None:
            raise CommandError(*spec.elsewhere or (
                E_HARDWARE, f"{spec.name} needs the simulated launcher"))
        if spec.debug and not self.session.debug:
            raise CommandError(E_DEBUG, f"{spec.name} moves hardware directly: "
                                        "send `debug on` first")

    def _error(self, code: str, message: str) -> str:
        self.counters["errors"] += 1
        return error_line(code, message, self.session.json)

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
        if self.write is None:
            return  # nowhere to show it (a web session's console: its streams get events)
        try:
            self._emit(self.event_line(kind, data))
        except Exception:
            log.exception("console: event %s not shown", kind)

    # -- the console's own commands -------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """`status`: the launcher's, with this session's debug mode (reactor thread)."""
        status = self.app.status()
        status["debug"] = on_off(self.session.debug)
        if self.stopped:
            status["stopped"] = "restart requested"
        return status

    def _version(self, a: Args) -> dict[str, Any]:
        import platform  # here, not at the service's start: it compiles regexes on import

        b = self.app.board
        return {"firmware": launcher.__version__, "python": platform.python_version(),
                "board": "simulated" if b.simulated else b.name}

    def _reboot_safe(self, a: Args) -> dict[str, Any]:
        reboot = self.reboot
        if reboot is None:
            raise CommandError(E_UNAVAILABLE, "nothing here can restart this process")
        state = self.app.machine.state
        if state in (m.SHOOTING, *m.TURNING):
            # Both end by themselves within seconds; stopping now would lose the count of
            # a shot half out, or leave the cartridge between detents.
            raise CommandError(E_STATE, f"refused while {state}; ask again when it is done")
        self.app.debug_stop()
        self.app.stop()  # motors safe, state written
        self.stopped = True
        reboot()  # the owner stops its reactor and exits with a code systemd restarts
        return {"restart": "requested", "unsaved": len(self.config.unsaved)}


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


def _escaped_only(text: str) -> bool:
    """Whether every surrogate in ``text`` stands for a byte (surrogateescape's U+DC80..)."""
    return all("\udc80" <= c <= "\udcff" for c in text if "\ud800" <= c <= "\udfff")
