"""The console's command registry: commands by exact words, their arguments and replies.

Each group of commands is registered next to the code it drives, as Klipper's
``register_command`` does (docs/console.md, "In code", lists where): the console only
wires them. A line's words name a command exactly (no prefixes, no case folding);
argument helpers raise ``CommandError``, a user error answered as ``error <code>
<message>``; a handler returns the ``ok`` data, or a ``Reply`` with rows, which go out as
text (``// row`` lines, then ``ok k=v ...``) or as one JSON object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from launcher.core.errors import LauncherError

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

_INT = re.compile(r"-?[0-9]+")
_WORD = re.compile(r"\S+")


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
    # What a sim-only command answers on a real board, (code, message), when it is more
    # than "needs the simulated launcher".
    elsewhere: tuple[str, str] | None = None

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
            raise CommandError(E_VALUE, f"{name} must be a whole number, not {quote(text)}")
        value = int(text)
        if value < lo or (hi is not None and value > hi):
            span = f"at least {lo}" if hi is None else f"within {lo}..{hi}"
            raise CommandError(E_VALUE, f"{name} must be {span}, not {value}")
        return value

    def choice(self, i: int, name: str, choices: tuple[str, ...]) -> str:
        text = self.words[i]
        if text not in choices:
            raise CommandError(E_VALUE, f"{name} must be one of {', '.join(choices)}; "
                                        f"not {quote(text)}")
        return text

    def rest(self, i: int, end: int | None = None) -> str:
        """The raw text from word ``i`` up to word ``end`` (default: the end of the line)."""
        stop = len(self._line) if end is None or end >= len(self) else self._spans[end][0]
        return self._line[self._spans[i][0]:stop].strip()


class Registry:
    """Commands by exact name; two-word commands are grouped under their first word.

    ``help`` is the registry's own command. It lists the commands in ``order`` (first
    words; a group's subcommands in the order they were registered), then any command
    whose first word ``order`` does not name, in the order they were registered.
    """

    def __init__(self, order: Sequence[str] = ()) -> None:
        self._specs: dict[str, Spec] = {}
        self._groups: dict[str, list[str]] = {}
        self._rank = {word: i for i, word in enumerate(order)}
        self.register("help", "[COMMAND]", "list the commands, or show one command's usage",
                      self._help, max_args=2)

    def register(self, name: str, params: str, help: str, handler: Handler, *,
                 min_args: int = 0, max_args: int | None = 0, debug: bool = False,
                 sim: bool = False, elsewhere: tuple[str, str] | None = None) -> None:
        """Add a command (``name`` is one word, or two for a subcommand)."""
        self.add(Spec(name, params, help, handler, min_args, max_args, debug, sim, elsewhere))

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

    def __iter__(self) -> Iterator[Spec]:
        """Every command, in the order `help` lists them."""
        last = len(self._rank)
        return iter(sorted(self._specs.values(),
                           key=lambda s: self._rank.get(s.name.split(" ")[0], last)))

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
                raise CommandError(E_UNKNOWN, f"{first} has no subcommand {quote(words[1])} "
                                              f"(it has {subs})")
            return spec, 2
        raise CommandError(E_UNKNOWN, f"no command {quote(first)}; `help` lists them")

    def topic(self, words: list[str]) -> list[Spec]:
        """The commands `help WORDS` is about."""
        if len(words) == 1 and words[0] in self._groups:
            return [self._specs[f"{words[0]} {w}"] for w in self._groups[words[0]]]
        spec, used = self.find(words)
        if used != len(words):
            raise CommandError(E_UNKNOWN, f"no command {quote(' '.join(words))}")
        return [spec]

    def dispatch(self, text: str, gate: Callable[[Spec], None]) -> Reply:
        """Run the command that the line ``text`` names. ``gate`` may refuse it (by raising
        ``CommandError``) once it is found, before its arguments are counted."""
        spans = [mt.span() for mt in _WORD.finditer(text)]
        if not spans:
            return Reply()
        spec, used = self.find([text[a:b] for a, b in spans])
        gate(spec)
        args = Args(spec, text, spans[used:])
        n = len(args)
        if n < spec.min_args or (spec.max_args is not None and n > spec.max_args):
            raise CommandError(E_USAGE, f"expected: {spec.usage}")
        result = spec.handler(args)
        return result if isinstance(result, Reply) else Reply(dict(result or {}))

    def _help(self, a: Args) -> Reply:
        specs = self.topic(a.words) if a.words else list(self)

        def row(s: Spec) -> dict[str, Any]:
            return {"command": s.usage, "help": s.help, "debug": s.debug, "sim": s.sim}

        width = max(len(s.usage) for s in specs)

        def line(r: dict[str, Any]) -> str:
            tags = "".join(f" ({t})" for t in ("debug", "sim") if r[t])
            return f"{r['command']:<{width}}  {r['help']}{tags}"

        return Reply({"commands": len(specs)}, [row(s) for s in specs], "commands", line)


# --- the lines: text or JSON -------------------------------------------------------------


def quote(word: str, limit: int = 40) -> str:
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


def json_line(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=str)


def on_off(flag: bool) -> str:
    return "on" if flag else "off"


def reply_lines(reply: Reply, as_json: bool) -> list[str]:
    """A reply as it goes out: one JSON object, or its rows as ``//`` lines and ``ok ...``."""
    if as_json:
        obj: dict[str, Any] = {"ok": True, "data": reply.data}
        if reply.rows:
            obj[reply.rows_key] = reply.rows
        return [json_line(obj)]
    show = reply.row_text or text_fields
    fields = text_fields(reply.data)
    return [f"// {show(row)}" for row in reply.rows] + [f"ok {fields}" if fields else "ok"]


def error_line(code: str, message: str, as_json: bool) -> str:
    if as_json:
        return json_line({"ok": False, "error": code, "message": message})
    return f"error {code} {message}"


def event_line(kind: str, data: Mapping[str, Any], t: float, as_json: bool) -> str:
    """An asynchronous event at reactor time ``t``, as a session shows it."""
    if as_json:
        return json_line({"event": kind, "t": round(t, 3), "data": dict(data)})
    fields = text_fields(data)
    return printable(f"# event {kind} {fields}" if fields else f"# event {kind}")
