"""Speakers: simpleaudio, an ``aplay`` subprocess, a silent one and a recording one for tests.

Every speaker has one voice: ``play`` replaces whatever is sounding. Which cue may cut
which is the cue player's business (``launcher/firmware/sound.py``), not the speaker's.

A lost audio device (an exception from the backend while playing) never reaches the
caller: it is logged once per outage, kept in ``error``, and the next play tries again.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import logging
import shutil
import subprocess
import tempfile
import wave
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from hal.base import HalError, Speaker

log = logging.getLogger(__name__)

BACKENDS = ("auto", "simpleaudio", "aplay", "null", "recording")
CHAIN = ("simpleaudio", "aplay", "null")  # what "auto" tries, and the order of fallbacks
NO_DEVICE = "no sound device found"


@dataclass(frozen=True)
class Wav:
    """The PCM frames of a WAV file, read whole."""

    frames: bytes  # native byte order, as the wave module reads and writes them
    channels: int
    sampwidth: int  # bytes per sample
    rate: int

    @property
    def duration(self) -> float:
        return len(self.frames) / (self.channels * self.sampwidth * self.rate)

    def samples(self) -> array:
        """The samples as signed 16-bit integers (interleaved if stereo)."""
        if self.sampwidth != 2:
            raise ValueError("only 16-bit PCM has samples here")
        out = array("h")
        out.frombytes(self.frames)
        return out

    def scaled(self, volume: float) -> Wav:
        """The same sound at ``volume`` (0..1) times its amplitude."""
        if volume == 1.0:
            return self
        out = array("h", (int(s * volume) for s in self.samples()))
        return Wav(out.tobytes(), self.channels, self.sampwidth, self.rate)


def read_wav(path: Path) -> Wav:
    """Read a 16-bit PCM WAV file; anything else is a ``ValueError`` naming the file."""
    try:
        with wave.open(str(path), "rb") as w:
            wav = Wav(w.readframes(w.getnframes()), w.getnchannels(), w.getsampwidth(),
                      w.getframerate())
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"{path}: not a PCM WAV file ({exc})") from exc
    if wav.sampwidth != 2 or wav.channels not in (1, 2):
        raise ValueError(
            f"{path}: {wav.channels} channel(s) of {8 * wav.sampwidth}-bit; "
            "packs hold 16-bit mono or stereo"
        )
    return wav


def write_wav(path: Path, wav: Wav) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(wav.channels)
        w.setsampwidth(wav.sampwidth)
        w.setframerate(wav.rate)
        w.writeframes(wav.frames)


class Unavailable(HalError, RuntimeError):
    """A backend cannot run on this machine (module or program missing, or no device)."""

    def __init__(self, message: str, no_device: bool = False) -> None:
        super().__init__(message)
        self.no_device = no_device  # the backend works, but there is no device to open


# libasound reports its own errors on stderr, 8 lines for a machine with no sound card,
# before simpleaudio raises. A probe may fail quietly: for its length the library's error
# handler is a function that says nothing, and the default handler comes back after.
# ctypes is imported only when a probe runs (it costs start-up time otherwise).


@functools.cache
def _silent_handler() -> Any:
    import ctypes

    handler_type = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                    ctypes.c_int, ctypes.c_char_p)
    return handler_type(lambda *_: None)  # cached: it must outlive every call


@functools.cache
def _libasound() -> Any:
    import ctypes
    import ctypes.util

    # The soname first: find_library runs ldconfig in a subprocess, so only if that fails.
    try:
        return ctypes.CDLL("libasound.so.2")
    except OSError:
        pass
    name = ctypes.util.find_library("asound")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


@contextlib.contextmanager
def alsa_quiet(lib: Any = None) -> Iterator[None]:
    """While inside, libasound prints nothing itself (a no-op where there is no libasound)."""
    lib = lib if lib is not None else _libasound()
    setter = getattr(lib, "snd_lib_error_set_handler", None)
    if setter is None:
        yield
        return
    setter(_silent_handler())
    try:
        yield
    finally:
        setter(None)


class _Outage:
    """Tracks a lost device: log the first failure of an outage, and the recovery."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.error: str | None = None
        self.failures = 0

    def failed(self, exc: BaseException | str) -> None:
        self.failures += 1
        if self.error is None:
            log.warning("audio: %s playback failed (%s); carrying on without sound",
                        self.backend, exc)
        self.error = str(exc)

    def ok(self) -> None:
        if self.error is not None:
            log.info("audio: %s playback works again", self.backend)
        self.error = None


