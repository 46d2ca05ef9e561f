"""Speakers: the fallback chain, preloading, lost devices, aplay processes, and real
simpleaudio playback through an ALSA null device (in a subprocess, so the env applies)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from hal.audio import (
    AplaySpeaker,
    NullSpeaker,
    RecordingSpeaker,
    SimpleAudioSpeaker,
    Wav,
    make_speaker,
    read_wav,
)
from launcher.core import cues
from launcher.firmware.sound import load_pack

REPO = Path(__file__).resolve().parents[2]
PACK = load_pack("default")
ALSA_NULL = "pcm.!default { type null }\n"
ALSA_NO_CARD = "pcm.!default { type hw card 7 }\n"  # a sound card that is not there
SLEEP = shutil.which("sleep")  # found now: the stand-in aplay runs with only itself on PATH


# --- a stand-in simpleaudio module and aplay program ----------------------------------------


class FakePlay:
    def __init__(self, log: list, data: bytes) -> None:
        self.log = log
        self.data = data
        self.playing = True

    def stop(self) -> None:
        self.playing = False
        self.log.append(("stop", self.data))

    def is_playing(self) -> bool:
        return self.playing

    def wait_done(self) -> None:
        self.playing = False


def fake_simpleaudio() -> types.ModuleType:
    module = types.ModuleType("simpleaudio")
    module.log = []  # type: ignore[attr-defined]
    module.fail = None  # type: ignore[attr-defined]

    class WaveObject:
        def __init__(self, data: bytes, channels: int, width: int, rate: int) -> None:
            self.audio_data = data
            self.format = (channels, width, rate)

        def play(self) -> FakePlay:
            if module.fail is not None:  # type: ignore[attr-defined]
                raise module.fail  # type: ignore[attr-defined]
            module.log.append(("play", self.audio_data))  # type: ignore[attr-defined]
            return FakePlay(module.log, self.audio_data)  # type: ignore[attr-defined]

    module.WaveObject = WaveObject  # type: ignore[attr-defined]
    return module


@pytest.fixture
def with_simpleaudio(monkeypatch):
    module = fake_simpleaudio()
    monkeypatch.setitem(sys.modules, "simpleaudio", module)
    return module


@pytest.fixture
def without_simpleaudio(monkeypatch):
    monkeypatch.setitem(sys.modules, "simpleaudio", None)  # import raises ImportError


# The stand-in plays the probe's silence from stdin at once, and any file for 30 s.
APLAY_BODY = f'[ "$2" = "-" ] && exit 0\nexec {SLEEP} 30'


def install_aplay(monkeypatch, folder: Path, body: str = APLAY_BODY) -> Path:
    """Put a stand-in ``aplay`` alone on PATH."""
    folder.mkdir(exist_ok=True)
    script = folder / "aplay"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    return script


@pytest.fixture
def with_aplay(monkeypatch, tmp_path):
    return install_aplay(monkeypatch, tmp_path / "bin")


@pytest.fixture
def without_aplay(monkeypatch, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


# --- the fallback chain ---------------------------------------------------------------------

CASES = [
    # backend, simpleaudio?, aplay?, speaker, warning (None: no warning at all)
    ("auto", True, True, SimpleAudioSpeaker, None),
    ("auto", False, True, AplaySpeaker, "simpleaudio not importable"),
    ("auto", False, False, NullSpeaker, "aplay not found"),
    ("simpleaudio", True, False, SimpleAudioSpeaker, None),
    ("simpleaudio", False, True, AplaySpeaker, "using aplay"),
    ("simpleaudio", False, False, NullSpeaker, "no sound"),
    ("aplay", True, True, AplaySpeaker, None),
    ("aplay", True, False, NullSpeaker, "apt install alsa-utils"),
    ("null", False, False, NullSpeaker, None),
    ("recording", False, False, RecordingSpeaker, None),
]


@pytest.mark.parametrize("backend, has_sa, has_aplay, kind, warning", CASES)
def test_the_fallback_chain_warns_exactly_once(request, backend, has_sa, has_aplay, kind,
                                               warning):
    request.getfixturevalue("with_simpleaudio" if has_sa else "without_simpleaudio")
    request.getfixturevalue("with_aplay" if has_aplay else "without_aplay")
    warnings: list[str] = []
    speaker = make_speaker(backend, warnings.append)
    assert type(speaker) is kind
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and "\n" not in warnings[0]
        assert warning in warnings[0] and warnings[0].startswith("audio: ")
    speaker.close()


def test_falling_through_the_whole_chain_names_every_reason(without_simpleaudio, without_aplay):
    warnings: list[str] = []
    make_speaker("auto", warnings.append)
    assert warnings == [
        "audio: simpleaudio not importable (import of simpleaudio halted; None in "
        "sys.modules); aplay not found on PATH (Debian: apt install alsa-utils): no sound"
    ]


def test_auto_skips_a_backend_whose_device_will_not_open(with_simpleaudio, monkeypatch,
                                                         tmp_path):
    with_simpleaudio.fail = RuntimeError("Error opening PCM device")
    install_aplay(monkeypatch, tmp_path / "bin", body="echo 'audio open error' >&2; exit 1")
    warnings: list[str] = []
    speaker = make_speaker("auto", warnings.append)
    assert type(speaker) is NullSpeaker
    # Both backends work but found no device: said in words, the reasons go to the debug log.
    assert warnings == ["audio: no sound device found; cues are silent"]
    # A backend named in the config is kept even without a device: it may come back.
    assert type(make_speaker("simpleaudio", pytest.fail)) is SimpleAudioSpeaker


def test_an_unknown_backend_is_a_value_error_naming_it():
    # hal/ knows no config keys; the config check names audio.backend before this is reached.
    with pytest.raises(ValueError, match=r"audio backend 'pulse'"):
        make_speaker("pulse", pytest.fail)


# --- simpleaudio (stand-in module) ----------------------------------------------------------


def test_simpleaudio_preloads_every_sound_and_reads_no_file_on_play(with_simpleaudio, tmp_path):
    pack_copy = tmp_path / "pack"
    shutil.copytree(PACK.root, pack_copy)
    speaker = SimpleAudioSpeaker()
    speaker.load({cue: pack_copy / path.name for cue, path in PACK.files.items()})
    shutil.rmtree(pack_copy)  # any file read from here on would fail
    for cue in cues.all_cues():
        speaker.play(cue)
        assert with_simpleaudio.log[-1] == ("play", read_wav(PACK.files[cue]).frames)
    assert speaker.error is None


def test_simpleaudio_scales_by_volume_at_load(with_simpleaudio):
    speaker = SimpleAudioSpeaker(volume=0.5)
    speaker.load({cues.WAKE: PACK.files[cues.WAKE]})
    speaker.play(cues.WAKE)
    original = read_wav(PACK.files[cues.WAKE]).samples()
    played = Wav(with_simpleaudio.log[-1][1], 1, 2, 22050).samples()
    assert list(played) == [int(s * 0.5) for s in original]
    assert max(played) < max(original)


def test_simpleaudio_has_one_voice_a_new_play_stops_the_last(with_simpleaudio):
    speaker = SimpleAudioSpeaker()
    speaker.load(PACK.files)
    speaker.play(cues.press("wild", 1))
    speaker.play(cues.press("wild", 2))
    kinds = [k for k, _ in with_simpleaudio.log]
    assert kinds == ["play", "stop", "play"]
    assert speaker.is_playing
    speaker.stop()
    assert not speaker.is_playing


def test_a_lost_device_is_logged_once_per_outage_and_never_raised(with_simpleaudio, caplog):
    caplog.set_level(logging.INFO, logger="hal.audio")
    speaker = SimpleAudioSpeaker()
    speaker.load(PACK.files)
    with_simpleaudio.fail = RuntimeError("Error opening PCM device. -- CODE: -19")
    for _ in range(5):
        speaker.play(cues.press("mild", 1))  # must not raise
    assert not speaker.is_playing
    assert "CODE: -19" in (speaker.error or "")
    failed = [r for r in caplog.records if "playback failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].levelno == logging.WARNING
    with_simpleaudio.fail = None  # the device is back
    speaker.play(cues.WAKE)
    assert speaker.error is None and speaker.is_playing
    assert any("works again" in r.getMessage() for r in caplog.records)
    with_simpleaudio.fail = OSError("unplugged again")
    speaker.play(cues.WAKE)
    assert len([r for r in caplog.records if "playback failed" in r.getMessage()]) == 2


def test_an_unknown_sound_is_a_key_error_on_every_backend(with_simpleaudio, with_aplay):
    for speaker in (SimpleAudioSpeaker(), AplaySpeaker(), NullSpeaker(), RecordingSpeaker()):
        speaker.load({cues.WAKE: PACK.files[cues.WAKE]})
        with pytest.raises(KeyError):
            speaker.play("mild_press_9")
        speaker.close()


# --- aplay (stand-in program) ---------------------------------------------------------------


def test_aplay_runs_aplay_q_file_and_a_new_play_terminates_the_previous(with_aplay):
    speaker = AplaySpeaker()
    speaker.load(PACK.files)
    speaker.play(cues.bam("mild"))
    first = speaker._proc
    assert first is not None
    assert first.args == [str(with_aplay), "-q", str(PACK.files[cues.bam("mild")])]
    speaker.play(cues.press("mild", 1))
    assert first.wait(timeout=10) == -signal.SIGTERM
    assert speaker.is_playing and speaker.error is None
    second = speaker._proc
    speaker.close()
    assert second is not None and second.returncode is not None  # nothing left running
    assert not speaker.is_playing


def test_aplay_failing_is_logged_once_and_never_raised(monkeypatch, tmp_path, caplog):
    install_aplay(monkeypatch, tmp_path / "bin",
                  'echo "aplay: main:831: audio open error: No such device" >&2; exit 1')
    speaker = AplaySpeaker()
    speaker.load(PACK.files)
    for _ in range(3):
        speaker.play(cues.WAKE)
        speaker.wait_done()
    assert speaker.error == "aplay exit 1: aplay: main:831: audio open error: No such device"
    assert len([r for r in caplog.records if "playback failed" in r.getMessage()]) == 1
    speaker.close()


def test_aplay_missing_after_start_is_a_lost_device(with_aplay, caplog):
    speaker = AplaySpeaker()
    speaker.load(PACK.files)
    with_aplay.unlink()
    speaker.play(cues.WAKE)
    speaker.play(cues.WAKE)
    assert speaker.error is not None and not speaker.is_playing
    assert len([r for r in caplog.records if "playback failed" in r.getMessage()]) == 1


def test_aplay_volume_writes_scaled_copies_once_and_removes_them(with_aplay):
    speaker = AplaySpeaker(volume=0.25)
    speaker.load(PACK.files)
    speaker.play(cues.JAM)
    played = Path(speaker._proc.args[2])  # type: ignore[union-attr]
    assert played.parent != PACK.root
    original = read_wav(PACK.files[cues.JAM]).samples()
    assert list(read_wav(played).samples()) == [int(s * 0.25) for s in original]
    speaker.close()
    assert not played.parent.exists()


def test_recording_speaker_verbs():
    now = [0.0]
    speaker = RecordingSpeaker(clock=lambda: now[0])
    speaker.load(PACK.files)
    speaker.play(cues.WAKE)
    speaker.play(cues.FAULT)
    now[0] = 10.0
    speaker.play(cues.JAM)  # the fault has run out: nothing is cut
    speaker.stop()
    speaker.lose_device()
    speaker.play(cues.WAKE)
    speaker.restore_device()
    assert speaker.played == [(cues.WAKE,), (cues.FAULT, cues.WAKE), (cues.JAM,)]
    assert speaker.stopped == [cues.JAM] and speaker.failures == 1 and speaker.error
    speaker.play(cues.WAKE)
    assert speaker.error is None and speaker.is_playing
    speaker.finish()
    assert not speaker.is_playing


# --- real playback through the ALSA null device ----------------------------------------------


def alsa_env(tmp_path: Path, conf: str) -> dict[str, str]:
    path = tmp_path / "asound.conf"
    path.write_text(conf)
    env = dict(os.environ)
    env["ALSA_CONFIG_PATH"] = str(path)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def real_simpleaudio() -> None:
    probe = subprocess.run([sys.executable, "-c", "import simpleaudio"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"simpleaudio is not importable ({last}); "
                    "pip install 'uno-launcher[audio]' (needs libasound2-dev to build)")


PLAY_SCRIPT = """
    import json, logging, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    from hal.audio import SimpleAudioSpeaker, make_speaker
    from launcher.core import cues
    from launcher.firmware.sound import load_pack

    warnings = []
    speaker = make_speaker("simpleaudio", warnings.append)
    assert isinstance(speaker, SimpleAudioSpeaker), type(speaker)
    speaker.load(load_pack("default").files)
    report = {"warnings": warnings, "runs": []}
    for cue in CUES:
        speaker.play(cue)
        started = speaker.is_playing
        speaker.wait_done()
        report["runs"].append([cue, started, speaker.is_playing, speaker.error])
    for level in range(1, cues.LEVELS + 1):  # quick presses: each cuts off the last
        speaker.play(cues.press("wild", level))
    speaker.close()
    report["error_after_cutoffs"] = speaker.error
    print(json.dumps(report))
