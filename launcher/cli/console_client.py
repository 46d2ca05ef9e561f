"""`launcher console PORT`: a small serial client, with line history, for the launcher's console."""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

import serial

from launcher.firmware.transport import BAUD, READ_TIMEOUT, LineFramer

HISTORY = Path("~/.launcher_console_history")
REPLY_WAIT = 10.0  # seconds of silence after which a command's final line is given up
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
    p.add_argument("--reply-wait", type=_seconds, default=REPLY_WAIT, metavar="S",
                   help="give up on a reply after S seconds in which nothing arrived "
                        f"(default {REPLY_WAIT:g})")
    p.add_argument("--history", type=Path, default=HISTORY,
                   help=f"line history file (default {HISTORY})")
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be above 0 and at most 3600 seconds")
    return value


def run(args: argparse.Namespace) -> int:
    try:
        port = serial.serial_for_url(args.port, baudrate=args.baud, timeout=READ_TIMEOUT,
                                     write_timeout=2, exclusive=True)
    except (serial.SerialException, ValueError, OSError) as exc:
        print(f"launcher console: cannot open {args.port}: {exc}", file=sys.stderr)
        return 2
    client = Client(port, reply_wait=getattr(args, "reply_wait", REPLY_WAIT))
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

    def __init__(self, port: Any, reply_wait: float = REPLY_WAIT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.port = port
        self.reply_wait = reply_wait
        # A client is a terminal program, not firmware: its waits are wall-clock seconds.
        self._clock = clock
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
        """Send one line; print what comes back up to its final line (None: no answer).

        The wait is measured in seconds, and it starts again with every line that arrives:
        a long reply (``help``, ``log 200``, ``selftest``) is read to its end however many
        lines it has, and a launcher that falls silent is given up after ``reply_wait``.
        """
        self.send(line)
        deadline = self._clock() + self.reply_wait
        while (left := deadline - self._clock()) > 0:
            try:
                got = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if got is _EOF:
                return None
            print(got, file=out, flush=True)
            if is_final(got):
                return got
            deadline = self._clock() + self.reply_wait
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
        """Typed input with history and completion; events are printed as they arrive.

        prompt_toolkit (the ``tui`` extra) gives history search (Ctrl-R, and Up after a
        prefix) and Tab completion of the launcher's own command list; without it the
        client falls back to readline's plain history.
        """
        try:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.completion import NestedCompleter
            from prompt_toolkit.history import FileHistory
            from prompt_toolkit.patch_stdout import patch_stdout
        except ImportError:
            return self._interactive_readline(out, history)
        sink = _Collect()
        self.command("help", sink)  # quietly: the command list for completion
        tree = completion_tree(sink.lines)
        with contextlib.suppress(OSError):
            history.parent.mkdir(parents=True, exist_ok=True)
        session: Any = PromptSession(
            history=FileHistory(str(history)),
            completer=NestedCompleter.from_nested_dict(tree) if tree else None,
            enable_history_search=True, complete_while_typing=False)
        answered = threading.Event()
        with patch_stdout(raw=True):
            # Inside patch_stdout, a print from the printer thread lands above the prompt.
            printer = threading.Thread(
                target=self._print_all,
                args=(lambda text: print(text, flush=True), answered),
                name="console-printer", daemon=True)
            printer.start()
            try:
                while printer.is_alive():
                    try:
                        line = session.prompt(PROMPT)
                    except EOFError:
                        break
                    if not line.strip():
                        continue
                    answered.clear()
                    self.send(line)
                    answered.wait(self.reply_wait)
            except KeyboardInterrupt:
                print()
            finally:
                self.close()
                printer.join(5)
        return 0

    def _interactive_readline(self, out: TextIO, history: Path) -> int:
        """The fallback without prompt_toolkit: readline history, no completion."""
        import readline

        with contextlib.suppress(OSError):
            readline.read_history_file(history)
        readline.set_history_length(1000)
        answered = threading.Event()
        prompting = threading.Event()

        def write(line: str) -> None:
            if prompting.is_set():
                # An event while the user types: print it above the prompt, then redraw
                # the prompt with what has been typed so far.
                out.write(f"\r\x1b[K{line}\n{PROMPT}{readline.get_line_buffer()}")
                out.flush()
            else:
                print(line, file=out, flush=True)

        printer = threading.Thread(target=self._print_all, args=(write, answered),
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
                answered.wait(self.reply_wait)
        except KeyboardInterrupt:
            print(file=out)
        finally:
            with contextlib.suppress(OSError):
                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(history)
            self.close()
            printer.join(5)
        return 0

    def _print_all(self, write: Callable[[str], None], answered: threading.Event) -> None:
        while (line := self.lines.get()) is not _EOF:
            write(line)
            if is_final(line):
                answered.set()
        if not self._stop.is_set():
            write("launcher console: the port went away")
        answered.set()


class _Collect:
    """A text sink that keeps the lines written to it."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.extend(line for line in text.splitlines() if line)
        return len(text)

    def flush(self) -> None:
        pass


def completion_tree(help_lines: Iterable[str]) -> dict[str, Any]:
    """The command words of a ``help`` reply as a nested dictionary for completion.

    A help row is ``// lid open|full|close   what it does``: literal words (lower case)
    nest, ``a|b`` offers each choice, and placeholders (``N``, ``[COMMAND]``) end it.
    """
    tree: dict[str, Any] = {}
    for line in help_lines:
        if not line.startswith("// "):
            continue
        usage = line[3:].split("  ", 1)[0].split()
        node = tree
        for depth, word in enumerate(usage):
            choices = word.split("|")
            if not all(c and c.islower() and c.replace("-", "").isalpha() for c in choices):
                break
            last = depth == len(usage) - 1 or len(choices) > 1
            for c in choices:
                child = node.get(c)
                node[c] = child if isinstance(child, dict) else ({} if not last else None)
            if len(choices) > 1:
                break
            child = node[choices[0]]
            if child is None:
                child = node[choices[0]] = {}
            node = child
    if tree:
        tree["help"] = {name: None for name in tree}
    return _prune(tree)


def _prune(tree: dict[str, Any]) -> dict[str, Any]:
    """Empty sub-tables become None (nothing to complete after that word)."""
    return {k: (_prune(v) or None) if isinstance(v, dict) else None for k, v in tree.items()}
