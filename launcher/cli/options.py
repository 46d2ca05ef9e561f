"""What the verbs' command lines share: whole-number and HOST:PORT options, and help pages with a
description, examples and the exit status (README.md, "Exit status", is the one rule).

Nothing here costs start-up time: argparse formats a help page only when it is printed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import NoReturn


def whole_number(lo: int | None = None) -> Callable[[str], int]:
    """An option's type: a whole number, at least ``lo``; every verb words a bad one alike."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, not {value}")
        return value

    return parse


def host_port(text: str) -> tuple[str, int]:
    """An option's type: HOST:PORT (an IPv6 host in brackets, ``[::1]:8080``); port 0 is
    a free port, chosen when the socket opens."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"not HOST:PORT (a port 0..65535): {text!r}")
    return host, int(port)


class Parser(argparse.ArgumentParser):
    """A parser whose bad option is one line naming the verb and the option (README.md's
    rule), not the 7-line usage: ``launcher play: error: unrecognized arguments: --bogus``.
    Its verbs' parsers are of this class too (argparse makes them of the parent's)."""

    def error(self, message: str) -> NoReturn:
        hint = f" (`{self.prog} --help` says what it takes)" if "unrecognized" in message else ""
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, but options no parser knows are reported by the verb they
        followed (argparse leaves them to the top-level parser)."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            _deepest(self, parsed).error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def _deepest(parser: argparse.ArgumentParser,
             parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the innermost verb ``parsed`` names (``launcher config check``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
            if chosen is not None:
                return _deepest(chosen, parsed)
    return parser


class HelpFormatter(argparse.HelpFormatter):
    """Paragraphs filled to the terminal's width; a paragraph with an indented line (the
    examples) kept line for line; a path or an option never broken at its hyphen."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        blocks = []
        for block in text.split("\n\n"):
            if any(line.startswith(" ") for line in block.splitlines()):
                blocks.append("\n".join(indent + line for line in block.splitlines()))
            else:
                blocks.append(textwrap.fill(" ".join(block.split()), width,
                                            initial_indent=indent, subsequent_indent=indent,
                                            break_on_hyphens=False))
        return "\n\n".join(blocks)

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def verb(subparsers: argparse._SubParsersAction, name: str, *, help: str, description: str,
         examples: Sequence[str] = (), exit_status: str = "") -> argparse.ArgumentParser:
    """A verb's parser: its one-line ``help`` (in ``launcher --help``), a ``description``,
    ``examples`` (command lines, a ``# comment`` after each if it helps) and what its exit
    status means."""
    epilog = []
    if examples:
        epilog.append("examples:\n" + "\n".join(f"  {line}" for line in examples))
    if exit_status:
        epilog.append(f"exit status: {exit_status}")
    return subparsers.add_parser(name, help=help, description=description,
                                 epilog="\n\n".join(epilog) or None,
                                 formatter_class=HelpFormatter)
