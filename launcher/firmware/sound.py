"""Cue playback policy: which cue may cut off which, and when the amplifier is on.

Rules, on reactor time (a cue "sounds" from its start until its duration has passed):

- A press cue cuts off whatever sounds, except BAM: a press cue that arrives while BAM
  sounds is dropped, not delayed. A sound that came late would belong to no press, and
  the next press brings its own cue anyway.
- ``reload`` waits for a sounding BAM to end (the last card of a shot leaves while BAM
  still sounds; "BAM!" then "reload" says both). Only the latest waiting cue is kept.
- Every other cue (flip, faults, lid warning, wake, sleep, startup, BAM) starts at once.
- The amplifier enable goes high before the speaker is told to play and low, by a
  reactor timer, ``AMP_TAIL`` after the last cue's duration. ``sleep()`` stops the sound
  and keeps the amplifier low until ``wake()``; plays in between are dropped. The one
  exception is the ``sleep`` cue itself: the firmware plays it just before ``sleep()``,
  so it is allowed to finish, and the amplifier goes low when it ends.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import launcher
from hal.audio import make_speaker, read_wav
from hal.base import Output, Speaker
from launcher.core import cues
from launcher.core.config import Audio
from launcher.core.errors import ConfigError
from launcher.core.reactor import NEVER, Reactor
from launcher.firmware.registry import E_VALUE, Args, CommandError, Registry, Reply, quote

log = logging.getLogger(__name__)

MANIFEST = "manifest.toml"
# The amplifier stays on this long after a cue's last sample: the sound card still holds
# up to a buffer of it, and switching off mid-buffer clicks.
AMP_TAIL = 0.1
WAITS_FOR_BAM = frozenset({cues.RELOAD})


def sounds_dir() -> Path:
    """The repository's ``sounds/`` folder, where packs live."""
    return Path(launcher.__file__).resolve().parents[1] / "sounds"


def pack_path(pack: str | os.PathLike[str]) -> Path:
    """``audio.pack`` as a folder: an absolute path, or a name under ``sounds/``."""
    path = Path(pack).expanduser()
    return path if path.is_absolute() else sounds_dir() / path


@dataclass(frozen=True)
class Pack:
    """A checked sound pack: a file and a duration (seconds) for every cue."""

    root: Path
    files: Mapping[str, Path]
    durations: Mapping[str, float]


