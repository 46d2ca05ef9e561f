"""`launcher console`, the client: the pty of its own, the banner handshake, its arguments."""

from __future__ import annotations

import io
import os
import tty

import pytest
import serial
from consoles import (
    WAIT,
    console_command,
    firmware_on_master,
)

from launcher.cli import console_client as console_cli
from launcher.firmware.channels import PtyChannel

# --- the client ---------------------------------------------------------------------------


def test_a_pty_of_its_own_sees_each_client_leave_and_drops_unread_output() -> None:
    channel = PtyChannel(write_timeout=0.05)
    try:
        assert not channel.connected()  # nobody has the slave open; this end holds none
        for _ in range(2):  # a client comes, talks and goes; then the next one
            client = serial.Serial(channel.path, timeout=WAIT, exclusive=True)
            assert channel.connected()
            conn = channel.connection()
            client.write(b"status\r\n")
            assert conn.read() == b"status\r\n"
            conn.write(b"ok state=ready\r\n")
            assert client.read_until(b"\n") == b"ok state=ready\r\n"
            conn.write(b"# event never read by this client\r\n")
            client.close()
            assert not channel.connected()
            assert conn.read() is None  # the client left: its session's input has ended
            conn.close()
        # A client that has not read for a while: output piles up, then is dropped.
        client = os.open(channel.path, os.O_RDWR | os.O_NOCTTY)
        conn = channel.connection()
        while channel.write_timeouts == 0:
            conn.write(b"# event dry side=mild streak=1\r\n" * 64)
        # cancel ends a read that nothing would end otherwise.
        conn.cancel()
        assert conn.read() == b""
        conn.close()
        os.close(client)
    finally:
        channel.close()


def test_a_new_pty_client_does_not_see_what_the_last_one_left_unread() -> None:
    """Output queued for a client that left is dropped before the next one's banner."""
    channel = PtyChannel()
    try:
        first = os.open(channel.path, os.O_RDWR | os.O_NOCTTY)
        conn = channel.connection()
        conn.write(b"ok debug=on\r\n")  # never read
        os.close(first)
        conn.close()
        second = os.open(channel.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        channel.connection().close()
        with pytest.raises(BlockingIOError):
            os.read(second, 64)  # not pyserial (which flushes at open): a bare open()
        os.close(second)
    finally:
        channel.close()


def test_output_after_a_pty_client_left_never_reaches_the_next_one() -> None:
    """Seen in make test-loaded: an event of client 1's debug run, queued as it left and
    written after client 2 had opened the pty, was client 2's first line. Once a read has
    seen the hang-up, the old connection writes nothing more (the master cannot tell one
    client from the next)."""
    channel = PtyChannel()
    try:
        first = os.open(channel.path, os.O_RDWR | os.O_NOCTTY)
        old = channel.connection()
        os.close(first)
        assert old.read() is None  # the firmware has seen client 1 go ...
        second = os.open(channel.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        old.write(b"# event state from=debug_run to=ready on=timeout_debug\r\n")  # ... late
        assert old.dropped_after_hangup == 56
        new = channel.connection()
        new.write(b"# launcher console\r\n")
        assert os.read(second, 256) == b"# launcher console\r\n"
        for conn in (old, new):
            conn.close()
        os.close(second)
    finally:
        channel.close()


def test_client_waits_for_the_banner_then_talks(capsys: pytest.CaptureFixture[str]) -> None:
    with firmware_on_master() as unit:
        # The client has its port open before the firmware greets.
        port = serial.serial_for_url(unit.path, baudrate=115200, timeout=0.2)
        client = console_cli.Client(port)
        client.start()
        out = io.StringIO()
        try:
            with unit.reactor_thread():
                unit.rig.reactor.post(unit.transport.start)
                assert client.connect(5) == unit.transport.console.banner()
                assert out.getvalue() == ""  # the handshake is not the script's output
                status = client.batch(io.StringIO("load 3\nstatus\n\nbogus\n"), out)
        finally:
            client.close()
    lines = out.getvalue().splitlines()
    assert status == 1
    assert "# event loaded cards=3" in lines and "ok inventory=3" in lines
    assert lines[-1] == "error unknown no command 'bogus'; `help` lists them"


def test_launcher_console_command_asks_when_the_banner_was_missed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The firmware greeted before the client opened the port (and open() flushed it)."""
    with firmware_on_master() as unit:
        unit.transport.start()
        assert unit.master.written.get(timeout=WAIT).startswith(b"# launcher ")
        with unit.reactor_thread():
            args = console_command(unit.path, "--wait", "5")
            monkeypatch.setattr("sys.stdin", io.StringIO("load 8\nstatus\n"))
            code = args.func(args)
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    # The answer to its own `version` is not printed: the output is the script's.
    assert out[0] == "# event loaded cards=8" and "ok inventory=8" in out
    assert not [x for x in out if "firmware=" in x]
    assert out[-1].startswith("ok state=ready") and "inventory=8" in out[-1]


def test_launcher_console_without_a_launcher(capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        args = console_command(os.ttyname(slave), "--wait", "1")
        assert args.func(args) == 2
        assert "no answer" in capsys.readouterr().err
        args = console_command("/dev/does-not-exist")
        assert args.func(args) == 2
        assert "cannot open /dev/does-not-exist" in capsys.readouterr().err
    finally:
        os.close(master)
        os.close(slave)


def test_console_subcommand_arguments() -> None:
    args = console_command("/dev/serial0")
    assert (args.port, args.baud, args.wait) == ("/dev/serial0", 115200, 10)
    args = console_command("socket://pi:7000", "--baud", "9600")
    assert args.baud == 9600 and args.func is console_cli.run


@pytest.mark.parametrize(("line", "final", "error"), [
    ("ok", True, False), ("ok a=1", True, False), ("error value x", True, True),
    ('{"ok":true,"data":{}}', True, False), ('{"ok":false,"error":"x"}', True, True),
    ("# event shot cards=3", False, False), ("// row", False, False),
    ('{"event":"shot"}', False, False), ("okay", False, False), ('{"ok', False, False),
])
def test_client_tells_final_lines(line: str, final: bool, error: bool) -> None:
    assert console_cli.is_final(line) is final
    assert console_cli.is_error(line) is error
