"""`launcher console PORT`: a small serial client, with line history, for the launcher's console."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

import serial

from launcher.firmware.transport import BAUD, READ_TIMEOUT, LineFramer

HISTORY = "console-history"  # in the user's state folder (launcher.firmware.places)
HISTORY_SHOWN = f"$XDG_STATE_HOME/launcher/{HISTORY}, else ~/.local/state/launcher/{HISTORY}"
REPLY_WAIT = 10.0  # seconds of silence after which a command's final line is given up
NOTICE = 2.0  # seconds of silence after which the client says it is still waiting
MAX_WAIT = 600.0  # the longest `wait S` line
WAIT_USAGE = "usage: wait S, with S from 0 to 600 seconds"
PROMPT = "launcher> "

_EOF = None  # put on the line queue when the port goes away
GONE = "launcher console: the port went away"


class _Gone(Exception):
    """Ends the prompt when the port has gone."""


HELP_TEXT = """\
Piped or redirected input (a script) is one command per line, each sent when the one
before has answered. A line `wait S` is the client's own: it sends nothing and lets S
seconds (0 to 600) pass, printing what arrives meanwhile, so a script can space its
presses (`press`, `wait 0.5`, `press`).

Typed input has history (Up, Ctrl-R) and Tab completion. Ctrl-C drops the line being
typed (a fresh prompt, as in a shell) or stops waiting for an answer; at an empty prompt it
quits with status 130, as a shell's Ctrl-C ends a program. Ctrl-D at an empty prompt quits
with status 0. `wait S` works here too.

Exit status: 0 every command answered ok, 1 some command answered error (or a bad `wait`),
2 no launcher (the port cannot be opened or is in use, or nothing answered), 130 Ctrl-C.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "console", help="talk to a launcher's serial console",
        description="Open the launcher's serial console, wait for it to answer, then send\n"
                    "commands typed (with history) or piped in; replies and events are printed.",
        epilog=HELP_TEXT, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("port", metavar="PORT",
                   help="serial device or pyserial URL: /dev/ttyUSB0, /dev/ttyACM0, the pty "
                        "`launcher run --simulated` prints, socket://host:port, ...")
    p.add_argument("--baud", type=int, default=BAUD, help=f"bits per second (default {BAUD})")
    p.add_argument("--wait", type=_whole_seconds, default=10, metavar="S",
                   help="seconds to wait for the launcher to answer, 1 to 3600 (default 10)")
    p.add_argument("--reply-wait", type=_seconds, default=REPLY_WAIT, metavar="S",
                   help="give up on a reply after S seconds in which nothing arrived "
                        f"(default {REPLY_WAIT:g})")
    p.add_argument("--history", type=Path, default=None,
                   help=f"line history file (default {HISTORY_SHOWN})")
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be above 0 and at most 3600 seconds")
    return value


def _whole_seconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of seconds: {text!r}") from None
    if not 1 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be 1 to 3600 seconds, not {value}")
    return value


def run(args: argparse.Namespace) -> int:
    try:
        port = serial.serial_for_url(args.port, baudrate=args.baud, timeout=READ_TIMEOUT,
                                     write_timeout=2, exclusive=True)
    except (serial.SerialException, ValueError, OSError) as exc:
        print(f"launcher console: {cannot_open(args.port, exc)}", file=sys.stderr)
        return 2
    client = Client(port, reply_wait=getattr(args, "reply_wait", REPLY_WAIT))
    client.start()

    def still_waiting() -> None:
        print(f"launcher console: waiting for the launcher to answer on {args.port} "
              f"(giving up after {args.wait}s) ...", file=sys.stderr, flush=True)

    try:
        hello = client.connect(args.wait, still_waiting)
        if hello is None:
            print(f"launcher console: no answer on {args.port} within {args.wait}s "
                  "(is the firmware running, and is the baud rate right?)", file=sys.stderr)
            return 2
        if not client.fresh():
            print(GONE, file=sys.stderr)
            return 2
        if sys.stdin.isatty():
            print(hello, flush=True)  # who answered, for the person at the prompt
            return client.interactive(sys.stdout, history_path(args.history))
        return client.batch(sys.stdin, sys.stdout)
    finally:
        client.close()


def history_path(given: Path | None) -> Path:
    """The line history file: ``given`` (``--history``), else in the user's state folder,
    where `launcher play` keeps its state (``$XDG_STATE_HOME/launcher``)."""
    from launcher.firmware.places import user_state_folder

    return given.expanduser() if given is not None else user_state_folder() / HISTORY