def read_manifest(root: Path) -> dict[str, str]:
    """The ``[cues]`` table of a pack's manifest: cue name -> file, relative to ``root``."""
    path = root / MANIFEST
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("audio.pack", str(root), f"no readable {MANIFEST} ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("audio.pack", str(root), f"{MANIFEST} is not valid TOML: {exc}") from exc
    table = raw.get("cues")
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ConfigError("audio.pack", str(root), f"{MANIFEST} needs a [cues] table of files")
    return table


def load_pack(pack: str | os.PathLike[str]) -> Pack:
    """Read and check a pack: every cue of ``cues.all_cues()``, each a 16-bit PCM WAV."""
    root = pack_path(pack)
    table = read_manifest(root)
    wanted = cues.all_cues()
    missing = [c for c in wanted if c not in table]
    if missing:
        raise ConfigError("audio.pack", str(root), "manifest lacks " + ", ".join(missing))
    unknown = sorted(set(table) - set(wanted))
    if unknown:
        raise ConfigError("audio.pack", str(root), "manifest names unknown cues "
                          + ", ".join(unknown))
    files: dict[str, Path] = {}
    durations: dict[str, float] = {}
    for cue in wanted:
        path = root / table[cue]
        try:
            wav = read_wav(path)
        except (OSError, ValueError) as exc:
            raise ConfigError("audio.pack", str(root), f"cue {cue}: {exc}") from exc
        files[cue] = path
        durations[cue] = wav.duration
    return Pack(root, files, durations)


class CuePlayer:
    """Plays cues by the rules above; time comes only from the reactor."""

    def __init__(self, speaker: Speaker, amp: Output, reactor: Reactor,
                 durations: Mapping[str, float]) -> None:
        self.speaker = speaker
        self.amp = amp
        self.reactor = reactor
        self.durations = dict(durations)
        self.asleep = False
        self._current: str | None = None
        self._ends = 0.0
        self._pending: str | None = None
        self._timer = reactor.register_timer(self._tick, NEVER, "sound")

    @property
    def current(self) -> str | None:
        """The cue sounding now, by reactor time (None in silence)."""
        if self._current is not None and self.reactor.monotonic() < self._ends:
            return self._current
        return None

    @property
    def pending(self) -> str | None:
        """A cue waiting for BAM to end."""
        return self._pending

    def play(self, cue: str) -> None:
        duration = self.durations[cue]  # an unknown cue is a bug: fail before any change
        if self.asleep:
            log.debug("cue %s dropped: asleep", cue)
            return
        current = self.current
        bam_sounding = current is not None and cues.is_bam(current)
        if bam_sounding and cues.is_press_cue(cue):
            log.debug("cue %s dropped: BAM sounds", cue)
            return
        if bam_sounding and cue in WAITS_FOR_BAM:
            self._pending = cue
            return
        self._pending = None
        self._start(cue, duration)

    def _start(self, cue: str, duration: float) -> None:
        self.amp.on()
        self.speaker.play(cue)
        self._current = cue
        self._ends = self.reactor.monotonic() + duration
        self.reactor.update_timer(self._timer, self._ends)

    def _tick(self, eventtime: float) -> float:
        """At a cue's end: start the waiting cue, or lower the amplifier ``AMP_TAIL`` later."""
        if self._current is not None:
            self._current = None
            if self._pending is not None and not self.asleep:
                cue, self._pending = self._pending, None
                self._start(cue, self.durations[cue])
                return self._ends
            self._pending = None
            return self._ends + AMP_TAIL
        self.amp.off()
        return NEVER

    def sleep(self) -> None:
        """Silence and amplifier off until ``wake()`` (a sounding ``sleep`` cue may finish)."""
        self.asleep = True
        self._pending = None
        if self.current == cues.SLEEP:
            return
        self.speaker.stop()
        self._current = None
        self.reactor.update_timer(self._timer, NEVER)
        self.amp.off()

    def wake(self) -> None:
        """Allow cues again; the amplifier comes on with the next one."""
        self.asleep = False

    def close(self) -> None:
        self.speaker.stop()
        self.amp.off()
        self.reactor.unregister_timer(self._timer)
        self.speaker.close()


def build_cue_player(audio: Audio, amp: Output, reactor: Reactor,
                     warn: Callable[[str], None]) -> CuePlayer:
    """The pack and speaker of the ``[audio]`` settings, buffers loaded, ready to play."""
    pack = load_pack(audio.pack)
    speaker = make_speaker(audio.backend, warn, volume=audio.volume)
    speaker.load(pack.files)
    return CuePlayer(speaker, amp, reactor, pack.durations)


def register_sound_commands(reg: Registry, player: CuePlayer) -> None:
    """The console's `sounds play CUE` (on the launcher's ``player``, by its rules, as the
    machine's cues are) and `sounds list`."""

    def play(a: Args) -> dict[str, Any]:
        cue = a.word(0)
        names = cues.all_cues()
        if cue not in names:
            raise CommandError(E_VALUE, f"no cue {quote(cue)}; `sounds list` shows the "
                                        f"{len(names)} cues")
        player.play(cue)
        return {"cue": cue}

    def listing(a: Args) -> Reply:
        names = cues.all_cues()
        return Reply({"cues": len(names)}, [{"cue": c} for c in names], "cues",
                     lambda r: r["cue"])

    reg.register("sounds play", "CUE", "play one cue", play, min_args=1, max_args=1)
    reg.register("sounds list", "", "every cue name", listing)
