"""TOML configuration -> frozen settings, checked as it is read; errors name the key."""

from __future__ import annotations

import copy
import functools
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from itertools import accumulate
from pathlib import Path
from typing import Any

from hal.base import Pins
from hal.circuit import pin_problems
from hal.pins import I2S, UART, reserved_pins
from launcher.core.errors import MISSING, ConfigError
from launcher.core.profiles import DEAL_MAX, NAMED, Profile, parse_profile

SIDES = ("mild", "wild")
PIN_FACTORIES = ("auto", "lgpio", "pigpio", "native", "mock")
AUDIO_BACKENDS = ("auto", "simpleaudio", "aplay", "null", "recording")
# Console ports that are the Pi's UART on GPIO 14/15 (serial0 is the alias the OS points at
# the primary UART). Other ports (/dev/ttyGS0 the USB gadget, a USB adapter, "" for none)
# leave 14 and 15 free.
UART_PORTS = ("/dev/serial0", "/dev/ttyAMA0", "/dev/ttyS0")


@dataclass(frozen=True, slots=True)
class SideLuck:
    hazard: tuple[float, ...]
    sizes: tuple[int, ...]
    weights: tuple[float, ...]
    # The running totals of ``weights`` (made once here: a shot's size draw bisects them).
    cum_weights: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cum_weights", tuple(accumulate(self.weights)))

    @property
    def max_dry(self) -> int:
        """The longest possible run of dry presses on this side."""
        return len(self.hazard) - 1


@dataclass(frozen=True, slots=True)
class Luck:
    seed: int | None
    mild: SideLuck
    wild: SideLuck

    def side(self, side: str) -> SideLuck:
        return self.mild if side == "mild" else self.wild


@dataclass(frozen=True, slots=True)
class Timing:
    """All in seconds (the file says milliseconds where the key ends in _ms)."""

    debounce: float
    lid_pair: float
    mash_guard: float
    card_timeout: float
    jam_timeout: float
    max_run: float
    timed_card: float
    rotation_timeout: float
    sleep_after: float


@dataclass(frozen=True, slots=True)
class Motor:
    speed: float
    brake: bool  # stop by shorting the motor for ``brake_time``, then coast; False: coast
    brake_time: float  # seconds the brake holds after a stop before the driver sleeps
    lease: float  # seconds a run lasts unless the event loop renews it


@dataclass(frozen=True, slots=True)
class Rotator:
    """How the cartridge's gear motor is driven, and how it stops at home (``brake`` and
    ``creep_speed`` are used only with ``pins.rotator_in2`` wired)."""

    brake: float  # seconds the brake holds before the home sensor is read again
    creep_speed: float  # drive while turning back to a home magnet it ran past; 0: never
    # "shared": the roller's driver's second channel (BIN1/BIN2: a turn wakes its nSLEEP);
    # "own": a MOSFET or a driver of its own (the roller's driver sleeps through a flip).
    driver: str = "shared"


@dataclass(frozen=True, slots=True)
class Audio:
    backend: str
    pack: str
    volume: float


@dataclass(frozen=True, slots=True)
class Console:
    port: str
    baud: int
    debug_idle: float  # seconds without a line after which `debug on` lapses


@dataclass(frozen=True, slots=True)
class Web:
    """The web panel (launcher/web): off unless ``enabled``; plain HTTP unless both TLS
    files are given."""

    enabled: bool
    host: str
    port: int
    tls_cert: str  # "": plain HTTP
    tls_key: str
    token_days: float  # days a token lasts unused
    max_streams: int  # live-stream clients at once


@dataclass(frozen=True, slots=True)
class Settings:
    pin_factory: str
    pins: Pins
    luck: Luck
    timing: Timing
    motor: Motor
    rotator: Rotator
    audio: Audio
    state_path: Path
    console: Console
    profile: Profile
    web: Web


# --- reading raw values ------------------------------------------------------------------


