"""No sound device: the probe is quiet, one line says so in words, `sounds play` exits 1.

Run in subprocesses, so that ``ALSA_CONFIG_PATH`` applies to the real libasound.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# A default PCM that refers to a definition that is not there: libasound prints its own
# "ALSA lib ..." lines for this, as it does on a machine without a sound card.
ALSA_MISSING = 'pcm.!default { @func refer name "pcm.no_such_card" }\n'


def _env(tmp_path: Path) -> dict[str, str]:
    conf = tmp_path / "alsa.conf"
    conf.write_text(ALSA_MISSING)
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "mock"}


def _has_simpleaudio() -> bool:
    try:
        import simpleaudio  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_simpleaudio(), reason="needs simpleaudio (the audio extra)")
def test_probing_a_missing_device_prints_one_line_in_words_and_no_alsa_lib_lines(tmp_path):
    code = ("from hal.audio import make_speaker; import sys\n"
            "s = make_speaker('auto', lambda t: print(t, file=sys.stderr))\n"
            "print(type(s).__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(tmp_path), timeout=60, check=True)
    assert proc.stdout.strip() == "NullSpeaker"
    assert proc.stderr.splitlines() == ["audio: no sound device found; cues are silent"]


def test_sounds_play_without_a_device_exits_1_naming_why(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "sounds", "play",
                           "wild_bam"], capture_output=True, text=True, env=_env(tmp_path),
                          timeout=60, check=False)
    assert proc.returncode == 1
    assert proc.stdout == ""
    # With simpleaudio or aplay installed the reason is "no sound device found"; without
    # either it names what is missing. Either way: one line, and no "played".
    assert proc.stderr.splitlines()[-1].startswith("error: wild_bam was not played: ")
    assert "ALSA lib" not in proc.stderr and "played wild_bam" not in proc.stdout


def test_sounds_play_with_the_null_backend_asked_for_by_name_exits_0(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "sounds", "play",
                           "mild_bam", "--backend", "null"], capture_output=True, text=True,
                          env=_env(tmp_path), timeout=60, check=False)
    assert proc.returncode == 0
    assert proc.stdout.startswith("played mild_bam (")


class _FakeAsound:
    """Records the handlers set, as libasound's snd_lib_error_set_handler would keep them."""

    def __init__(self) -> None:
        self.handlers: list[object] = []

    def snd_lib_error_set_handler(self, handler: object) -> int:
        self.handlers.append(handler)
        return 0


def test_the_quiet_handler_is_removed_again_even_when_the_probe_fails():
    from hal.audio import alsa_quiet

    lib = _FakeAsound()
    with pytest.raises(RuntimeError), alsa_quiet(lib):
        assert lib.handlers[0] is not None
        raise RuntimeError("no device")
    assert lib.handlers[-1] is None and len(lib.handlers) == 2
    with alsa_quiet(object()):  # no libasound at all: nothing to do
        pass
