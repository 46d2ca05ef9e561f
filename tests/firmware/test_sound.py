"""The cue player: escalation cues, cut-off rules, amplifier timing, sleep; pack loading; CLI."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hal.audio import NullSpeaker, RecordingSpeaker
from launcher.cli import main as cli
from launcher.core import cues
from launcher.core import machine as m
from launcher.core.errors import ConfigError
from launcher.core.reactor import ManualReactor
from launcher.firmware.sound import (
    AMP_TAIL,
    CuePlayer,
    build_cue_player,
    load_pack,
    pack_path,
    sounds_dir,
)
from launcher.sim.rig import SimRig

PACK = load_pack("default")
D = PACK.durations


class Amp:
    """An amplifier enable that records each change and what the speaker had played by then."""

    def __init__(self, speaker: RecordingSpeaker) -> None:
        self.speaker = speaker
        self.is_active = False
        self.changes: list[tuple[bool, int]] = []

    def on(self) -> None:
        self.is_active = True
        self.changes.append((True, len(self.speaker.played)))

    def off(self) -> None:
        self.is_active = False
        self.changes.append((False, len(self.speaker.played)))

    def close(self) -> None:
        self.off()


def make_player() -> tuple[CuePlayer, RecordingSpeaker, Amp, ManualReactor]:
    reactor = ManualReactor()
    speaker = RecordingSpeaker(clock=reactor.monotonic)
    speaker.load(PACK.files)
    amp = Amp(speaker)
    return CuePlayer(speaker, amp, reactor, D), speaker, amp, reactor


P1, P2, P6 = cues.press("mild", 1), cues.press("mild", 2), cues.press("mild", 6)
W1 = cues.press("wild", 1)
MILD_BAM, WILD_BAM = cues.bam("mild"), cues.bam("wild")


# --- escalation level -> cue ----------------------------------------------------------------


@pytest.mark.parametrize("side", cues.SIDES)
def test_escalation_level_selects_the_cue_and_deep_streaks_reuse_the_last(side):
    got = [cues.press(side, streak) for streak in range(1, 10)]
    want = [f"{side}_press_{k}" for k in (1, 2, 3, 4, 5, 6, 6, 6, 6)]
    assert got == want
    assert all(c in PACK.files for c in got)
    assert cues.bam(side) in PACK.files and cues.flip(side) in PACK.files


def rig_with_player(seed: int, side: str = "mild") -> tuple[SimRig, CuePlayer, RecordingSpeaker]:
    rig = SimRig(seed=seed, side=side)
    speaker = RecordingSpeaker(clock=rig.reactor.monotonic)
    speaker.load(PACK.files)
    player = CuePlayer(speaker, rig.sim.board.amp, rig.reactor, D)
    rig.app.cues = player  # the rig starts with a cue log; the real player takes over here
    return rig, player, speaker


@pytest.mark.parametrize("side", cues.SIDES)
def test_each_press_on_the_simulated_launcher_plays_its_escalation_cue(side):
    rig, _, speaker = rig_with_player(seed=3, side=side)
    try:
        rig.load(list(range(2000)))
        counters = rig.app.machine.memory.counters
        seen_levels = set()
        for _ in range(300):
            before = len(speaker.played)
            dry, shots = counters.get("dry", 0), counters.get("shots", 0)
            rig.press()
            rig.advance(max(D.values()) + AMP_TAIL)  # let every cue end: no drops here
            new = speaker.names[before:]
            if counters.get("dry", 0) == dry + 1:
                streak = rig.app.machine.memory.dry_streak
                assert new == [cues.press(side, streak)]
                seen_levels.add(streak)
            else:
                assert counters["shots"] == shots + 1
                assert new == [cues.bam(side)]
        max_dry = rig.settings.luck.side(side).max_dry  # the hazard curve caps the streak
        assert seen_levels == set(range(1, max_dry + 1))
        assert not rig.sim.board.amp.is_active  # every cue ended and the amp went low
    finally:
        rig.close()


# --- cut-off rules --------------------------------------------------------------------------


def test_a_press_cue_cuts_off_the_previous_press_cue():
    player, speaker, _, reactor = make_player()
    player.play(P1)
    reactor.advance(D[P1] / 2)
    player.play(P2)
    assert speaker.played == [(P1,), (P2, P1)]
    assert player.current == P2


@pytest.mark.parametrize("other", [cues.flip("mild"), cues.WAKE, cues.RELOAD, cues.FAULT,
                                   cues.LID_OPEN, cues.STARTUP])
def test_a_press_cue_cuts_off_any_cue_but_bam(other):
    player, speaker, _, reactor = make_player()
    player.play(other)
    reactor.advance(0.01)
    player.play(W1)
    assert speaker.played[-1] == (W1, other)


@pytest.mark.parametrize("bam", [MILD_BAM, WILD_BAM])
def test_a_press_cue_during_bam_is_dropped_not_delayed(bam):
    player, speaker, _, reactor = make_player()
    player.play(bam)
    reactor.advance(D[bam] - 0.001)
    player.play(P1)
    assert speaker.played == [(bam,)]
    assert player.current == bam and player.pending is None
    reactor.advance(0.001)  # BAM has run out: the dropped cue does not come back
    assert player.current is None
    reactor.advance(5)
    assert speaker.played == [(bam,)]
    player.play(P2)  # the next press after BAM is heard
    assert speaker.played == [(bam,), (P2,)]


def test_bam_cuts_off_a_press_cue():
    player, speaker, _, reactor = make_player()
    player.play(P6)
    reactor.advance(0.05)
    player.play(MILD_BAM)
    assert speaker.played[-1] == (MILD_BAM, P6)


def test_reload_waits_for_bam_to_end_then_plays():
    player, speaker, amp, reactor = make_player()
    player.play(MILD_BAM)
    reactor.advance(0.15)  # the last card left: the launcher is empty
    player.play(cues.RELOAD)
    assert player.pending == cues.RELOAD and speaker.names == [MILD_BAM]
    reactor.advance(D[MILD_BAM] - 0.15 - 0.001)
    assert speaker.names == [MILD_BAM]
    reactor.advance(0.001)
    assert speaker.played == [(MILD_BAM,), (cues.RELOAD,)]  # after BAM, not over it
    assert amp.is_active and all(on for on, _ in amp.changes)  # never low between them
    reactor.advance(D[cues.RELOAD] + AMP_TAIL)
    assert not amp.is_active


@pytest.mark.parametrize("alarm", [cues.JAM, cues.FAULT, cues.LID_OPEN])
def test_alarms_cut_off_bam_at_once_and_drop_a_waiting_reload(alarm):
    player, speaker, _, reactor = make_player()
    player.play(WILD_BAM)
    player.play(cues.RELOAD)
    reactor.advance(0.2)
    player.play(alarm)
    assert speaker.played[-1] == (alarm, WILD_BAM) and player.pending is None
    reactor.advance(10)
    assert cues.RELOAD not in speaker.names


def test_an_unknown_cue_is_an_error_and_changes_nothing():
    player, speaker, amp, _ = make_player()
    with pytest.raises(KeyError):
        player.play("mild_press_7")
    assert speaker.played == [] and amp.changes == []


# --- the amplifier --------------------------------------------------------------------------


def test_amp_goes_high_before_the_speaker_plays_and_low_after_the_cue_and_its_tail():
    player, speaker, amp, reactor = make_player()
    reactor.advance(3)
    player.play(P1)
    assert amp.changes == [(True, 0)]  # on while the speaker had played nothing yet
    assert speaker.names == [P1]
    reactor.advance(D[P1] + AMP_TAIL - 1e-6)
    assert amp.is_active
    reactor.advance(2e-6)
    assert not amp.is_active and amp.changes[-1] == (False, 1)
    assert reactor.next_waketime() == float("inf")  # nothing left polling


def test_back_to_back_cues_keep_the_amp_on_until_the_last_one_ends():
    player, _, amp, reactor = make_player()
    player.play(P1)
    reactor.advance(D[P1] + AMP_TAIL / 2)  # in the tail of the first cue
    player.play(P2)
    reactor.advance(D[P2] + AMP_TAIL - 1e-6)
    assert amp.is_active
    assert [on for on, _ in amp.changes] == [True, True]
    reactor.advance(2e-6)
    assert not amp.is_active


def test_sleep_stops_the_sound_and_keeps_the_amp_low_until_wake():
    player, speaker, amp, reactor = make_player()
    player.play(cues.flip("wild"))
    reactor.advance(0.1)
    player.sleep()
    assert speaker.stopped == [cues.flip("wild")] and not amp.is_active
    for cue in (P1, MILD_BAM, cues.FAULT):
        player.play(cue)
        reactor.advance(1)
    assert not amp.is_active and speaker.names == [cues.flip("wild")]
    player.wake()
    assert not amp.is_active  # wake alone makes no sound
    player.play(cues.WAKE)
    assert amp.is_active and speaker.names[-1] == cues.WAKE


def test_the_sleep_cue_played_just_before_sleep_is_allowed_to_finish():
    player, speaker, amp, reactor = make_player()
    player.play(cues.SLEEP)
    player.sleep()
    assert speaker.stopped == [] and amp.is_active
    player.play(P1)  # asleep: dropped
    reactor.advance(D[cues.SLEEP] + AMP_TAIL - 1e-6)
    assert amp.is_active and speaker.names == [cues.SLEEP]
    reactor.advance(2e-6)
    assert not amp.is_active


def test_the_firmware_going_to_sleep_and_waking_drives_the_amp_pin(rig):
    player = CuePlayer(NullSpeaker(), rig.sim.board.amp, rig.reactor, D)
    player.speaker.load(PACK.files)
    rig.app.cues = player
    amp_pin = rig.sim.pin(rig.settings.pins.amp_enable)
    rig.advance(rig.settings.timing.sleep_after + 0.01)
    assert rig.state == m.ASLEEP
    assert amp_pin.state == 1 and player.current == cues.SLEEP  # the sleep cue finishes
    rig.advance(D[cues.SLEEP] + AMP_TAIL)
    assert amp_pin.state == 0
    rig.advance(600)
    assert amp_pin.state == 0  # kept low while asleep
    rig.sim.press()
    rig.advance(0)
    assert rig.state == m.READY and player.current == cues.WAKE and amp_pin.state == 1


CUE_NAMES = st.sampled_from(cues.all_cues())
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("play"), CUE_NAMES),
        st.tuples(st.just("advance"), st.floats(0, 1.5)),
        st.tuples(st.just("sleep"), st.none()),
        st.tuples(st.just("wake"), st.none()),
    ),
    max_size=40,
)


@settings(max_examples=500, deadline=None)
@given(STEPS)
def test_invariants_over_any_sequence(steps):
    player, speaker, amp, reactor = make_player()
    asleep = False
    for verb, arg in steps:
        before = len(speaker.played)
        amp_before = len(amp.changes)
        if verb == "play":
            player.play(arg)
            if asleep:
                assert len(speaker.played) == before, "a cue played while asleep"
        elif verb == "advance":
            reactor.advance(arg)
        elif verb == "sleep":
            player.sleep()
            asleep = True
        else:
            player.wake()
            asleep = False
        for entry in speaker.played[before:]:
            if len(entry) == 2 and cues.is_bam(entry[1]):
                assert not cues.is_press_cue(entry[0]), f"{entry[0]} cut off BAM"
        if player.current is not None:
            assert amp.is_active, "sound without the amplifier"
        if asleep:
            assert all(not on for on, _ in amp.changes[amp_before:]), "amplifier on while asleep"
            if player.current is None and reactor.next_waketime() == float("inf"):
                assert not amp.is_active, "amplifier left on while asleep"
    reactor.advance(max(D.values()) * 2 + AMP_TAIL)
    assert not amp.is_active and player.current is None and player.pending is None


# --- packs ----------------------------------------------------------------------------------


def test_the_default_pack_has_every_cue_with_its_length():
    assert set(PACK.files) == set(cues.all_cues())
    assert PACK.root == sounds_dir() / "default"
    assert PACK.durations[cues.press("mild", 1)] == pytest.approx(0.30, abs=1e-4)
    assert pack_path("default") == sounds_dir() / "default"
    assert pack_path(str(PACK.root)) == PACK.root


def copy_pack(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    shutil.copytree(PACK.root, root)
    return root


def test_a_pack_by_absolute_path_loads(tmp_path):
    root = copy_pack(tmp_path)
    pack = load_pack(str(root))
    assert pack.files[cues.JAM] == root / "jam.wav"
    assert pack.durations == PACK.durations


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('jam = "jam.wav"\n', ""), "manifest lacks jam"),
    (lambda t: t + 'mild_press_7 = "x.wav"\n', "unknown cues mild_press_7"),
    (lambda t: t.replace('"jam.wav"', '"gone.wav"'), "cue jam"),
    (lambda t: t.replace("[cues]", "[sounds]"), "[cues] table"),
    (lambda t: t + "= broken", "not valid TOML"),
])
def test_a_broken_pack_names_audio_pack_and_the_problem(tmp_path, edit, message):
    root = copy_pack(tmp_path)
    manifest = root / "manifest.toml"
    manifest.write_text(edit(manifest.read_text()))
    with pytest.raises(ConfigError) as exc:
        load_pack(root)
    assert exc.value.key == "audio.pack" and message in str(exc.value)


def test_a_pack_wav_that_is_not_16_bit_is_refused(tmp_path):
    import wave

    root = copy_pack(tmp_path)
    with wave.open(str(root / "wake.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(bytes(800))
    with pytest.raises(ConfigError, match=r"cue wake: .*8-bit"):
        load_pack(root)


def test_build_cue_player_uses_the_configured_backend_and_pack(settings):
    s = replace(settings, audio=replace(settings.audio, backend="recording"))
    player = build_cue_player(s.audio, Amp(RecordingSpeaker()), ManualReactor(), pytest.fail)
    assert isinstance(player.speaker, RecordingSpeaker)
    assert player.speaker.loaded == PACK.files and player.durations == PACK.durations
    player.play(cues.STARTUP)
    assert player.speaker.names == [cues.STARTUP]


# --- the command line -----------------------------------------------------------------------


def test_sounds_list_prints_every_cue(capsys):
    assert cli.main(["sounds", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"pack {PACK.root}"
    assert [line.split()[0] for line in out[1:]] == list(cues.all_cues())
    assert "300 ms  mild_press_1.wav" in out[1]


def test_sounds_list_of_a_missing_pack_is_a_config_error(capsys, tmp_path):
    assert cli.main(["sounds", "list", "--pack", str(tmp_path)]) == 2
    assert "audio.pack" in capsys.readouterr().err


def test_sounds_play_rejects_an_unknown_cue(capsys):
    assert cli.main(["sounds", "play", "boom"]) == 2
    assert "unknown cue 'boom'" in capsys.readouterr().err


def test_sounds_play_through_the_null_backend(capsys):
    assert cli.main(["sounds", "play", cues.LID_OPEN, "--backend", "null"]) == 0
    assert f"played {cues.LID_OPEN} (420 ms) on NullSpeaker" in capsys.readouterr().out


def test_sounds_render_writes_the_committed_pack(tmp_path, capsys):
    out = tmp_path / "rendered"
    assert cli.main(["sounds", "render", "--out", str(out)]) == 0
    assert f"wrote {len(cues.all_cues())} cues" in capsys.readouterr().out
    for cue, path in PACK.files.items():
        assert (out / path.name).read_bytes() == path.read_bytes(), cue


def test_sounds_sheet_without_the_plots_extra_exits_2_with_the_pip_line(monkeypatch, capsys,
                                                                          tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli.main(["sounds", "sheet", "--out", str(tmp_path / "s.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["launcher sounds sheet needs matplotlib and numpy: "
                   "pip install 'uno-launcher[plots]'"]
    assert not (tmp_path / "s.png").exists()


def test_sounds_sheet_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="the plots extra is not installed")
    pytest.importorskip("numpy", reason="the plots extra is not installed")
    out = tmp_path / "sheet.png"
    assert cli.main(["sounds", "sheet", "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 100_000