"""


def test_real_simpleaudio_plays_cues_to_completion_on_the_alsa_null_device(
        real_simpleaudio, tmp_path):
    played = [cues.bam("wild"), cues.press("mild", 6), cues.STARTUP]
    result = run_python(f"CUES = {played!r}\n" + textwrap.dedent(PLAY_SCRIPT),
                        alsa_env(tmp_path, ALSA_NULL))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["warnings"] == []
    assert report["runs"] == [[cue, True, False, None] for cue in played]
    assert report["error_after_cutoffs"] is None
    assert "playback failed" not in result.stderr


def test_real_simpleaudio_without_a_sound_card_keeps_going(real_simpleaudio, tmp_path):
    result = run_python(f"CUES = {[cues.WAKE] * 3!r}\n" + textwrap.dedent(PLAY_SCRIPT),
                        alsa_env(tmp_path, ALSA_NO_CARD))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert all(started is False and error for _, started, _, error in report["runs"])
    assert "Error opening PCM device" in report["runs"][0][3]
    assert result.stderr.count("playback failed") == 1  # one line for the whole outage


def test_launcher_sounds_play_on_the_real_backend(real_simpleaudio, tmp_path):
    code = ("import sys; from launcher.cli.main import main; "
            "sys.exit(main(['sounds', 'play', 'mild_press_1', '--backend', 'simpleaudio']))")
    ok = run_python(code, alsa_env(tmp_path, ALSA_NULL))
    assert ok.returncode == 0, ok.stderr
    assert "played mild_press_1 (300 ms) on SimpleAudioSpeaker" in ok.stdout
    broken = run_python(code, alsa_env(tmp_path, ALSA_NO_CARD))
    assert broken.returncode == 1
    assert "error: playback failed: Error opening PCM device" in broken.stderr


def test_real_aplay_plays_a_cue_on_the_alsa_null_device(monkeypatch, tmp_path):
    if shutil.which("aplay") is None:
        pytest.skip("aplay is not installed (Debian: apt install alsa-utils)")
    for key, value in alsa_env(tmp_path, ALSA_NULL).items():
        monkeypatch.setenv(key, value)
    speaker = AplaySpeaker()
    speaker.load(PACK.files)
    speaker.play(cues.LID_OPEN)
    speaker.wait_done()
    assert speaker.error is None and not speaker.is_playing
    speaker.close()
