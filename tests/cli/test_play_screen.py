"""The play screen at 80x24 and 120x40: title, side, state and cards always stay on screen.

(tests/cli/test_play_terminal.py drives the real program in a terminal of those sizes.)"""

from __future__ import annotations

import io
from dataclasses import replace

import pytest

from launcher.cli.play import Playground
from launcher.cli.play_screen import (
    FAULT_WAY_OUT,
    Snapshot,
    cards_text,
    event_rows,
    export,
    fits,
    pane_rows,
    rotator_text,
    shot_text,
    snapshot,
    way_out,
)
from launcher.core import machine as m
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
                        events=EVENTS, warnings=[WARNING], last_cue="jam")
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
    assert any("LED" in x and "2 blinks, pause: fault jam" in x for x in lines)
    assert any("rotator" in x and "still" in x and "last cue" in x and "jam" in x
               for x in lines)
    assert any("way out" in x and FAULT_WAY_OUT["jam"] in x for x in lines)
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
    # 1 title, 8 status rows in a box of 2 borders, 2 key rows, 2 borders round the events
    # and 1 footer: the events get every other row, so a bigger screen shows more of them.
    assert shown == height - 16 == event_rows(height)


@pytest.mark.parametrize("code", sorted(m.FAULT_BLINKS))
def test_every_fault_has_a_way_out_that_shows_whole_at_80_columns(jammed: Snapshot, code):
    pytest.importorskip("rich")
    assert code in FAULT_WAY_OUT
    s = replace(jammed, fault=code, led=m.led_meaning(m.FAULT_BLINKS[code]))
    text = export(s, 80, 24)
    assert f"way out     {FAULT_WAY_OUT[code]}" in text
    assert f"{m.FAULT_BLINKS[code]} blinks, pause: fault {code}" in text
    assert way_out("none") == "-"


@pytest.mark.parametrize("pattern", [*m.LED_SHOWS, *sorted(m.FAULT_OF_BLINKS)])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_what_the_led_means_shows_whole_at_any_width(jammed: Snapshot, pattern, width, height):
    """`fast blink: busy, ... (a shot, a turn, the lid open)` is longer than the 64 columns an
    80-column screen leaves it: it takes a second line (the event list gives one up)."""
    pytest.importorskip("rich")
    meaning = m.led_meaning(pattern)
    lines = export(replace(jammed, led=meaning), width, height).rstrip("\n").split("\n")
    assert len(lines) == height and all(len(x.rstrip()) <= width for x in lines)
    assert "SIMULATED" in lines[0] and any("cards" in x and "84 (cartridge" in x for x in lines)
    start = next(i for i, x in enumerate(lines) if x.startswith("│ LED "))
    end = next(i for i, x in enumerate(lines) if x.startswith("│ way out "))
    shown = " ".join(x[len("│ LED "):].strip(" │") for x in lines[start:end])
    assert " ".join(shown.split()) == meaning
    assert "…" not in "\n".join(lines[:end])
    rows = sum(1 for x in lines if "# event press" in x)
    assert rows == event_rows(height, 1 + 6 + (end - start) + 1 + 2 + 2)


def test_a_long_line_wraps_in_the_event_list_and_a_longer_reply_does_not_fit():
    pytest.importorskip("rich")
    status = "ok " + " ".join(f"key{i}=value{i}" for i in range(15))  # 200 columns
    assert fits([status], 80, 24) and fits([status], 120, 40)
    s = Snapshot(seed=1, side="mild", state="ready", escalation=0, cards="84",
                 last_shot="none yet", sleep_in="-", motor="off", lid="closed",
                 fault="none", events=[status])
    text = export(s, 80, 24)
    assert "key14=value14" in text and "…" not in text.split("events")[1]
    assert not fits([f"// row {i}" for i in range(event_rows(24) + 1)], 80, 24)
    assert fits([f"// row {i}" for i in range(event_rows(40))], 120, 40)


def test_the_pane_drops_the_wire_prefix_and_wraps_a_help_row_under_its_own_text():
    text = "every configured pin's level: outputs (PWM as its duty), inputs raw (1 high, 0 low)"
    line = "// " + "pins".ljust(40) + text
    rows = pane_rows(line, 77)
    assert rows[0].startswith("pins    ") and not any("//" in r for r in rows)
    assert len(rows) == 3 and all(len(r) <= 77 for r in rows)
    assert all(r.startswith(" " * 40) and r[40] != " " for r in rows[1:])  # under the text
    assert " ".join(r[40:] for r in rows) == text
    # A line of one column wraps as the event list does.
    assert pane_rows("# event " + "x " * 60, 40)[1].startswith("    x")


def test_the_rotator_row_says_a_turn_waits():
    assert rotator_text("idle", False) == "still"
    assert rotator_text("idle", True) == "still, turn waiting"
    assert rotator_text("run", False) == "turning"


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


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_without_the_tui_extra_gets_the_line_mode(settings, tmp_path, monkeypatch,
                                                             capsys):
    from launcher.cli import play as play_module

    monkeypatch.setattr(play_module, "_live_screen", lambda: None)  # as without the extra
    monkeypatch.setenv("TERM", "xterm-256color")
    quiet = replace(settings, state_path=tmp_path / "s.json",
                    audio=replace(settings.audio, backend="null"))
    out = _Tty()
    assert play_module.run_play(quiet, 1, stdin=_Tty("status\n"), stdout=out) == 0
    assert "the live screen needs the tui extra" in capsys.readouterr().err
    assert "\nok state=ready side=mild " in out.getvalue()
