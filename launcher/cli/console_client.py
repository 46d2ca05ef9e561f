"""`launcher console PORT`: a small serial client, with line history, for the launcher's console."""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

import serial

from launcher.firmware.transport import BAUD, READ_TIMEOUT, LineFramer

HISTORY = Path("~/.launcher_console_history")
REPLY_WAIT = 10  # seconds to wait for a command's final line
PROMPT = "launcher> "

_EOF = None  # put on the line queue when the port goes away


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "console", help="talk to a launcher's serial console",
        description="Open the launcher's serial console, wait for it to answer, then send "
                    "commands typed (with history) or piped in; replies and events are printed. "
                    "Exit status: 0 all ok, 1 some command answered error, 2 no launcher.")
    p.add_argument("port", metavar="PORT",
                   help="serial device or pyserial URL: /dev/ttyUSB0, /dev/ttyACM0, "
                        "socket://host:port, ...")
    p.add_argument("--baud", type=int, default=BAUD, help=f"bits per second (default {BAUD})")
    p.add_argument("--wait", type=int, default=10, metavar="S",
                   help="seconds to wait for the launcher to answer (default 10)")
    p.add_argument("--history", type=Path, default=HISTORY,
                   help=f"line history file (default {HISTORY})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        port = serial.serial_for_url(args.port, baudrate=args.baud, timeout=READ_TIMEOUT,
                                     write_timeout=2, exclusive=True)
    except (serial.SerialException, ValueError, OSError) as exc:
        print(f"launcher console: cannot open {args.port}: {exc}", file=sys.stderr)
        return 2
    client = Client(port)
    client.start()
    try:
        if not client.connect(args.wait, sys.stdout):
            print(f"launcher console: no answer on {args.port} within {args.wait}s "
                  "(is the firmware running, and is the baud rate right?)", file=sys.stderr)
            return 2
        if sys.stdin.isatty():
            return client.interactive(sys.stdout, args.history.expanduser())
        return client.batch(sys.stdin, sys.stdout)
    finally:
        client.close()


def is_final(line: str) -> bool:
    """Whether a line from the console is a command's final line (``ok`` or ``error``)."""
    if line == "ok" or line.startswith(("ok ", "error ")):
        return True
    if line.startswith('{"'):
        with contextlib.suppress(ValueError):
            obj = json.loads(line)
            return isinstance(obj, dict) and "ok" in obj
    return False


def is_error(line: str) -> bool:
    if line.startswith("error "):
        return True
    if line.startswith('{"'):
        with contextlib.suppress(ValueError):
            obj: Any = json.loads(line)
            return isinstance(obj, dict) and obj.get("ok") is False
    return False


class Client:
    """The console's other end over any pyserial port; a thread collects what arrives."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="console-client", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(AttributeError, OSError, serial.SerialException):
            self.port.cancel_read()
        self._thread.join(5)
        with contextlib.suppress(OSError, serial.SerialException):
            self.port.close()

    def send(self, line: str) -> None:
        self.port.write(line.encode("utf-8") + b"\r\n")

    def _read(self) -> None:
        framer = LineFramer(limit=1 << 20)  # the console's own lines may be long (JSON)
        try:
            while not self._stop.is_set():
                data = self.port.read(max(1, self.port.in_waiting))
                for item in framer.feed(data):
                    if isinstance(item, bytes):
                        self.lines.put(item.decode("utf-8", "replace"))
        except (OSError, serial.SerialException):
            pass  # the port went away: the queue says so below
        self.lines.put(_EOF)

    def connect(self, wait: int, out: TextIO) -> bool:
        """Wait for the banner. The console may have greeted long ago; then ask it to answer.

        Bytes sent before the firmware opened its port are lost, so nothing is sent before
        the first second has passed in silence, and the question is repeated every second.
        """
        for _ in range(max(1, wait)):
            try:
                line = self.lines.get(timeout=1.0)
            except queue.Empty:
                self.send("version")
                continue
            if line is _EOF:
                return False
            print(line, file=out, flush=True)
            if line.startswith("# launcher ") or is_final(line):
                return True
        return False

    def command(self, line: str, out: TextIO) -> str | None:
        """Send one line; print what comes back up to its final line (None: no answer)."""
        self.send(line)
        for _ in range(REPLY_WAIT):
            try:
                got = self.lines.get(timeout=1.0)
            except queue.Empty:
                continue
            if got is _EOF:
                return None
            print(got, file=out, flush=True)
            if is_final(got):
                return got
        return None

    def batch(self, stdin: TextIO, out: TextIO) -> int:
        """Piped input: one command per line, each waiting for its final line."""
        status = 0
        for raw in stdin:
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            final = self.command(line, out)
            if final is None:
                print(f"launcher console: no answer to {line!r}", file=sys.stderr)
                return 2
            if is_error(final):
                status = 1
        return status

    def interactive(self, out: TextIO, history: Path) -> int:
        """Typed input with readline history; events are printed as they arrive."""
        import readline

        with contextlib.suppress(OSError):
            readline.read_history_file(history)
        readline.set_history_length(1000)
        answered = threading.Event()
        prompting = threading.Event()
        printer = threading.Thread(target=self._print_all, args=(out, answered, prompting),
                                   name="console-printer", daemon=True)
        printer.start()
        try:
            while printer.is_alive():
                prompting.set()
                try:
                    line = input(PROMPT)
                except EOFError:
                    break
                finally:
                    prompting.clear()
                if not line.strip():
                    continue
                answered.clear()
                self.send(line)
                answered.wait(REPLY_WAIT)
        except KeyboardInterrupt:
            print(file=out)
        finally:
            with contextlib.suppress(OSError):
                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(history)
            self.close()
            printer.join(5)
        return 0

    def _print_all(self, out: TextIO, answered: threading.Event,
                   prompting: threading.Event) -> None:
        import readline

        while (line := self.lines.get()) is not _EOF:
            if prompting.is_set():
                # An event while the user types: print it above the prompt, then redraw
                # the prompt with what has been typed so far.
                out.write(f"\r\x1b[K{line}\n{PROMPT}{readline.get_line_buffer()}")
                out.flush()
            else:
                print(line, file=out, flush=True)
            if is_final(line):
                answered.set()
        if not self._stop.is_set():
            print("launcher console: the port went away", file=out, flush=True)
        answered.set()
