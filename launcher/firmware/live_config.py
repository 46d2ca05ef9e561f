"""The configuration as the console changes it, and `config save`, which writes it.

Each change is checked as a config file is (then the unit's own places, then a sound pack
that must load), refused without `debug on` where it could make a motor run longer,
harder or on other pins (the debug gate), and applied to the running launcher where the
key takes effect live. `config save` merges the changed keys into the file as it is on
disk now, keeping its comments and layout (tomlkit), and writes it atomically. The config
commands, `config get`, `config set` and `config save`, are registered here.

One ``LiveConfig`` per running launcher: every console on it (the serial one, each web
session) shares it, so that a value one sets is the value the others read and save. Whose
`debug on` opens the gate is the session that asks, passed to each change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.core import config
from launcher.core.errors import ConfigError
from launcher.core.machine import MachineSettings
from launcher.core.profiles import Profile
from launcher.firmware import places
from launcher.firmware.disk import atomic_write
from launcher.firmware.registry import (
    E_DEBUG,
    E_IO,
    E_STATE,
    E_UNAVAILABLE,
    E_VALUE,
    Args,
    CommandError,
    Registry,
)
from launcher.firmware.sound import load_pack

if TYPE_CHECKING:
    from launcher.core.config import Settings
    from launcher.firmware.app import Launcher
    from launcher.firmware.session import Session

# Config keys that take effect on the running launcher. Everything else (pins, audio, the
# state file, the console itself, the seed, and the debounce window, which the shell reads
# when it wires the inputs) is written by `config save` and used after a restart.
_LIVE_PREFIXES = ("luck.mild.", "luck.wild.", "timing.", "motor.", "console.debug_idle_s")
_RESTART_KEYS = ("timing.debounce_ms",)

# The debug gate on configuration. Without `debug on` nothing the console changes may make
# the roller or the rotator run longer, harder or on other pins than the config the
# launcher started with allows, or `motor run`'s cap would be a formality (max_run_ms
# 15000 + card_timeout_ms 10000 + a slow roller + `profile deal 30` ran it for 15 s).
# Gated by prefix, so keys added later are gated too: every motor, rotator and pin key, the
# pin factory (it decides how IN1 is driven), and every timing key but the two below, which
# only decide when a press is taken or when the launcher sleeps, never how long a run lasts
# (debounce_ms is gated: it decides whether the exit beam counts each card).
GATED_PREFIXES = ("motor.", "timing.", "rotator.", "pins.", "board.")
UNGATED_KEYS = ("timing.mash_guard_ms", "timing.sleep_after_s")
# Keys that move where the unit writes its files: gated too, and checked against the state
# folder whatever the mode (launcher.firmware.places).
FILE_PREFIXES = ("state.",)
# What a session over the network (the web panel's) may never set, `debug on` or not: how
# the network reaches the unit (a phone could lock the family out, or point TLS at another
# file), and where its files are. The unit's own console sets them.
LOCAL_PREFIXES = ("web.", *FILE_PREFIXES)
# Shot sizes bound a run too (the roller runs until that many cards are out), so without
# `debug on` a press may not ask for more cards than the started config's largest shot
# (either side; 12 with the defaults), unless the launcher knows it holds them (`deal N`
# with `load N`: a shot never asks for more than the known inventory). Hazards and weights
# only change how often and which of those sizes: not gated.


class LiveConfig:
    """The configuration as it should be saved (``raw``), and as the launcher runs it."""

    def __init__(self, app: Launcher, raw_config: dict[str, Any] | None,
                 path: Path | None, seed: int | None = None) -> None:
        self.app = app
        self.path = path
        # The luck seed the firmware started with (its owner drew it: `--seed`, luck.seed or
        # a fresh one), then the last `seed N`; None: luck.seed says.
        self.seed = seed
        self.raw: dict[str, Any] = (copy.deepcopy(raw_config) if raw_config is not None
                                    else config.load_raw(path))
        self.running_raw: dict[str, Any] = copy.deepcopy(self.raw)
        # The largest shot a press may ask for without `debug on` (see GATED_PREFIXES).
        self.shot_cap = _largest_shot(self.raw)
        self.unsaved: set[str] = set()
        # What a console session reads of the running configuration (the launcher is handed
        # the machine's part of it): how long `debug on` lasts without a line.
        self.debug_idle = self.running().console.debug_idle
        # The config file as `config save` last saw it (at start, then after each save): a
        # key that differs on disk now was edited underneath the firmware.
        self._file_seen: dict[str, Any] | None = self._read_file()

    def running(self) -> Settings:
        """The configuration as the launcher runs it now (its live changes in)."""
        return config.settings_from_dict(self.running_raw)

    def apply(self, changes: dict[str, Any], session: Session) -> bool:
        """Check ``changes`` as a config file is checked, gated by ``session``'s `debug on`;
        apply the live ones. True if live. A remote session's change of LOCAL_PREFIXES is
        refused before its value is read."""
        if session.remote:
            for key in changes:
                if key.startswith(LOCAL_PREFIXES):
                    raise CommandError(E_UNAVAILABLE, f"{key} is set on the unit's own console, "
                                                      "not over the network")
        new = self.raw
        for key, value in changes.items():
            try:
                new = _put(new, key, value)
            except ConfigError as exc:
                raise CommandError(E_VALUE, str(exc)) from None
        try:
            settings = config.settings_from_dict(new)
            # A path or a device outside the unit's own, whatever the mode (and before a
            # pack is read); then a pack that is not there, which would stop the start.
            places.check_places(settings, changes)
            if "audio.pack" in changes:
                _check_pack(settings.audio.pack)
        except ConfigError as exc:
            raise CommandError(E_VALUE, str(exc)) from None
        self._gate(changes, settings, session)
        live = {k: v for k, v in changes.items() if _is_live(k)}
        if live:
            running = self.running_raw
            for key, value in live.items():
                running = _put(running, key, value)
            try:
                settings = config.settings_from_dict(running)
            except ConfigError as exc:
                raise CommandError(E_VALUE, str(exc)) from None
            self.app.retune(MachineSettings.of(settings))
            self.debug_idle = settings.console.debug_idle
            self.running_raw = running
            self._clamp_streak(settings)
            session.lasts()  # a new console.debug_idle_s counts from now
        self.raw = new
        self.unsaved.update(changes)
        return len(live) == len(changes)

    def _clamp_streak(self, settings: Settings) -> None:
        """A hazard curve made shorter while the launcher runs: a dry streak longer than the
        new curve allows is cut to its maximum (where the next press shoots), so the status
        never shows a streak the luck table cannot reach."""
        mem = self.app.machine.memory
        longest = settings.luck.side(mem.side).max_dry
        if mem.streak.count > longest:
            mem.streak.count = longest

    def _gate(self, changes: Mapping[str, Any], settings: Settings, session: Session) -> None:
        """Refuse, without `debug on`, a valid change to how or how long the motors run."""
        if session.debug:
            return
        for key in changes:
            if is_gated(key):
                raise CommandError(E_DEBUG, f"{key} changes how or how long the motors run: "
                                            "send `debug on` first")
            if key.startswith(FILE_PREFIXES):
                raise CommandError(E_DEBUG, f"{key} moves the unit's files: send `debug on` "
                                            "first")
            side, _, name = key.removeprefix("luck.").partition(".")
            if name == "sizes" and side in config.SIDES:
                largest = max(settings.luck.side(side).sizes)
                if largest > self.shot_cap:
                    raise CommandError(E_DEBUG, f"{key}: a shot of {largest} cards is more "
                                                f"than the largest ({self.shot_cap}) the "
                                                "launcher started with: send `debug on` first")
            if key == "game.profile":
                self.gate_profile(settings.profile, key, session)

    def gate_profile(self, profile: Profile, what: str, session: Session) -> None:
        """Refuse, without `debug on`, a profile whose press shoots beyond the stock: more
        cards than the launcher is known to hold, or, with the count unknown, more than the
        largest shot the launcher started with."""
        n = profile.per_press
        if session.debug or n is None or n <= self.shot_cap:
            return
        known = self.app.machine.memory.inventory
        if known is not None and n <= known:
            return
        held = ("with the inventory unknown (`load N` sets it)" if known is None
                else f"and the {known} cards loaded")
        raise CommandError(E_DEBUG, f"{what} shoots {n} cards a press, more than the largest "
                                    f"shot ({self.shot_cap}) {held}: send `debug on` first")

    def get(self, key: str) -> dict[str, Any]:
        """`config get KEY`: the value to be saved, and the running one where they differ."""
        try:
            value = config.get_key(self.raw, key)
        except ConfigError as exc:
            raise CommandError(E_VALUE, str(exc)) from None
        if isinstance(value, dict):
            raise CommandError(E_VALUE, f"{key} is a table; ask for one of its keys: "
                                        + ", ".join(value))
        out = {key: value}
        running = config.get_key(self.running_raw, key)
        if running != value:
            out["running"] = running  # changed, but it takes effect after a restart
        return out

    def _read_file(self) -> dict[str, Any] | None:
        """The config file's own tables as they are on disk ({} if there is none; None if
        it cannot be read)."""
        path = self.path
        if path is None or not path.exists():
            return {}
        try:
            return config.read_toml(path)
        except ConfigError:
            return None

    def save(self) -> dict[str, Any]:
        """`config save`: merge the unsaved keys into the file as it is now, and write it."""
        path = self.path
        if path is None:
            raise CommandError(E_UNAVAILABLE, "no config file: the launcher started on the "
                                              "defaults (give it --config FILE)")
        if not self.unsaved:
            return {"path": str(path), "saved": 0, "written": False,
                    "reason": "nothing changed since the last save"}
        # Merge into the file as it is now: edits made to it while the firmware ran stay.
        try:
            text, on_disk = config.read_toml_text(path) if path.exists() else ("", {})
        except ConfigError as exc:
            raise CommandError(E_IO, f"cannot merge into {path}: {exc}") from None
        seen = self._file_seen if self._file_seen is not None else {}
        keys = sorted(self.unsaved)
        clashes = [k for k in keys
                   if _lookup(on_disk, k) != _lookup(seen, k)
                   and _lookup(on_disk, k) != config.get_key(self.raw, k)]
        if clashes:
            raise CommandError(E_STATE, f"{path} was edited since the firmware read it, "
                                        f"and so were {', '.join(clashes)}: not saved (edit "
                                        "the file, or `config set` those keys again to its "
                                        "values)")
        merged = copy.deepcopy(on_disk)
        defaults = config.default_raw()
        changes: dict[str, Any] = {}
        for key in keys:
            value = config.get_key(self.raw, key)
            if _lookup(on_disk, key) is _ABSENT and value == config.get_key(defaults, key):
                continue  # back to the default and not in the file: nothing to write
            if _lookup(on_disk, key) != value:
                changes[key] = value
            _store(merged, key, value)
        try:
            config.settings_from_dict(config.merge(defaults, merged))
        except ConfigError as exc:
            raise CommandError(E_VALUE, f"the file with these changes would not load: {exc}"
                               ) from None
        saved = len(self.unsaved)
        if merged == on_disk:
            self.unsaved.clear()
            self._file_seen = on_disk
            return {"path": str(path), "saved": saved, "written": False,
                    "reason": "the file already holds these values"}
        if text.strip():
            # The file as it is, with these keys changed: its comments and layout stay.
            text = config.set_in_toml(text, changes)
        else:
            text = ("# Written by the console's `config save`: the file's own keys with the\n"
                    "# console's changes (launcher/default.toml documents every key).\n\n"
                    + config.to_toml(merged))
        try:
            # The file keeps its mode and owner (the installer makes it 0644, so that the
            # self-test runs as the maker's user); a new one is readable by all, as there.
            atomic_write(path, text, keep_mode=True, new_mode=0o644)
        except OSError as exc:
            raise CommandError(E_IO, f"cannot write {path}: {exc.strerror or exc}") from None
        self.unsaved.clear()
        self._file_seen = merged
        return {"path": str(path), "saved": saved, "written": True}


def register_config_commands(reg: Registry, live: LiveConfig, session: Session) -> None:
    """`config get`, `config set` and `config save`, for a console's ``session``."""

    def config_set(a: Args) -> dict[str, Any]:
        key = a.word(0)
        value = config.parse_value(a.rest(1))
        now = live.apply({key: value}, session)
        return {key: value, "applied": "now" if now else "restart",
                "unsaved": len(live.unsaved)}

    reg.register("config get", "KEY", "one config value, e.g. timing.jam_timeout_ms",
                 lambda a: live.get(a.word(0)), min_args=1, max_args=1)
    reg.register("config set", "KEY VALUE", "change a config value (checked as the file is)",
                 config_set, min_args=2, max_args=None)
    reg.register("config save", "", "write the changed keys to the config file",
                 lambda a: live.save())


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT: Any = _Absent()