def cannot_open(port: str, exc: BaseException) -> str:
    """Why ``port`` cannot be opened, in one line; a port in use names who holds it."""
    code = getattr(exc, "errno", None)
    if code not in (errno.EAGAIN, errno.EWOULDBLOCK):
        # pyserial's own text repeats the port and the errno ("could not open port X:
        # [Errno 2] No such file or directory: 'X'"): the errno's text says it once.
        return f"cannot open {port}: {os.strerror(code) if code else exc}"
    holders = port_holders(port)
    if not holders:
        return (f"{port} is in use by another program, not one of yours "
                f"(`sudo fuser -v {port}` names it); quit it and try again")
    who = ", ".join(f"pid {pid} ({command})" for pid, command in holders)
    pids = " ".join(str(pid) for pid, _ in holders)
    return f"{port} is in use by {who}; quit that program (or `kill {pids}`) and try again"


def port_holders(port: str, proc: Path = Path("/proc")) -> list[tuple[int, str]]:
    """The processes (pid, command line) that hold ``port``: those that locked it, as
    /proc/locks says, else every process with it open, as /proc/*/fd says."""
    try:
        st = os.stat(port)
    except OSError:
        return []
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids: set[int] = set()
    with contextlib.suppress(OSError):
        for row in (proc / "locks").read_text().splitlines():
            words = row.split()
            if len(words) > 5 and words[1] == "FLOCK" and words[5] == key:
                pids.add(int(words[4]))
    if not pids:
        for fd_dir in proc.glob("[0-9]*/fd"):
            with contextlib.suppress(OSError, ValueError):
                if any(_same(fd, st) for fd in fd_dir.iterdir()):
                    pids.add(int(fd_dir.parent.name))
    pids.discard(os.getpid())
    return [(pid, _command(proc / str(pid))) for pid in sorted(pids)]


