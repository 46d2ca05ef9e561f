"""The play screen at 80x24 and 120x40: title, side, state and cards always stay on screen."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest

from launcher.cli.play import Playground
from launcher.cli.play_screen import (
    TITLE,
    Snapshot,
    cards_text,
    export,
    render_plain,
    shot_text,
    snapshot,
)
from launcher.sim.rig import SimRig

SIZES = [(80, 24), (120, 40)]
EVENTS = [f"# event press side=mild level={i % 6 + 1} n={i}" for i in range(200)]
WARNING = "audio: no sound device found; cues are silent"


@pytest.fixture(scope="module")
def jammed() -> Snapshot:
    """A unit that jammed mid-shot: one card is neither in the cartridge nor out."""
    rig = SimRig(seed=4)
    try:
        rig.load([f"card {i}" for i in range(84)])
        rig.sim.jam()
        while rig.state != "fault":
            rig.press()
        return snapshot(rig.app, rig.sim, seed=4, last_shot=shot_text({"cards": 1,
                                                                       "side": "mild"}),
                        events=EVENTS, warnings=[WARNING])
    finally:
        rig.close()


def _check(lines: list[str], width: int, height: int) -> None:
    assert len(lines) <= height
    assert all(len(line) <= width for line in lines)
    text = "\n".join(lines)
    assert "SIMULATED" in lines[0]
    assert any("side" in x and "MILD" in x and "state" in x and "fault" in x for x in lines)
    assert any("cards" in x and "84 (cartridge 83 + 1 jammed)" in x for x in lines)
    assert any("last shot" in x and "1 card (mild)" in x for x in lines)
    assert EVENTS[-1] in text  # the newest event is shown...
    assert EVENTS[0] not in text  # ...and the list gives way, not the status
    assert WARNING in text


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_rich_screen_fits_and_keeps_the_status(jammed: Snapshot, width: int, height: int):
    pytest.importorskip("rich")
    lines = export(jammed, width, height).rstrip("\n").split("\n")
    assert len(lines) == height
    _check([x.rstrip() for x in lines], width, height)
    shown = sum(1 for x in lines if "# event press" in x)
    # 1 title, 5 status rows in a box of 2 borders, 2 key rows, 2 borders round the events
    # and 1 footer: the events get every other row, so a bigger screen shows more of them.
    assert shown == height - 13


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_plain_screen_fits_and_keeps_the_status(jammed: Snapshot, width: int, height: int):
    lines = render_plain(jammed, width, height)
    _check(lines, width, height)
    assert lines[0] == TITLE


def test_counts_read_as_words():
    assert shot_text({"cards": 1, "side": "mild"}) == "1 card (mild)"
    assert shot_text({"cards": 7, "side": "wild"}) == "7 cards (wild)"
    assert cards_text(84, 84, False) == "84"
    assert cards_text(84, 83, True) == "84 (cartridge 83 + 1 jammed)"
    assert cards_text("unknown", 10, False) == "unknown (cartridge 10)"


@pytest.mark.parametrize("live", [True, False])
def test_a_warning_waits_for_the_screen_when_live(settings, tmp_path, capsys, live):
    quiet = replace(settings, state_path=tmp_path / "s.json",
                    audio=replace(settings.audio, backend="null"))
    play = Playground(quiet, 1, None, io.StringIO(),
                      live=live)
    try:
        play._warn(WARNING)
        assert play.warnings == [WARNING]
        assert capsys.readouterr().err == ("" if live else f"warning: {WARNING}\n")
        assert play.snapshot().warnings == [WARNING]
    finally:
        play.app.stop()
        play.app.board.close()


@pytest.mark.parametrize("typing", ["", "luck sh"])
def test_an_empty_footer_is_blank_and_typing_shows_there(jammed: Snapshot, typing: str):
    pytest.importorskip("rich")
    quiet = replace(jammed, warnings=[], typing=typing)
    lines = export(quiet, 80, 24).rstrip("\n").split("\n")
    assert len(lines) == 24
    assert lines[-1].rstrip() == (f":{typing}" if typing else "")
    assert not any("80 x 1" in x for x in lines)  # rich's placeholder for an empty region