def _lookup(table: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` in a config file's tables, or ``_ABSENT``."""
    try:
        return config.get_key(table, dotted)
    except ConfigError:
        return _ABSENT


def _store(table: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``dotted`` in a config file's tables, making the tables on its way."""
    *parts, last = dotted.split(".")
    node = table
    for part in parts:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value


def _put(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``raw`` with one key changed, not yet checked as a whole.

    ``config.set_key`` checks after every key, so a side's sizes and weights could never
    change length together; ``LiveConfig.apply`` checks once, after all of them.
    """
    if isinstance(config.get_key(raw, key), dict):  # and ConfigError for a key not there
        raise ConfigError(key, value, "is a table; set one of its keys")
    out = copy.deepcopy(raw)
    _store(out, key, value)
    return out


def _check_pack(pack: str) -> None:
    """Load the sound pack ``pack`` names, as the start does; ConfigError if it cannot be."""
    try:
        load_pack(pack)
    except ConfigError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:  # the file system refused the path
        raise ConfigError("audio.pack", pack, f"cannot be read ({type(exc).__name__}: "
                                              f"{exc})") from None


def _is_live(key: str) -> bool:
    return key.startswith(_LIVE_PREFIXES) and key not in _RESTART_KEYS


def is_gated(key: str) -> bool:
    """Whether ``config set KEY`` needs `debug on` whatever the value (GATED_PREFIXES)."""
    return key.startswith(GATED_PREFIXES) and key not in UNGATED_KEYS


def _largest_shot(raw: Mapping[str, Any]) -> int:
    """The most cards one press of ``raw``'s luck tables can ask for (either side)."""
    try:
        return max(max(config.side_luck(f"luck.{side}", raw["luck"][side]).sizes)
                   for side in config.SIDES)
    except (KeyError, TypeError, ValueError):
        return _largest_shot(config.default_raw()) if raw != config.default_raw() else 1
