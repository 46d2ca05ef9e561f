"""Every verb's `--help` tells the truth: a description, examples that parse, and what its
exit status means, in the words of README.md's one rule."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from launcher.cli.main import build_parser

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _verbs(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
           ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser``, with the words that reach it (`config check`)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append(((*prefix, name), child))
                found += _verbs(child, (*prefix, name))
    return found


VERBS = _verbs(build_parser())
# The console's help is the console client's own (its exit status in words of its own); the
# rest come from launcher.cli.options.verb. A group's verbs say their own exit status.
OWN_WORDS = {("console",)}
GROUPS = {("config",), ("sounds",), ("web",)}
IDS = [" ".join(w) for w, _ in VERBS]


def _examples(parser: argparse.ArgumentParser) -> list[str]:
    text = parser.format_help()
    block = text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in block.splitlines()]


@pytest.mark.parametrize(("words", "parser"), VERBS, ids=IDS)
def test_every_verb_has_a_description_examples_and_its_exit_status(words, parser):
    text = parser.format_help()
    assert parser.description and len(parser.description) > 40, words
    if words in OWN_WORDS:
        return
    assert "\nexamples:\n  " in text, words
    if words not in GROUPS:
        assert "\nexit status: 0" in text, words


@pytest.mark.parametrize(("words", "parser"), VERBS, ids=IDS)
def test_every_example_is_a_command_line_the_parser_takes(words, parser):
    if words in OWN_WORDS:
        return
    launched = 0
    for example in _examples(parser):
        # The launcher's part of the line: no comment, no pipe before it, no redirection.
        command = re.sub(r"\s+#.*$", "", example).split("|")[-1].split(">")[0]
        argv = shlex.split(command)
        if argv[0] == "sudo":
            argv = argv[1:]
        if not argv[0].endswith("launcher"):
            continue  # `sudo systemctl stop launcher`: a step beside the command
        build_parser().parse_args(argv[1:])  # a SystemExit here is an example that is wrong
        assert tuple(argv[1:1 + len(words)]) == words, example
        launched += 1
    assert launched, words


def test_the_exit_status_lines_use_the_codes_of_the_readmes_rule():
    rule = README.split("\n## Exit status\n", 1)[1].split("\n## ", 1)[0]
    codes = set(re.findall(r"^\| (\d+) \|", rule, re.M))
    assert {"0", "1", "2", "75", "130", "141", "143"} <= codes
    for words, parser in VERBS:
        said = " ".join(parser.format_help().partition("\nexit status: ")[2].split())
        for code in re.findall(r"(?:^|, )(\d+)\b", said):
            assert code in codes, (words, code)


def test_sounds_play_offers_no_test_double_and_says_what_each_backend_does():
    parser = dict(VERBS)[("sounds", "play")]
    text = " ".join(parser.format_help().split())
    assert "recording" not in text
    for backend in ("auto", "simpleaudio", "aplay", "null"):
        assert backend in text
    assert "checks the pack and the amplifier pin" in text
    sheet = " ".join(dict(VERBS)[("sounds", "sheet")].format_help().split())
    assert "(default: ./sounds-sheet.png)" in sheet