class SimpleAudioSpeaker:
    """simpleaudio (``simpleaudio-patched``): every sound is decoded into memory at load."""

    def __init__(self, volume: float = 1.0, module: ModuleType | None = None) -> None:
        if module is None:
            try:
                module = importlib.import_module("simpleaudio")
            except ImportError as exc:  # the module, or the ALSA library it links
                raise Unavailable(f"simpleaudio not importable ({exc})") from exc
        self._sa: Any = module
        self._volume = volume
        self._waves: dict[str, Any] = {}
        self._current: Any = None
        self._outage = _Outage("simpleaudio")

    @property
    def error(self) -> str | None:
        """The last playback failure of the current outage, or None."""
        return self._outage.error

    def probe(self) -> None:
        """Open the default device once with 10 ms of silence; Unavailable if it will not."""
        try:
            with alsa_quiet():
                self._sa.WaveObject(bytes(440), 1, 2, 22050).play().wait_done()
        except Exception as exc:
            raise Unavailable(f"simpleaudio cannot open the default device ({exc})",
                              no_device=True) from exc

    def load(self, sounds: Mapping[str, Path]) -> None:
        waves = {}
        for name, path in sounds.items():
            wav = read_wav(path).scaled(self._volume)
            waves[name] = self._sa.WaveObject(wav.frames, wav.channels, wav.sampwidth, wav.rate)
        self._waves = waves

    def play(self, name: str) -> None:
        wave_obj = self._waves[name]  # an unknown name is a bug, not a lost device
        self.stop()
        try:
            self._current = wave_obj.play()
        except Exception as exc:
            self._current = None
            self._outage.failed(exc)
            return
        self._outage.ok()

    def stop(self) -> None:
        current, self._current = self._current, None
        if current is None:
            return
        try:
            current.stop()
        except Exception as exc:
            self._outage.failed(exc)

    @property
    def is_playing(self) -> bool:
        if self._current is None:
            return False
        try:
            return bool(self._current.is_playing())
        except Exception as exc:
            self._outage.failed(exc)
            return False

    def wait_done(self) -> None:
        """Block until the sound ends (for command-line shells, never the firmware)."""
        if self._current is not None:
            self._current.wait_done()

    def close(self) -> None:
        self.stop()
        self._waves = {}