def _same(fd: Path, st: os.stat_result) -> bool:
    try:
        other = fd.stat()
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _command(pid_dir: Path, width: int = 80) -> str:
    try:
        words = (pid_dir / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return "?"
    text = " ".join(w.decode("utf-8", "replace") for w in words) or "?"
    return text if len(text) <= width else text[:width - 3] + "..."


def wait_seconds(line: str) -> float | None:
    """The S of a ``wait S`` line (-1.0 if S is not 0 to 600 seconds); None: not a wait."""
    words = line.split()
    if words[:1] != ["wait"]:
        return None
    try:
        seconds = float(words[1]) if len(words) == 2 else -1.0
    except ValueError:
        return -1.0
    return seconds if 0 <= seconds <= MAX_WAIT else -1.0


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
                 clock: Callable[[], float] = time.monotonic, second: float = 1.0,
                 notice: float = NOTICE) -> None:
        self.port = port
        self.reply_wait = reply_wait
        self.second = second  # the handshake's unit of waiting (tests shorten it)
        self.notice = notice  # silence before "still waiting" is said
        # A client is a terminal program, not firmware: its waits are wall-clock seconds.
        self._clock = clock
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.gone = threading.Event()  # the port went away
        self._said_gone = False
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

    def send(self, line: str) -> bool:
        """Send one line; False if the port has gone (a write to it failed)."""
        try:
            # surrogateescape: bytes of a script that are not UTF-8 go out as they came, and
            # the console answers them as it answers any such line.
            self.port.write(line.encode("utf-8", "surrogateescape") + b"\r\n")
        except (OSError, serial.SerialException, UnicodeEncodeError):
            self.gone.set()
            return False
        return True

    def _read(self) -> None:
        framer = LineFramer(limit=1 << 20)  # the console's own lines may be long (JSON)
        try:
            while not self._stop.is_set():
                data = self.port.read(max(1, self.port.in_waiting))
                for item in framer.feed(data):
                    if isinstance(item, bytes):
                        self.lines.put(item.decode("utf-8", "replace"))
        except (OSError, serial.SerialException):
            self.gone.set()  # the port went away: the queue says so below
        self.lines.put(_EOF)

    def connect(self, wait: int, still_waiting: Callable[[], None] | None = None) -> str | None:
        """Wait for the banner; the console may have greeted long ago, then ask it to answer.
        Returns the line that answered (None: nothing within ``wait`` seconds).

        Bytes sent before the firmware opened its port are lost, so nothing is sent before
        the first second has passed in silence, and the question is repeated every second;
        ``still_waiting`` is called once the first question has gone a second unanswered.
        What arrives before the answer (old events) is not printed: it was not asked for.
        """
        for second in range(max(1, wait)):
            try:
                line = self.lines.get(timeout=self.second)
            except queue.Empty:
                if second == 1 and still_waiting is not None:
                    still_waiting()
                self.send("version")
                continue
            if line is _EOF:
                return None
            if line.startswith("# launcher ") or is_final(line):
                return line
        return None

    def fresh(self) -> bool:
        """Ask for a fresh session (text mode, debug off) and wait for it; False: port gone.

        Over a bare UART the firmware cannot tell this client from the one before, which
        may have left debug or JSON mode on. Answers to the handshake's repeated
        ``version`` and events come before this answer: none is printed. A firmware
        without ``session new`` answers ``error unknown``, which is as good.
        """
        if not self.send("session new"):
            return False
        deadline = self._clock() + self.reply_wait
        while (left := deadline - self._clock()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is _EOF:
                return False
            if line.startswith(("ok session=", "error ")):
                break
        return True

    def command(self, line: str, out: TextIO,
                still_waiting: Callable[[str], None] | None = None) -> str | None:
        """Send one line; print what comes back up to its final line (None: no answer).

        The wait is measured in seconds, and it starts again with every line that arrives:
        a long reply (``help``, ``log 200``, ``selftest``) is read to its end however many
        lines it has, and a launcher that falls silent is given up after ``reply_wait``.
        ``still_waiting(line)`` is called once if nothing has come for ``notice`` seconds.
        """
        if not self.send(line):
            return None
        noticed = still_waiting is None or self.reply_wait <= self.notice
        deadline = self._clock() + self.reply_wait
        while (left := deadline - self._clock()) > 0:
            try:
                got = self.lines.get(timeout=left if noticed else min(left, self.notice))
            except queue.Empty:
                if not noticed:
                    noticed = True
                    still_waiting(line)  # type: ignore[misc]
                continue
            if got is _EOF:
                return None
            print(got, file=out, flush=True)
            if is_final(got):
                return got
            deadline = self._clock() + self.reply_wait
        return None

    def pause(self, seconds: float, out: TextIO) -> bool:
        """A script's ``wait S``: S seconds pass, what arrives is printed. False: port gone."""
        deadline = self._clock() + seconds
        while (left := deadline - self._clock()) > 0:
            try:
                got = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if got is _EOF:
                return False
            print(got, file=out, flush=True)
        return True

    def batch(self, stdin: TextIO, out: TextIO) -> int:
        """Piped input: one command per line, each waiting for its final line."""
        status = 0

        def still_waiting(line: str) -> None:
            print(f"launcher console: no answer to {line!r} yet; waiting up to "
                  f"{self.reply_wait:g}s", file=sys.stderr, flush=True)

        for number, raw in enumerate(stdin, 1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            seconds = wait_seconds(line)
            if seconds is not None:
                if seconds < 0:
                    print(f"launcher console: line {number}: {WAIT_USAGE}", file=sys.stderr)
                    status = 1
                elif not self.pause(seconds, out):
                    print(GONE, file=sys.stderr)
                    return 2
                continue
            final = self.command(line, out, still_waiting)
            if final is None:
                print(GONE if self.gone.is_set() else
                      f"launcher console: no answer to {line!r}", file=sys.stderr)
                return 2
            if is_error(final):
                status = 1
        return status

    def interactive(self, out: TextIO, history: Path) -> int:
        """Typed input with history and completion; events are printed as they arrive.

        prompt_toolkit (the ``tui`` extra) gives history search (Ctrl-R, and Up after a
        prefix) and Tab completion of the launcher's own command list; without it the
        client falls back to readline's plain history. Ctrl-C drops a typed line, and at
        an empty prompt quits with 130; Ctrl-D at an empty prompt quits with 0.
        """
        try:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.completion import NestedCompleter
            from prompt_toolkit.history import FileHistory
            from prompt_toolkit.key_binding import KeyBindings
            from prompt_toolkit.patch_stdout import patch_stdout
        except ImportError:
            return self._interactive_readline(out, history)
        sink = _Collect()
        self.command("help", sink)  # quietly: the command list for completion
        tree = completion_tree(sink.lines)
        with contextlib.suppress(OSError):
            history.parent.mkdir(parents=True, exist_ok=True)
        keys = KeyBindings()

        @keys.add("c-c")
        def _interrupt(event: Any) -> None:
            if event.app.current_buffer.text:
                event.app.exit(result="")  # a line half typed: left as it was, a new prompt
            else:
                event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

        session: Any = PromptSession(
            history=FileHistory(str(history)),
            completer=NestedCompleter.from_nested_dict(tree) if tree else None,
            enable_history_search=True, complete_while_typing=False, key_bindings=keys)

        def end_if_gone() -> None:  # in the prompt's loop, from its start on
            app = session.app
            if self.gone.is_set() and app.future is not None and not app.future.done():
                app.exit(exception=_Gone())

        def gone() -> None:  # from the printer thread; a prompt that starts later checks
            loop = session.app.loop
            if loop is not None:
                loop.call_soon_threadsafe(end_if_gone)

        # While the prompt runs, a print from the printer thread lands above it (the proxy's
        # thread writes it there). The proxy is closed once the line is typed, and closing
        # writes all it still holds: an answer, printed before the next prompt is drawn, is on
        # the screen before it. (One proxy for the whole session wrote a late answer over a
        # prompt just drawn, without drawing it again, on a busy machine.) The lock keeps a
        # print from starting on a proxy that is being closed, which would lose it.
        printing = threading.Lock()

        def write(text: str) -> None:
            with printing:
                print(text, flush=True)

        def ask() -> str:
            with contextlib.ExitStack() as proxy:
                with printing:
                    proxy.enter_context(patch_stdout(raw=True))
                try:
                    return session.prompt(PROMPT, pre_run=end_if_gone)
                finally:
                    with printing:
                        proxy.close()

        return self._prompt_loop(ask, write, gone)

    def _interactive_readline(self, out: TextIO, history: Path) -> int:
        """The fallback without prompt_toolkit: readline history, no completion."""
        import readline

        with contextlib.suppress(OSError):
            readline.read_history_file(history)
        readline.set_history_length(1000)
        prompting = threading.Event()

        def write(line: str) -> None:
            if prompting.is_set():
                # An event while the user types: print it above the prompt, then redraw
                # the prompt with what has been typed so far.
                out.write(f"\r\x1b[K{line}\n{PROMPT}{readline.get_line_buffer()}")
                out.flush()
            else:
                print(line, file=out, flush=True)

        typed = [""]  # the line as Ctrl-C found it (readline empties it before input returns)

        def interrupted(signum: int, frame: object) -> None:
            if self.gone.is_set():
                raise _Gone
            typed[0] = readline.get_line_buffer()
            raise KeyboardInterrupt

        def gone() -> None:  # from the printer thread: the SIGINT handler ends input()
            if prompting.is_set():
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

        def ask() -> str:
            prompting.set()
            typed[0] = ""
            previous = signal.signal(signal.SIGINT, interrupted)
            try:
                return input(PROMPT)
            except KeyboardInterrupt:
                if not typed[0]:
                    raise
                print(file=out)
                return ""  # a line half typed: start again
            finally:
                signal.signal(signal.SIGINT, previous)
                prompting.clear()

        try:
            return self._prompt_loop(ask, write, gone)
        finally:
            with contextlib.suppress(OSError):
                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(history)

    def _prompt_loop(self, ask: Callable[[], str], write: Callable[[str], None],
                     gone: Callable[[], None]) -> int:
        """Prompt, send, wait for the answer, again; a thread prints what arrives meanwhile.

        ``ask`` raises KeyboardInterrupt for a Ctrl-C at an empty prompt (quit, 130) and
        EOFError for Ctrl-D (quit, 0). When the port goes away the printer says so once and
        calls ``gone``, which ends the prompt (``_Gone``): the client quits with 2.
        """
        answered = threading.Event()
        printer = threading.Thread(target=self._print_all, args=(write, answered, gone),
                                   name="console-printer", daemon=True)
        printer.start()
        status = 0
        try:
            while not self.gone.is_set():
                try:
                    line = ask()
                except EOFError:
                    break
                except (KeyboardInterrupt, _Gone):
                    status = 130  # 2 instead, below, if the port has gone
                    break
                try:
                    self._answer(line, answered, write)
                except (KeyboardInterrupt, _Gone):
                    if not self.gone.is_set():
                        write("launcher console: stopped waiting")  # Ctrl-C: a new prompt
        finally:
            self.close()
            printer.join(5)
        if self.gone.is_set():
            if not self._said_gone:
                write(GONE)  # a write failed before the reader saw the port go
            return 2
        return status

    def _answer(self, line: str, answered: threading.Event,
                write: Callable[[str], None]) -> None:
        """Send a typed line (or let a ``wait S`` pass) and wait for its answer."""
        if not line.strip():
            return
        seconds = wait_seconds(line)
        if seconds is not None:
            if seconds < 0:
                write(f"launcher console: {WAIT_USAGE}")
            else:
                self._stop.wait(seconds)  # the printer thread prints what arrives meanwhile
            return
        answered.clear()
        if not self.send(line):
            return
        first = min(self.notice, self.reply_wait)
        if answered.wait(first):
            return
        if self.reply_wait > first:
            write(f"launcher console: no answer yet; waiting up to {self.reply_wait:g}s "
                  "(Ctrl-C stops waiting)")
            if answered.wait(self.reply_wait - first):
                return
        write(f"launcher console: no answer to {line!r} within {self.reply_wait:g}s "
              "(is the launcher busy, or gone?)")

    def _print_all(self, write: Callable[[str], None], answered: threading.Event,
                   gone: Callable[[], None]) -> None:
        while (line := self.lines.get()) is not _EOF:
            write(line)
            if is_final(line):
                answered.set()
        if not self._stop.is_set():
            self.gone.set()
            self._said_gone = True
            write(GONE)
            gone()
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
