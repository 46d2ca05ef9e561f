"""Where the unit's files and devices may be: its state file in the state folder, its sound
packs in the sounds folders, its console on a tty.

The core checks a path's spelling (absolute, no NUL, no ``..`` step); this looks at the
disk, where links, devices and other users' files are. ``launcher config check``, the
console's ``config set`` and every start (``launcher run``, ``launcher play``) call
:func:`check_places`, so neither a config file nor the console can point the firmware
(root, on some units) at ``/etc/cron.d`` or ``/dev/sda``.

The state folder is the Pi's ``/var/lib/launcher`` (systemd's ``StateDirectory=``, and
``$STATE_DIRECTORY`` where systemd sets it), the user's own state folder
(``$XDG_STATE_HOME/launcher``, else ``~/.local/state/launcher``: ``launcher play`` and
``launcher run --simulated`` keep their state there), or a folder of this user's under the
temporary folder (``$TMPDIR``, else ``/tmp``: tests and benchmarks). Inside it, the state
file and every folder on its way must be this user's (or root's), and none of those folders
writable by other users.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from launcher.core.errors import ConfigError

if TYPE_CHECKING:
    from launcher.core.config import Settings

PI_STATE_FOLDER = Path("/var/lib/launcher")
ETC_SOUNDS = Path("/etc/launcher/sounds")  # where a maker's own packs go (sounds/README.md)
TTY_DRIVERS = Path("/proc/tty/drivers")


def _home(env: Mapping[str, str], var: str, *fallback: str) -> Path:
    base = env.get(var) or str(Path(env.get("HOME") or Path.home()).joinpath(*fallback))
    return Path(base)


def user_state_folder(env: Mapping[str, str] | None = None) -> Path:
    """The user's state folder for the launcher: ``$XDG_STATE_HOME/launcher``, else
    ``~/.local/state/launcher``."""
    return _home(os.environ if env is None else env, "XDG_STATE_HOME", ".local",
                 "state") / "launcher"


def user_sounds_folder(env: Mapping[str, str] | None = None) -> Path:
    """The user's own sound packs: ``$XDG_DATA_HOME/launcher/sounds``, else
    ``~/.local/share/launcher/sounds``."""
    return _home(os.environ if env is None else env, "XDG_DATA_HOME", ".local",
                 "share") / "launcher" / "sounds"


def state_folders(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every folder ``state.path`` may lie in, the Pi's first."""
    env = os.environ if env is None else env
    systemd = [Path(p) for p in env.get("STATE_DIRECTORY", "").split(":") if p]
    return [PI_STATE_FOLDER, *systemd, user_state_folder(env), Path(tempfile.gettempdir())]


