"""The unit's paths stay its own (issue 31, item 2): `config set state.path
/etc/cron.d/launcher` and `config set console.port /dev/sda` were taken without `debug on`
and written by `config save`.

Property tests over hostile paths (links out, ``..``, NUL, devices, FIFOs, other users'
files and folders, folders anyone may write to): whatever is accepted, the firmware's own
write lands inside the state folder and changes nothing outside it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.cli.main import main
from launcher.core import config
from launcher.core.errors import ConfigError
from launcher.firmware import places
from launcher.firmware.console import Console
from launcher.firmware.disk import atomic_write
from launcher.firmware.registry import E_DEBUG, E_VALUE
from launcher.sim.rig import SimRig

ROOT = os.geteuid() == 0
OTHER_UID = 54321  # nobody's: a user who is not this one


def _refused_in_one_line(exc: ConfigError, key: str) -> None:
    text = str(exc)
    assert text.startswith(f"{key} = ") and "\n" not in text, text


# --- state.path ----------------------------------------------------------------------------


class World:
    """A state folder with every kind of trap in it, and a folder outside it to protect."""

    NAMES = ("good.json", "sub", "open", "theirs", "theirs.json", "fifo", "null", "out",
             "in", "file_link", "..", ".", "", "secret.json", "new.json", "new")

    def __init__(self, tmp: Path) -> None:
        self.env = {"XDG_STATE_HOME": str(tmp / "xdg"), "HOME": str(tmp / "home")}
        self.state = tmp / "xdg" / "launcher"
        self.temp = tmp / "temp"  # the temporary folder, for this test
        self.outside = tmp / "outside"
        for folder in (self.state / "sub", self.temp / "mine", self.outside,
                       self.state / "open", self.state / "theirs"):
            folder.mkdir(parents=True)
        (self.state / "open").chmod(0o777)
        (self.state / "good.json").write_text("{}")
        (self.outside / "secret.json").write_text("keep me")
        (self.state / "theirs.json").write_text("theirs")
        os.mkfifo(self.state / "fifo")
        (self.state / "null").symlink_to("/dev/null")
        (self.state / "out").symlink_to(self.outside)
        (self.state / "in").symlink_to(self.state / "sub")
        (self.state / "file_link").symlink_to(self.state / "good.json")
        if ROOT:
            os.chown(self.state / "theirs", OTHER_UID, OTHER_UID)
            os.chown(self.state / "theirs.json", OTHER_UID, OTHER_UID)
        # Not /var/lib/launcher: an accepted path is written to (the Pi's state folder is
        # one of the state folders, and this machine's must stay as it is).
        self.bases = [str(self.state), str(self.temp), str(self.temp / "mine"),
                      str(self.outside), "/etc/cron.d", "/dev", "/var/lib/launcher/../.."]

    def snapshot(self) -> dict[str, bytes]:
        """Every file outside the state folder that a write must never touch."""
        out = {str(p): p.read_bytes() for p in self.outside.rglob("*") if p.is_file()}
        out["theirs.json"] = (self.state / "theirs.json").read_bytes()
        return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("places"))


@pytest.fixture
def temp_is(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(world.temp))


hostile = st.tuples(st.integers(0, 6), st.lists(st.sampled_from(World.NAMES), max_size=4),
                    st.sampled_from(["", "\0", "x\0y"]))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile)
def test_an_accepted_state_path_writes_inside_the_state_folder_only(
        world: World, temp_is: None, case: tuple[int, list[str], str]) -> None:
    base, names, tail = case
    text = "/".join([world.bases[base], *names]) + tail
    try:
        raw = config.set_key(config.default_raw(), "state.path", text)  # the spelling
        path = config.settings_from_dict(raw).state_path
        places.check_state_path(path, world.env)  # the disk
    except ConfigError as exc:
        _refused_in_one_line(exc, "state.path")
        return
    before = world.snapshot()
    atomic_write(path, '{"side": "mild"}')  # what the state writer does with it
    real = Path(os.path.realpath(path))
    assert real.is_relative_to(world.state.resolve()) or real.is_relative_to(world.temp)
    assert stat.S_ISREG(os.lstat(path).st_mode)
    assert world.snapshot() == before  # nothing outside changed, nor another user's file


@pytest.mark.parametrize(("path", "reason"), [
    ("{state}/out/secret.json", "must be in the state folder"),
    ("{state}/null", "must be in the state folder"),  # a link to /dev/null
    ("{state}/fifo", "is not a regular file"),
    ("{state}/sub", "is not a regular file"),
    ("{state}/file_link", "is a symbolic link"),
    ("{state}/open/s.json", "a folder other users may write to"),
    ("{temp}/s.json", "a folder other users may write to"),  # right in /tmp
    ("/etc/cron.d/launcher", "must be in the state folder /var/lib/launcher (or {state}, "
                             "or a folder of this user's under {temp})"),
])
def test_state_paths_that_leave_or_can_be_swapped_are_refused(
        world: World, temp_is: None, path: str, reason: str) -> None:
    world.temp.chmod(0o1777)  # as /tmp is
    try:
        with pytest.raises(ConfigError) as err:
            places.check_state_path(Path(path.format(state=world.state, temp=world.temp)),
                                    world.env)
    finally:
        world.temp.chmod(0o755)
    assert reason.format(state=world.state, temp=world.temp) in str(err.value)
    _refused_in_one_line(err.value, "state.path")


@pytest.mark.skipif(not ROOT, reason="making another user's files needs root")
@pytest.mark.parametrize("name", ["theirs.json", "theirs/s.json"])
def test_another_users_file_or_folder_is_refused(world: World, temp_is: None,
                                                 name: str) -> None:
    # Root may use the service user's own state folder (sudo launcher run on a Pi), but not
    # a file or folder of some other user's inside it.
    with pytest.raises(ConfigError, match="another user"):
        places.check_state_path(world.state / name, world.env)


@pytest.mark.parametrize("text", ["state.json", "~/s.json", "/var/lib/launcher/../s.json",
                                  "/var/lib/launcher/a\0b.json"])
def test_the_core_refuses_relative_paths_dot_dot_and_nul(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        config.set_key(config.default_raw(), "state.path", text)
    _refused_in_one_line(err.value, "state.path")


def test_the_places_of_play_run_simulated_and_the_tests_are_accepted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from launcher.cli.paths import simulated_state, state_dir

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    defaults = config.load()
    for settings_ in (defaults, simulated_state(defaults, "play-state.json"),
                      simulated_state(defaults, "run-state.json")):
        places.check_places(settings_)  # the Pi's, and the user's state folder
    assert state_dir() == places.user_state_folder() == tmp_path / "xdg" / "launcher"
    places.check_state_path(tmp_path / "s.json")  # a test's own folder under /tmp
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "systemd"))
    assert tmp_path / "systemd" in places.state_folders()


# --- console.port ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pty_slave() -> str:
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(slave)
    os.close(master)


def test_a_tty_or_a_port_still_to_come_is_accepted(pty_slave: str, tmp_path: Path) -> None:
    link = tmp_path / "ttyLAUNCHER"
    link.symlink_to(pty_slave)
    for port in ("", pty_slave, str(link), "/dev/ttyUSB9", "/dev/serial/by-id/usb-x"):
        places.check_console_port(port)


@pytest.mark.parametrize("port", ["/dev/sdz9", "/dev/nvme9n1", "/dev/mem-to-come", "/dev/x",
                                  "/dev/serialx/y", "/dev/ttyfake/../sdz9"])
def test_a_port_not_there_must_be_named_as_a_serial_line(port: str) -> None:
    """Issue 44: `config set console.port /dev/sda` was taken on a machine with no sda."""
    assert not os.path.exists(port)
    with pytest.raises(ConfigError) as err:
        places.check_console_port(port)
    _refused_in_one_line(err.value, "console.port")


@pytest.mark.parametrize("port", ["/dev/ttyACM7", "/dev/rfcomm3", "/dev/serial1",
                                  "/dev/serial/by-path/platform-x"])
def test_a_serial_line_still_to_come_is_accepted(port: str) -> None:
    places.check_console_port(port)


@pytest.mark.parametrize("port", ["/dev/null", "/dev/zero", "/dev/ptmx", "/dev/tty",
                                  "/dev/full", "{tmp}/file", "{tmp}/null-link", "/dev/shm"])
def test_a_device_that_is_no_serial_line_is_refused(port: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "null-link").symlink_to("/dev/null")
    port = port.format(tmp=tmp_path)
    if not os.path.exists(port):
        pytest.skip(f"no {port} here")
    with pytest.raises(ConfigError) as err:
        places.check_console_port(port)
    _refused_in_one_line(err.value, "console.port")


def test_a_block_device_is_refused(tmp_path: Path) -> None:
    """/dev/sda of the issue: a block device (made here, as the container has no disk)."""
    if not ROOT:
        pytest.skip("mknod needs root")
    disk = tmp_path / "sda"
    try:
        os.mknod(disk, 0o600 | stat.S_IFBLK, os.makedev(8, 0))
    except PermissionError:
        pytest.skip("no mknod here")
    with pytest.raises(ConfigError, match="is not a serial device"):
        places.check_console_port(str(disk))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(f"/dev/{n}" for n in os.listdir("/dev"))))
def test_an_accepted_device_is_a_tty(port: str) -> None:
    try:
        places.check_console_port(port)
    except ConfigError as exc:
        _refused_in_one_line(exc, "console.port")
        return
    if not os.path.exists(port):
        return  # a dangling link under /dev: a port to come
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)  # only a tty gets here
    try:
        assert os.isatty(fd), port
    finally:
        os.close(fd)


def test_the_proc_table_is_read_by_major_and_minor_range(tmp_path: Path) -> None:
    table = tmp_path / "drivers"
    table.write_text("/dev/tty             /dev/tty        5       0 system:/dev/tty\n"
                     "serial               /dev/ttyS       4 64-111 serial\n"
                     "g_serial             /dev/ttyGS    240   0-3 serial\n"
                     "pty_master           /dev/ptm      128 0-1048575 pty:master\n")
    assert places.is_tty_device(os.makedev(4, 64), table)
    assert places.is_tty_device(os.makedev(240, 3), table)
    assert not places.is_tty_device(os.makedev(240, 4), table)
    assert not places.is_tty_device(os.makedev(5, 0), table)  # /dev/tty
    assert not places.is_tty_device(os.makedev(128, 2), table)  # a pty's master
    assert not places.is_tty_device(os.makedev(4, 64), tmp_path / "missing")


# --- audio.pack ---------------------------------------------------------------------------


def test_sound_packs_stay_in_the_sounds_folders(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    mine = places.user_sounds_folder(env)
    outside = tmp_path / "outside"
    for folder in (mine / "ok", mine / "leaky", mine / "piped", outside):
        folder.mkdir(parents=True)
    (outside / "x.wav").write_bytes(b"")
    (mine / "ok" / "manifest.toml").write_text('[cues]\nwake = "wake.wav"\n')
    (mine / "leaky" / "manifest.toml").write_text('[cues]\nwake = "../../../../outside/x.wav"\n')
    (mine / "piped" / "manifest.toml").write_text('[cues]\nwake = "fifo.wav"\n')
    os.mkfifo(mine / "piped" / "fifo.wav")  # would hang the start's read
    (mine / "link").symlink_to(outside)
    places.check_audio_pack("default", env)
    places.check_audio_pack(str(mine / "ok"), env)
    for pack, reason in [(str(mine / "leaky"), "is outside the sounds folders"),
                         (str(mine / "piped"), "is not a regular file"),
                         (str(mine / "link"), "must be a pack in a sounds folder"),
                         (str(outside), "must be a pack in a sounds folder"),
                         ("/etc", "must be a pack in a sounds folder")]:
        with pytest.raises(ConfigError) as err:
            places.check_audio_pack(pack, env)
        assert reason in str(err.value)
        _refused_in_one_line(err.value, "audio.pack")
    with pytest.raises(ConfigError, match=r"must not contain a \.\. step"):
        config.set_key(config.default_raw(), "audio.pack", "../../etc")


# --- where they are checked: config set, config check, the start -------------------------


@pytest.fixture
def console() -> Console:
    rig = SimRig()
    c = Console(rig.app, sim=rig.sim)
    yield c
    c.close()
    rig.close()


def _final(c: Console, line: str) -> str:
    return c.handle_line(line)[-1]


def test_config_set_gates_the_state_path_and_checks_every_place(console: Console) -> None:
    assert _final(console, "config set state.path /var/lib/launcher/other.json").startswith(
        f"error {E_DEBUG} state.path moves the unit's files")
    for debug in ("off", "on"):  # a bad value is a value error first, in either mode
        console.handle_line(f"debug {debug}")
        reply = _final(console, "config set state.path /etc/cron.d/launcher")
        assert reply.startswith(f"error {E_VALUE} state.path = '/etc/cron.d/launcher': must "
                                "be in the state folder /var/lib/launcher")
    assert _final(console, "config set console.port /dev/null").startswith(
        f"error {E_VALUE} console.port = '/dev/null': is a character device but not a serial")
    assert _final(console, "config set console.port /dev/sdz9").startswith(  # no such disk
        f"error {E_VALUE} console.port = '/dev/sdz9': is not there, and not the name of a "
        "serial line")
    assert _final(console, "config set console.port /dev/ttyUSB7").startswith(  # to come
        "ok console.port=/dev/ttyUSB7 applied=restart")
    assert _final(console, "config set audio.pack /etc").startswith(
        f"error {E_VALUE} audio.pack = '/etc': must be a pack in a sounds folder")
    assert _final(console, "config set state.path /var/lib/launcher/other.json").startswith(
        "ok state.path=/var/lib/launcher/other.json applied=restart")
    assert console.config.unsaved == {"state.path", "console.port"}  # only what was taken


def _config(tmp_path: Path, text: str) -> str:
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(text)
    return str(cfg)


@pytest.mark.parametrize(("text", "key"), [
    ('[state]\npath = "/etc/cron.d/launcher"\n', "state.path"),
    ('[console]\nport = "/dev/null"\n', "console.port"),
    ('[audio]\npack = "/etc"\n', "audio.pack"),
])
def test_config_check_and_every_start_refuse_them_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, key: str) -> None:
    cfg = _config(tmp_path, text)
    for argv in (["config", "check", cfg], ["run", "--simulated", "--config", cfg, "--port", ""],
                 ["play", "--lines", "--config", cfg]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"config error: {key} = ") and err.count("\n") == 1, err


def test_launcher_run_refuses_them_before_it_writes_anything(tmp_path: Path) -> None:
    cron = tmp_path / "cron.d"
    cron.mkdir()
    cfg = _config(tmp_path, '[board]\npin_factory = "mock"\n[console]\nport = ""\n'
                            f'[state]\npath = "{cron}/launcher"\n')
    (tmp_path / "tmp").mkdir()  # the temporary folder, so that cron.d is not in it
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "", "TMPDIR": str(tmp_path / "tmp")}
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "run", "--config", cfg],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    assert proc.returncode == 2 and "state.path = " in proc.stderr, proc.stderr
    assert list(cron.iterdir()) == []