def _number(key: str, value: Any, lo: float = -math.inf, hi: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, value, "must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(key, value, "must be a finite number")
    if not (lo <= value <= hi):
        if hi == math.inf:
            raise ConfigError(key, value, f"must be at least {lo:g}")
        raise ConfigError(key, value, f"must be within {lo:g}..{hi:g}")
    return float(value)


def _integer(key: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(key, value, "must be a whole number")
    if lo is not None and value < lo:
        raise ConfigError(key, value, f"must be at least {lo}")
    if hi is not None and value > hi:
        raise ConfigError(key, value, f"must be at most {hi}")
    return value


def _choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(key, value, "must be one of " + ", ".join(choices))
    return str(value)


# What Linux takes in a path: no NUL (the C string ends there), at most PATH_MAX - 1 bytes
# in all and NAME_MAX bytes a name, in the file system's encoding (UTF-8).
PATH_BYTES = 4095
NAME_BYTES = 255
TEXT_BYTES = 4095  # any other string (a serial port may be a pyserial URL)


def _string(key: str, value: Any, limit: int = TEXT_BYTES) -> str:
    """A string the OS and the libraries below take: no NUL, UTF-8, at most ``limit`` bytes."""
    if not isinstance(value, str):
        raise ConfigError(key, value, "must be a string")
    shown = value if len(value) <= 60 else value[:60] + "..."
    if "\0" in value:
        raise ConfigError(key, shown, "must not contain a NUL character (U+0000)")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ConfigError(key, shown, f"not encodable as UTF-8 (U+{ord(value[exc.start]):04X})"
                          ) from None
    if size > limit:
        raise ConfigError(key, shown, f"too long ({size} bytes; at most {limit})")
    return value


def _path(key: str, value: Any, *, file: bool) -> str:
    """A path the file system takes; ``file``: one that names a file, not a folder.

    Only its spelling is checked here (the core does no I/O); the shell checks what is on
    the disk (the sound pack is loaded by ``config check``, ``config set`` and the start).
    """
    text = _string(key, value, PATH_BYTES)
    if not text.strip():
        raise ConfigError(key, text, "must not be empty")
    for name in text.split("/"):
        if len(name.encode("utf-8")) > NAME_BYTES:
            raise ConfigError(key, text[:60] + "...", f"has a name longer than {NAME_BYTES} "
                                                      "bytes")
    if file and (text.endswith("/") or text.rsplit("/", 1)[-1] in (".", "..")):
        raise ConfigError(key, text, "must name a file, not a folder")
    if text.startswith("~"):
        try:
            Path(text).expanduser()
        except RuntimeError:
            raise ConfigError(key, text, "names the home folder of an unknown user") from None
    return text


def _absolute(key: str, text: str, what: str) -> str:
    """``text`` as an absolute path without a ``..`` step (a path checked by ``_path``)."""
    if not text.startswith("/"):
        raise ConfigError(key, text, f"must be an absolute path ({what})")
    _no_parent_steps(key, text)
    return text


def _no_parent_steps(key: str, text: str) -> None:
    # A ".." step can leave any folder the path seems to be in; the shell resolves the
    # links that remain (launcher.firmware.places).
    if ".." in text.split("/"):
        raise ConfigError(key, text, "must not contain a .. step")


def _console_port(value: Any) -> str:
    """``console.port``: "" (no console) or a device under /dev/. Whether it is a tty is
    the shell's check (``launcher.firmware.places``): the core reads no disk."""
    text = _string("console.port", value, PATH_BYTES)
    if text == "":
        return text
    if not text.startswith("/dev/"):
        raise ConfigError("console.port", text, 'must be a serial device under /dev/ (or "" '
                          "for no console); `launcher run --port` also takes pyserial URLs")
    _no_parent_steps("console.port", text)
    return text


def _boolean(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, value, "must be true or false")
    return value


def _list(key: str, value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise ConfigError(key, value, "must be a non-empty list")
    return value


# Each entry of a side's luck lists: a hazard is a probability, a shot's size a count of
# cards, a weight relative (only their sum, which must not be 0, makes them a distribution).
LUCK_RANGES: dict[str, tuple[float, float]] = {"hazard": (0.0, 1.0), "sizes": (1, 60),
                                               "weights": (0.0, math.inf)}


def side_luck(prefix: str, raw: Mapping[str, Any]) -> SideLuck:
    """Check one side's luck table; ``prefix`` is e.g. ``luck.mild``."""
    hazard = tuple(
        _number(f"{prefix}.hazard[{i}]", v, *LUCK_RANGES["hazard"])
        for i, v in enumerate(_list(f"{prefix}.hazard", raw["hazard"]))
    )
    if hazard[-1] != 1.0:
        raise ConfigError(
            f"{prefix}.hazard[{len(hazard) - 1}]", hazard[-1],
            "the last entry must be 1.0 (it caps the dry streak)",
        )
    sizes = tuple(
        _integer(f"{prefix}.sizes[{i}]", v, *map(int, LUCK_RANGES["sizes"]))
        for i, v in enumerate(_list(f"{prefix}.sizes", raw["sizes"]))
    )
    weights = tuple(
        _number(f"{prefix}.weights[{i}]", v, *LUCK_RANGES["weights"])
        for i, v in enumerate(_list(f"{prefix}.weights", raw["weights"]))
    )
    if len(weights) != len(sizes):
        raise ConfigError(
            f"{prefix}.weights", list(weights), f"must have one weight per size ({len(sizes)})"
        )
    if sum(weights) <= 0:
        raise ConfigError(f"{prefix}.weights", list(weights), "must not all be 0")
    return SideLuck(hazard, sizes, weights)


# --- the schema: which keys exist, and how each section becomes settings ---------------


def uses_i2s(audio_backend: str) -> bool:
    """Whether ``audio.backend`` implies the I2S amplifier: every backend but ``null``."""
    return audio_backend != "null"


def uses_uart(console_port: str) -> bool:
    """Whether ``console.port`` is the Pi's UART (GPIO 14/15)."""
    return console_port in UART_PORTS


def _why(pin: int) -> str:
    """Which key makes ``pin`` reserved, so the message says how to free it."""
    if pin in I2S:
        return ' while audio.backend is not "null"'
    if pin in UART:
        return f" while console.port is the UART ({UART_PORTS[0]})"
    return ""


def _pins(raw: Mapping[str, Any], reserved: Mapping[int, str] | None = None) -> Pins:
    """Check ``[pins]``: numbers in range, no pin twice, none that ``reserved`` holds."""
    reserved = reserved or {}
    values: dict[str, int | None] = {}
    for f in fields(Pins):
        v = _integer(f"pins.{f.name}", raw[f.name], -1 if f.name in Pins.OPTIONAL else
                     PIN_RANGE[0], PIN_RANGE[1])
        if v == -1:
            values[f.name] = None
        elif v in reserved:
            raise ConfigError(f"pins.{f.name}", v, f"reserved for {reserved[v]}{_why(v)}")
        else:
            values[f.name] = v
    used: dict[int, str] = {}
    for name, pin in values.items():
        if pin is None:
            continue
        if pin in used:
            raise ConfigError(f"pins.{name}", pin, f"already used by pins.{used[pin]}")
        used[pin] = name
    return Pins(**values)  # type: ignore[arg-type]


def _circuit_rules(pins: Pins) -> Pins:
    """The rules of the circuit (hal/circuit.py) a set of pins must keep: an output that
    must read low from power-on (nSLEEP, the dead-man line, the bridge inputs) never on a
    GPIO the Pi pulls up until software claims it."""
    for key, why in pin_problems(pins):
        raise ConfigError(f"pins.{key}", getattr(pins, key), why)
    return pins


# Every duration: its key in the file and the range it must lie in (in the key's unit).
# max_run_ms is capped where a stalled roller still does the motor and the driver no harm.
TIMING_RANGES: dict[str, tuple[str, float, float]] = {
    "debounce": ("debounce_ms", 0, 1000),
    "lid_pair": ("lid_pair_ms", 0, 1000),
    "mash_guard": ("mash_guard_ms", 0, 5000),
    "card_timeout": ("card_timeout_ms", 100, 10_000),
    "jam_timeout": ("jam_timeout_ms", 50, 10_000),
    "max_run": ("max_run_ms", 100, 15_000),
    "timed_card": ("timed_card_ms", 20, 2000),
    "rotation_timeout": ("rotation_timeout_ms", 200, 20_000),
    "sleep_after": ("sleep_after_s", 10, 86_400),
}


DEBUG_IDLE_RANGE = (10, 3600)  # s: `debug on` lapses after this long without a line

# Every other number the firmware reads, by its dotted key, and the range it must lie in (in
# the key's unit). With TIMING_RANGES, LUCK_RANGES and PIN_RANGE, the one schema of the
# numbers: ``settings_from_dict`` reads each through it, default.toml says each range beside
# its key, and the storage campaign (bench/storage_faults.py) tries each just outside it.
RANGES: dict[str, tuple[float, float]] = {
    "motor.speed": (0.1, 1.0),
    "motor.brake_ms": (10, 1000),
    "motor.lease_ms": (20, 1000),
    "rotator.brake_ms": (10, 2000),
    "rotator.creep_speed": (0.0, 1.0),
    "audio.volume": (0.0, 1.0),
    "console.debug_idle_s": DEBUG_IDLE_RANGE,
    "console.baud": (1200, 4_000_000),  # a whole number
    "luck.seed": (-1, math.inf),  # a whole number; -1: a fresh one at start
    "web.port": (1, 65535),  # a whole number
    "web.token_days": (1, 3650),
    "web.max_streams": (1, 64),  # a whole number
}
WHOLE = ("console.baud", "luck.seed", "web.port", "web.max_streams")
PIN_RANGE = (0, 27)  # BCM GPIO numbers; -1 (none) for the optional ones


def _ranged(raw: Mapping[str, Any], dotted: str) -> float:
    """The value of ``dotted`` in the whole raw table, within its range (``RANGES``)."""
    section, key = dotted.split(".")
    lo, hi = RANGES[dotted]
    if dotted in WHOLE:
        return _integer(dotted, raw[section][key], int(lo), None if hi == math.inf else int(hi))
    return _number(dotted, raw[section][key], lo, hi)


def _timing(raw: Mapping[str, Any]) -> Timing:
    values = {}
    for name, (key, lo, hi) in TIMING_RANGES.items():
        scale = 1.0 if key.endswith("_s") else 1000.0
        values[name] = _number(f"timing.{key}", raw[key], lo, hi) / scale
    return Timing(**values)


def _seed(raw: Mapping[str, Any]) -> int | None:
    seed = int(_ranged(raw, "luck.seed"))
    return None if seed == -1 else seed


def settings_from_dict(raw: Mapping[str, Any], circuit_rules: bool = True) -> Settings:
    """Check a complete raw dictionary (defaults already merged) and freeze it.

    ``circuit_rules`` False skips the circuit's wiring rules (``_circuit_rules``): for
    safe-stop, which must drive whatever pins a unit has low, however they are wired.
    """
    luck = raw["luck"]
    backend = _choice("audio.backend", raw["audio"]["backend"], AUDIO_BACKENDS)
    port = _console_port(raw["console"]["port"])
    pins = _pins(raw["pins"], reserved_pins(i2s=uses_i2s(backend), uart=uses_uart(port)))
    return Settings(
        pin_factory=_choice("board.pin_factory", raw["board"]["pin_factory"], PIN_FACTORIES),
        pins=_circuit_rules(pins) if circuit_rules else pins,
        luck=Luck(
            seed=_seed(raw),
            mild=side_luck("luck.mild", luck["mild"]),
            wild=side_luck("luck.wild", luck["wild"]),
        ),
        timing=_timing(raw["timing"]),
        motor=Motor(
            speed=_ranged(raw, "motor.speed"),
            brake=_boolean("motor.brake", raw["motor"]["brake"]),
            brake_time=_ranged(raw, "motor.brake_ms") / 1000,
            lease=_ranged(raw, "motor.lease_ms") / 1000,
        ),
        rotator=_rotator(raw),
        audio=Audio(
            backend=_choice("audio.backend", raw["audio"]["backend"], AUDIO_BACKENDS),
            pack=_pack(raw["audio"]["pack"]),
            volume=_ranged(raw, "audio.volume"),
        ),
        state_path=Path(_absolute("state.path", _path("state.path", raw["state"]["path"],
                                                      file=True), "in the state folder")),
        console=Console(
            port=port,
            baud=int(_ranged(raw, "console.baud")),
            debug_idle=_ranged(raw, "console.debug_idle_s"),
        ),
        profile=_profile(raw["game"]["profile"]),
        web=_web(raw),
    )



def _pack(value: Any) -> str:
    text = _path("audio.pack", value, file=False)
    _no_parent_steps("audio.pack", text)
    return text


def _rotator(whole: Mapping[str, Any]) -> Rotator:
    raw = whole["rotator"]
    brake = _ranged(whole, "rotator.brake_ms") / 1000
    creep = _ranged(whole, "rotator.creep_speed")
    if 0 < creep < CREEP_MIN:
        raise ConfigError("rotator.creep_speed", creep,
                          f"must be 0 (never turn back) or within {CREEP_MIN:g}..1")
    driver = _choice("rotator.driver", raw["driver"], ROTATOR_DRIVERS)
    return Rotator(brake=brake, creep_speed=creep, driver=driver)


ROTATOR_DRIVERS = ("shared", "own")


# A host the server binds: an IPv4 or IPv6 address, or a name (checked for its spelling only:
# the core resolves nothing).
_HOST = re.compile(r"[A-Za-z0-9._:%-]{1,253}")


def _web(whole: Mapping[str, Any]) -> Web:
    raw = whole["web"]
    host = _string("web.host", raw["host"], 253)
    if not _HOST.fullmatch(host):
        raise ConfigError("web.host", host, "must be an IP address (0.0.0.0: every interface) "
                          "or a host name")
    tls = {}
    for key in ("tls_cert", "tls_key"):
        text = _string(f"web.{key}", raw[key], PATH_BYTES)
        if text:
            text = _absolute(f"web.{key}", _path(f"web.{key}", text, file=True), "a PEM file")
        tls[key] = text
    if bool(tls["tls_cert"]) != bool(tls["tls_key"]):
        missing = "tls_key" if tls["tls_cert"] else "tls_cert"
        other = "tls_cert" if missing == "tls_key" else "tls_key"
        raise ConfigError(f"web.{missing}", "", f"must be given with web.{other} (both, or "
                          "neither for plain HTTP)")
    return Web(enabled=_boolean("web.enabled", raw["enabled"]), host=host,
               port=int(_ranged(whole, "web.port")), tls_cert=tls["tls_cert"],
               tls_key=tls["tls_key"], token_days=_ranged(whole, "web.token_days"),
               max_streams=int(_ranged(whole, "web.max_streams")))
CREEP_MIN = 0.05  # below this a gear motor does not start


def _profile(value: Any) -> Profile:
    try:
        return parse_profile(_string("game.profile", value))
    except ValueError as exc:
        raise ConfigError("game.profile", value, "must be one of " + ", ".join(NAMED)
                          + f", or deal N (N within 1..{DEAL_MAX})") from exc


# --- files ------------------------------------------------------------------------------


def default_text() -> str:
    """The commented default file, as shipped."""
    # Beside this package, as the sound packs are (launcher.firmware.sound.sounds_dir): the
    # launcher is installed as files. importlib.resources would read the same file and cost
    # `launcher run` its readers and zipfile at start.
    return (Path(__file__).resolve().parents[1] / "default.toml").read_text(encoding="utf-8")


def default_raw() -> dict[str, Any]:
    """The shipped defaults as a table of one's own (the caller may change it)."""
    return copy.deepcopy(_parsed_defaults())


@functools.cache
def _parsed_defaults() -> dict[str, Any]:
    # Parsed once per process: `launcher run` needs the defaults twice at start (the
    # settings, the console's config), and tomllib takes a few ms for the file.
    return tomllib.loads(default_text())


def merge(defaults: Mapping[str, Any], overrides: Mapping[str, Any], where: str = "") -> dict:
    """Overlay ``overrides`` on ``defaults``; a key the defaults lack is an error."""
    out = dict(defaults)
    for key, value in overrides.items():
        dotted = f"{where}{key}"
        if key not in defaults:
            raise ConfigError(dotted, value, "unknown key")
        if isinstance(defaults[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(dotted, value, "must be a table")
            out[key] = merge(defaults[key], value, f"{dotted}.")
        else:
            out[key] = value
    return out


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A TOML file's tables; a missing, non-UTF-8 or broken file is a ``ConfigError`` naming it."""
    return read_toml_text(path)[1]


def read_toml_text(path: str | os.PathLike[str]) -> tuple[str, dict[str, Any]]:
    """A TOML file's text and its tables, from one read (``read_toml``'s errors)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError("file", str(path), exc.strerror or str(exc)) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigError("file", str(path), f"not UTF-8: byte 0x{data[exc.start]:02x} on line "
                                             f"{line} (save the file as UTF-8)") from None
    return text, parse_toml(text, str(path))


def parse_toml(text: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("file", name, f"not valid TOML: {exc}") from exc
    except RecursionError:
        raise ConfigError("file", name, "not valid TOML: nested too deeply") from None


def load_raw(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The defaults with ``path`` laid over them (unchecked)."""
    raw = default_raw()
    if path is None:
        return raw
    return merge(raw, read_toml(path))


def load(path: str | os.PathLike[str] | None = None, circuit_rules: bool = True) -> Settings:
    """Read and check a config file (``None``: the defaults alone)."""
    return settings_from_dict(load_raw(path), circuit_rules)


def dotted_keys(raw: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every leaf key of ``raw`` as ``get_key`` names it: ``motor.lease_ms``, ..."""
    out: list[str] = []
    for k, v in raw.items():
        out += dotted_keys(v, f"{prefix}{k}.") if isinstance(v, dict) else [f"{prefix}{k}"]
    return out


def get_key(raw: Mapping[str, Any], dotted: str) -> Any:
    node: Any = raw
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise ConfigError(dotted, MISSING, "unknown key")
        node = node[part]
    return node


def set_key(raw: Mapping[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """A copy of ``raw`` with one key changed; the result is checked before it is returned."""
    get_key(raw, dotted)
    parts = dotted.split(".")

    def put(node: Mapping[str, Any], depth: int) -> dict[str, Any]:
        out = dict(node)
        out[parts[depth]] = value if depth == len(parts) - 1 else put(node[parts[depth]], depth + 1)
        return out

    if isinstance(get_key(raw, dotted), dict):
        raise ConfigError(dotted, value, "is a table; set one of its keys")
    new = put(raw, 0)
    settings_from_dict(new)
    return new


def parse_value(text: str) -> Any:
    """A console-typed value, read as a TOML value (``0.3``, ``[0.2, 1.0]``, ``true``, ``"x"``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word is a string
    except RecursionError:
        raise ConfigError("value", text[:40], "nested too deeply") from None


def to_toml(raw: Mapping[str, Any]) -> str:
    """A raw settings dictionary as TOML, written by a real TOML writer (``tomli-w``)."""
    import tomli_w

    return tomli_w.dumps(_plain(raw))


def set_in_toml(text: str, changes: Mapping[str, Any]) -> str:
    """``text`` (a TOML file) with each dotted key of ``changes`` set, written by
    ``tomlkit``: the file's comments, order and layout stay as they were, and a table the
    file lacks is added at its end."""
    import tomlkit

    doc = tomlkit.parse(text)
    for dotted, value in changes.items():
        *parts, last = dotted.split(".")
        node: Any = doc
        for part in parts:
            if part not in node:
                node[part] = tomlkit.table()
            node = node[part]
        node[last] = _plain(value)
    return tomlkit.dumps(doc)


def _plain(value: Any) -> Any:
    """Tuples as lists, so that the writer takes them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