def sounds_folders(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every folder a sound pack (and each file of it) may lie in."""
    from launcher.firmware.sound import sounds_dir

    return [sounds_dir(), ETC_SOUNDS, user_sounds_folder(env)]


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, roots: Iterable[Path]) -> Path | None:
    """The root of ``roots`` that ``path`` (resolved) lies strictly inside, if any."""
    for root in roots:
        if path != root and path.is_relative_to(root):
            return root
    return None


def _others_may_write(st: os.stat_result) -> bool:
    # Group write counts only for a group other than this user's own (a user private group
    # with umask 002 makes every folder group-writable, to no one else).
    return bool(st.st_mode & stat.S_IWOTH) or (
        bool(st.st_mode & stat.S_IWGRP) and st.st_gid != os.getegid())


def check_state_path(path: Path, env: Mapping[str, str] | None = None) -> None:
    """Refuse a ``state.path`` outside the state folder, or one that others could swap."""
    folders = state_folders(env)
    roots = [_real(r) for r in folders]
    real = _real(path)
    root = _inside(real, roots)
    if root is None:
        pi, *others = dict.fromkeys(str(r) for r in folders)
        temp = others.pop() if others else tempfile.gettempdir()
        also = "".join(f"{o}, " for o in others)
        raise ConfigError("state.path", str(path), f"must be in the state folder {pi} (or "
                                                   f"{also}or a folder of this user's under "
                                                   f"{temp})")
    me = os.geteuid()
    owners = {me, 0}
    if me == 0:  # root (`sudo launcher ...`) may use the service user's own state folder
        with contextlib.suppress(OSError):
            owners.add(os.stat(root).st_uid)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigError("state.path", str(path), f"cannot be read ({exc.strerror})") from None
    else:
        if stat.S_ISLNK(st.st_mode):
            raise ConfigError("state.path", str(path), f"is a symbolic link (to {real}); "
                                                       "name the file itself")
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError("state.path", str(path), "is not a regular file")
        if st.st_uid not in owners:
            raise ConfigError("state.path", str(path), f"belongs to another user "
                                                       f"(uid {st.st_uid})")
    # Every folder from the file's up to the state folder (the state folder itself only
    # when the file is right in it): this user's, and closed to other writers.
    folder = real.parent
    while True:
        try:
            st = os.stat(folder)
        except FileNotFoundError:
            st = None  # made by the first save, as this user's
        if st is not None:
            if st.st_uid not in owners:
                raise ConfigError("state.path", str(path), f"is in {folder}, a folder of "
                                                           f"another user's (uid {st.st_uid})")
            if _others_may_write(st):
                raise ConfigError("state.path", str(path), f"is in {folder}, a folder other "
                                                           "users may write to (one could "
                                                           "swap the file): name a file in "
                                                           "a folder of your own (mkdir -m "
                                                           f"700 {folder / 'mine'})")
        if folder == root or folder.parent == root:
            return
        folder = folder.parent


# The names a serial line has under /dev before it is there: ttyS0, ttyAMA0, ttyUSB0,
# ttyACM0, ttyGS0 (the gadget), serial0 (the Pi's alias), rfcomm0, serial/by-id/...
SERIAL_NAMES = ("tty", "serial", "rfcomm")


def check_console_port(port: str, drivers: Path = TTY_DRIVERS) -> None:
    """Refuse a ``console.port`` that is not a tty (a disk, /dev/null, /dev/mem); the core
    has refused a URL already (``launcher run --port`` takes those).

    A port that is not there yet (a USB adapter, the gadget's ttyGS0 before a host comes)
    is kept if its name is a serial line's (``SERIAL_NAMES``): the firmware opens it when it
    appears, and looks again then (``SerialTransport``); a name like /dev/sda is refused
    even on a machine that has no such disk. The device is never opened here: opening some
    devices does something (a watchdog starts its countdown).
    """
    if port == "":
        return
    try:
        st = os.stat(port)
    except FileNotFoundError:
        if not _real(port).is_relative_to("/dev"):
            raise ConfigError("console.port", port, "is a link out of /dev") from None
        if not _serial_name(Path(port)):
            raise ConfigError("console.port", port, "is not there, and not the name of a "
                                                    "serial line (/dev/tty*, /dev/serial*, "
                                                    "/dev/rfcomm*)") from None
        return
    except OSError as exc:
        raise ConfigError("console.port", port, f"cannot be read ({exc.strerror})") from None
    if not stat.S_ISCHR(st.st_mode):
        raise ConfigError("console.port", port, "is not a serial device (a character device "
                                                "that is a tty)")
    if not is_tty_device(st.st_rdev, drivers):
        raise ConfigError("console.port", port, "is a character device but not a serial "
                                                "line (/proc/tty/drivers)")


def _serial_name(port: Path) -> bool:
    """Whether ``port`` is named as a serial line is under /dev (``SERIAL_NAMES``)."""
    parts = port.parts
    return (len(parts) >= 3 and parts[:2] == ("/", "dev")
            and parts[2].startswith(SERIAL_NAMES) and (len(parts) == 3 or parts[2] == "serial"))


def is_tty_device(rdev: int, drivers: Path = TTY_DRIVERS) -> bool:
    """Whether device number ``rdev`` is a serial line: a row of ``/proc/tty/drivers``
    (``name  /dev/ttyS  4  64-111  serial``) whose major and minor range hold it. Rows of
    the types ``system`` (/dev/tty, /dev/console, /dev/ptmx) and ``pty:master`` are no line."""
    major, minor = os.major(rdev), os.minor(rdev)
    try:
        rows = drivers.read_text().splitlines()
    except OSError:
        return False
    for row in rows:
        words = row.split()
        if (len(words) < 5 or words[2] != str(major)
                or words[4] == "pty:master" or words[4].partition(":")[0] == "system"):
            continue
        lo, _, hi = words[3].partition("-")
        if lo.isdigit() and int(lo) <= minor <= int(hi or lo):
            return True
    return False


def check_audio_pack(pack: str, env: Mapping[str, str] | None = None) -> None:
    """Refuse a pack, or a file its manifest names, outside the sounds folders, and a
    manifest entry that is not a regular file (a FIFO or a device would hang the start)."""
    from launcher.firmware.sound import pack_path, read_manifest

    folders = sounds_folders(env)
    roots = [_real(r) for r in folders]
    root = pack_path(pack)
    where = ", ".join(str(f) for f in folders)
    if _inside(_real(root), roots) is None:
        raise ConfigError("audio.pack", pack, f"must be a pack in a sounds folder ({where})")
    try:
        table = read_manifest(root)
    except ConfigError:
        return  # no readable manifest: loading the pack says so
    for cue, name in table.items():
        real = _real(root / name)
        if _inside(real, roots) is None:
            raise ConfigError("audio.pack", pack, f"cue {cue}: {name} is outside the sounds "
                                                  f"folders ({where})")
        try:
            st = os.stat(real)
        except OSError:
            continue  # missing or unreadable: loading the pack says so
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError("audio.pack", pack, f"cue {cue}: {name} is not a regular file")


def check_places(settings: Settings, keys: Iterable[str] | None = None) -> None:
    """Check the state path, the console port and the sound pack of ``settings`` (only
    those of ``keys``, dotted config keys, when given); a ``ConfigError`` names the key."""
    wanted = None if keys is None else set(keys)
    if wanted is None or "state.path" in wanted:
        check_state_path(settings.state_path)
    if wanted is None or "console.port" in wanted:
        check_console_port(settings.console.port)
    if wanted is None or "audio.pack" in wanted:
        check_audio_pack(settings.audio.pack)