class AplaySpeaker:
    """``aplay -q FILE`` in a subprocess; a new play terminates the previous one."""

    def __init__(self, volume: float = 1.0, program: str = "aplay") -> None:
        found = shutil.which(program)
        if found is None:
            raise Unavailable(f"{program} not found on PATH (Debian: apt install alsa-utils)")
        self._program = found
        self._volume = volume
        self._files: dict[str, Path] = {}
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._dying: list[subprocess.Popen[bytes]] = []
        self._outage = _Outage("aplay")

    @property
    def error(self) -> str | None:
        return self._outage.error

    def probe(self) -> None:
        """Play 10 ms of silence on the default device; Unavailable if aplay fails."""
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(22050)
            w.writeframes(bytes(440))
        try:
            proc = subprocess.run([self._program, "-q", "-"], input=buf.getvalue(),
                                  capture_output=True, timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"aplay failed ({exc})") from exc
        if proc.returncode != 0:
            reason = proc.stderr.decode(errors="replace").strip().splitlines()
            raise Unavailable(f"aplay cannot play ({reason[-1] if reason else proc.returncode})",
                              no_device=True)

    def load(self, sounds: Mapping[str, Path]) -> None:
        self._cleanup_tmp()
        files = {}
        if self._volume != 1.0:
            # aplay has no gain option: write the scaled sounds once, here.
            self._tmp = tempfile.TemporaryDirectory(prefix="launcher-audio-")
            for name, path in sounds.items():
                out = Path(self._tmp.name) / f"{name}.wav"
                write_wav(out, read_wav(path).scaled(self._volume))
                files[name] = out
        else:
            for name, path in sounds.items():
                read_wav(path)  # fail at load, not at the first press
                files[name] = Path(path)
        self._files = files

    def play(self, name: str) -> None:
        path = self._files[name]
        self.stop()
        try:
            self._proc = subprocess.Popen(
                [self._program, "-q", str(path)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )
        except OSError as exc:
            self._outage.failed(exc)

    def _finished(self, proc: subprocess.Popen[bytes], terminated: bool) -> None:
        err = _read_all(proc.stderr)
        if terminated:
            return
        if proc.returncode == 0:
            self._outage.ok()
        else:
            line = err.decode(errors="replace").strip().splitlines()
            self._outage.failed(f"aplay exit {proc.returncode}: {line[-1] if line else ''}")

    def _reap(self) -> None:
        for proc in list(self._dying):
            if proc.poll() is not None:
                self._dying.remove(proc)
                self._finished(proc, terminated=True)
        if self._proc is not None and self._proc.poll() is not None:
            proc, self._proc = self._proc, None
            self._finished(proc, terminated=False)

    def stop(self) -> None:
        self._reap()
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.terminate()
            self._dying.append(proc)  # reaped on a later call, so stop never waits

    @property
    def is_playing(self) -> bool:
        self._reap()
        return self._proc is not None

    def wait_done(self) -> None:
        """Block until the sound ends (for command-line shells, never the firmware)."""
        if self._proc is not None:
            self._proc.wait()
        self._reap()

    def close(self) -> None:
        self.stop()
        for proc in self._dying:
            proc.kill()
            proc.wait()
            _read_all(proc.stderr)
        self._dying = []
        self._cleanup_tmp()

    def _cleanup_tmp(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _read_all(stream: IO[bytes] | None) -> bytes:
    if stream is None:
        return b""
    try:
        return stream.read()
    finally:
        stream.close()


class NullSpeaker:
    """No sound at all; remembers which names were loaded so a wrong name still fails."""

    error: str | None = None

    def __init__(self) -> None:
        self._names: frozenset[str] = frozenset()

    def load(self, sounds: Mapping[str, Path]) -> None:
        self._names = frozenset(sounds)

    def play(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)

    def stop(self) -> None:
        pass

    @property
    def is_playing(self) -> bool:
        return False

    def wait_done(self) -> None:
        pass

    def close(self) -> None:
        pass


class RecordingSpeaker:
    """A speaker for tests: keeps what was played and stopped, and can lose its device.

    ``played`` holds one tuple per sound that started: ``(name,)`` when it started on
    silence, ``(name, cut)`` when it cut off the sound ``cut``. ``stopped`` lists the
    sounds ended by ``stop()``. Given a ``clock`` (``reactor.monotonic``), a sound ends
    when its file's length has passed; without one it lasts until ``finish()`` or
    ``stop()``. ``lose_device()`` / ``restore_device()`` make plays fail like a lost device.
    """

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.loaded: dict[str, Path] = {}
        self.played: list[tuple[str, ...]] = []
        self.stopped: list[str] = []
        self.closed = False
        self._clock = clock
        self._lengths: dict[str, float] = {}
        self._current: str | None = None
        self._ends = 0.0
        self._lost: BaseException | None = None
        self._outage = _Outage("recording")

    @property
    def error(self) -> str | None:
        return self._outage.error

    @property
    def failures(self) -> int:
        return self._outage.failures

    @property
    def names(self) -> list[str]:
        """The names of the sounds that started, in order."""
        return [entry[0] for entry in self.played]

    @property
    def current(self) -> str | None:
        """The sound playing now, or None."""
        clock = self._clock
        if self._current is not None and clock is not None and clock() >= self._ends:
            self._current = None
        return self._current

    def load(self, sounds: Mapping[str, Path]) -> None:
        self.loaded = dict(sounds)
        if self._clock is not None:
            self._lengths = {name: read_wav(path).duration for name, path in sounds.items()}

    def play(self, name: str) -> None:
        if name not in self.loaded:
            raise KeyError(name)
        previous, self._current = self.current, None
        if self._lost is not None:
            self._outage.failed(self._lost)
            return
        self._outage.ok()
        self.played.append((name,) if previous is None else (name, previous))
        self._current = name
        if self._clock is not None:
            self._ends = self._clock() + self._lengths[name]

    def stop(self) -> None:
        current = self.current
        if current is not None:
            self.stopped.append(current)
            self._current = None

    def finish(self) -> None:
        """The current sound runs out."""
        self._current = None

    def lose_device(self, exc: BaseException | None = None) -> None:
        self._lost = exc or OSError("audio device unplugged")

    def restore_device(self) -> None:
        self._lost = None

    @property
    def is_playing(self) -> bool:
        return self.current is not None

    def wait_done(self) -> None:
        self._current = None

    def close(self) -> None:
        self.stop()
        self.closed = True


def _open(name: str, volume: float) -> Speaker:
    if name == "simpleaudio":
        return SimpleAudioSpeaker(volume)
    if name == "aplay":
        return AplaySpeaker(volume)
    return NullSpeaker()


def make_speaker(backend: str, warn: Callable[[str], None], volume: float = 1.0) -> Speaker:
    """The speaker for ``audio.backend``; an unavailable one falls down ``CHAIN``.

    Falling back says so in exactly one ``warn`` line, whatever was skipped. When every
    backend that was tried works but found no device to open, the line says that in words
    and the backends' own reasons go to the debug log.
    """
    if backend == "recording":
        return RecordingSpeaker()
    if backend not in BACKENDS:
        raise ValueError(f"audio backend {backend!r}: must be one of " + ", ".join(BACKENDS))
    first = "simpleaudio" if backend == "auto" else backend
    skipped: list[Unavailable] = []
    for name in CHAIN[CHAIN.index(first):]:
        try:
            speaker = _open(name, volume)
            if backend == "auto" and name != "null":
                # Only "auto" may decide there is no usable device: a named backend is kept,
                # and a device that comes back later is used (a lost one is never fatal).
                speaker.probe()  # type: ignore[attr-defined]
        except Unavailable as exc:
            skipped.append(exc)
            continue
        reasons = "; ".join(str(exc) for exc in skipped)
        if name == "null" and skipped and all(exc.no_device for exc in skipped):
            log.debug("audio: %s", reasons)
            warn(f"audio: {NO_DEVICE}; cues are silent")
        elif skipped:
            outcome = "no sound" if name == "null" else f"using {name}"
            warn(f"audio: {reasons}: {outcome}")
        return speaker
    raise AssertionError("the chain ends with the null speaker, which is always available")
