"""The generator: determinism, the committed pack, formats, lengths, and the escalation."""

from __future__ import annotations

import math
import wave
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hal.audio import read_wav
from launcher.core import cues
from launcher.firmware.sound import MANIFEST, load_pack, read_manifest, sounds_dir
from launcher.tools import soundgen

COMMITTED = sounds_dir() / "default"
PRESS = {side: [cues.press(side, k) for k in range(1, cues.LEVELS + 1)] for side in cues.SIDES}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("render")
    soundgen.render(out)
    return out


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_rendering_twice_gives_identical_bytes(rendered, tmp_path):
    soundgen.render(tmp_path)
    assert files_of(tmp_path) == files_of(rendered)


def test_the_committed_pack_is_exactly_the_generator_output(rendered):
    committed = files_of(COMMITTED)
    fresh = files_of(rendered)
    hint = "run `launcher sounds render` and commit sounds/default"
    assert sorted(committed) == sorted(fresh), f"files added or missing: {hint}"
    stale = [name for name in fresh if committed[name] != fresh[name]]
    assert stale == [], f"committed sounds differ from the generator: {hint}"


def test_the_manifest_maps_every_cue_to_its_file(rendered):
    table = read_manifest(rendered)
    assert list(table) == list(cues.all_cues())
    assert all((rendered / f).is_file() for f in table.values())
    assert (rendered / MANIFEST).read_text().startswith("# Sound pack")


@pytest.mark.parametrize("cue", cues.all_cues())
def test_every_cue_is_16_bit_mono_22050_short_and_clean(rendered, cue):
    path = rendered / soundgen.file_name(cue)
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getcomptype()) == (
            1, 2, 22050, "NONE")
        frames = w.getnframes()
    assert path.stat().st_size == 44 + 2 * frames  # a plain header: nothing that could vary
    wav = read_wav(path)
    limit = soundgen.MAX_PRESS if cues.is_press_cue(cue) else 1.2
    assert 0.1 < wav.duration < limit
    x = wav.samples()
    peak = max(abs(v) for v in x)
    assert 0.7 * 32767 < peak <= 0.9 * 32767  # loud, never clipped
    assert abs(x[0]) < 200 and abs(x[-1]) < 200  # no click at either end
    assert abs(sum(x) / len(x)) < 0.02 * 32767  # no DC offset worth the name


def rms_frequency(x) -> float:
    """The root-mean-square frequency (Hz) from the energy of the first difference."""
    diff = sum((b - a) * (b - a) for a, b in pairwise(x))
    energy = sum(v * v for v in x)
    return soundgen.RATE / (2 * math.pi) * math.sqrt(diff / energy)


def onsets(x, frame: int = 110) -> int:
    """Notes heard: 5 ms frames whose level jumps well above the frame before."""
    levels = [math.sqrt(sum(v * v for v in x[i:i + frame]) / frame)
              for i in range(0, len(x) - frame + 1, frame)]
    top = max(levels)
    count, armed = 0, True
    for before, now in zip([0.0, *levels], levels, strict=False):
        if now > 1.6 * before + 0.02 * top and now > 0.25 * top:
            count += armed
            armed = False
        else:
            armed = True
    return count


def rising(values: list[float], by: float = 1.0) -> bool:
    return all(b > by * a for a, b in pairwise(values))


@pytest.mark.parametrize("side", cues.SIDES)
def test_escalation_gets_faster_higher_and_more_tense(side):
    pack = load_pack(COMMITTED)
    samples = [read_wav(pack.files[c]).samples() for c in PRESS[side]]
    scores = [soundgen.score(c) for c in PRESS[side]]
    heard_notes = [onsets(x) for x in samples]
    assert heard_notes == [s.notes for s in scores] == list(range(2, 2 + cues.LEVELS))
    rates = [n / read_wav(pack.files[c]).duration for n, c in zip(heard_notes, PRESS[side],
                                                                  strict=True)]
    assert rising(rates), ("faster", rates)
    pitch = [rms_frequency(x) for x in samples]
    assert rising(pitch, by=1.05), ("higher", pitch)
    roots = [s.root for s in scores]
    assert rising(roots)
    tension = [s.tension for s in scores]
    assert tension == sorted(tension) and tension[0] == 0 and tension[-1] == 1


def test_wild_is_brighter_and_harsher_than_mild_at_every_level():
    pack = load_pack(COMMITTED)
    for mild, wild in zip(PRESS["mild"], PRESS["wild"], strict=True):
        m = read_wav(pack.files[mild]).samples()
        w = read_wav(pack.files[wild]).samples()
        assert rms_frequency(w) > 1.2 * rms_frequency(m), (mild, wild)


def voices(cue: str) -> set[str]:
    return {getattr(p, "wave", "noise") for p in soundgen.score(cue).parts}


def test_mild_is_built_from_sine_and_triangle_and_wild_from_saw_square_and_noise():
    for cue in (*PRESS["mild"], cues.flip("mild")):
        assert voices(cue) <= {"sine", "triangle"}, cue
    assert voices(cues.bam("mild")) <= {"sine", "triangle", "noise"}  # one soft pop
    for cue in (*PRESS["wild"], cues.bam("wild"), cues.flip("wild")):
        assert voices(cue) >= {"saw", "noise"} and not voices(cue) & {"sine", "triangle"}, cue
    for cue in PRESS["wild"]:
        assert soundgen.score(cue).drive > 1  # overdriven


def test_mild_intervals_are_major_and_wild_ones_minor_second_and_tritone():
    mild_ratios = {round(r, 6) for r in soundgen.MILD_ARPEGGIO}
    assert mild_ratios <= {1.0, 1.25, 1.5, 2.0}
    assert {soundgen.MINOR_2ND, soundgen.TRITONE} <= set(soundgen.WILD_STABS)


@given(st.floats(-1000, 1000, allow_nan=False))
def test_the_polynomial_sine_matches_the_library_sine(phase):
    assert soundgen.sine(phase) == pytest.approx(math.sin(2 * math.pi * phase), abs=2e-7)


def test_noise_is_seeded_per_cue_so_cues_do_not_share_it():
    assert soundgen.cue_pcm(cues.JAM) == soundgen.cue_pcm(cues.JAM)
    a = soundgen.synth(soundgen.score(cues.JAM), 1)
    b = soundgen.synth(soundgen.score(cues.JAM), 2)
    assert a != b
