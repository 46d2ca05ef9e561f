"""`launcher console`'s client on a scripted port: long replies, silence, completion words."""

from __future__ import annotations

import io
import queue
import threading

from launcher.cli.console_client import Client, completion_tree, wait_seconds


class ScriptedPort:
    """A pyserial-like port that answers each line it is sent from a table."""

    def __init__(self, replies: dict[str, list[str]]) -> None:
        self.replies = replies
        self.incoming: queue.Queue[bytes] = queue.Queue()
        self.in_waiting = 0

    def write(self, data: bytes) -> int:
        reply = self.replies.get(data.decode().rstrip("\r\n"), [])
        if reply:
            self.incoming.put("".join(f"{line}\r\n" for line in reply).encode())
        return len(data)

    def read(self, size: int) -> bytes:
        try:
            return self.incoming.get(timeout=0.05)
        except queue.Empty:
            return b""

    def cancel_read(self) -> None:
        pass

    def close(self) -> None:
        pass


HELP = [f"// cmd{i:02}                 row {i}" for i in range(40)] + ["ok commands=40"]


def test_a_reply_longer_than_ten_lines_is_read_to_its_final_line() -> None:
    client = Client(ScriptedPort({"help": HELP, "status": ["ok state=ready"]}), reply_wait=5)
    client.start()
    out = io.StringIO()
    try:
        assert client.batch(io.StringIO("help\nstatus\n"), out) == 0
    finally:
        client.close()
    assert out.getvalue().splitlines() == [*HELP, "ok state=ready"]


def test_silence_is_measured_in_seconds_and_ends_the_batch_with_2(capsys) -> None:
    client = Client(ScriptedPort({"help": HELP}), reply_wait=0.3)
    client.start()
    try:
        assert client.batch(io.StringIO("help\nnothing-answers-this\nhelp\n"), io.StringIO()) == 2
    finally:
        client.close()
    assert capsys.readouterr().err.strip() == \
        "launcher console: no answer to 'nothing-answers-this'"


def test_completion_words_come_from_the_help_rows() -> None:
    rows = [
        "// help [COMMAND]                          list the commands",
        "// lid open|full|close                     move the simulated lid",
        "// luck show                               both sides' hazard curves",
        "// luck set SIDE KEY VALUE [KEY VALUE]...  change a side's luck",
        "// reboot-safe                             motors safe, then restart",
        "// load N                                  tell the launcher it holds N cards",
        "ok commands=6",
    ]
    tree = completion_tree(rows)
    assert tree["lid"] == {"open": None, "full": None, "close": None}
    assert tree["luck"] == {"show": None, "set": None}
    assert tree["load"] is None and tree["reboot-safe"] is None
    assert set(tree["help"]) == {"help", "lid", "luck", "reboot-safe", "load"}
    assert completion_tree(["ok commands=0"]) == {}


def _batch(port: ScriptedPort, script: str, **kw) -> tuple[int, list[str]]:
    client = Client(port, **kw)
    client.start()
    out = io.StringIO()
    try:
        status = client.batch(io.StringIO(script), out)
    finally:
        client.close()
    return status, out.getvalue().splitlines()


def test_a_wait_line_sends_nothing_and_prints_what_arrives_meanwhile() -> None:
    port = ScriptedPort({"press": ["ok state=ready"]})
    sent: list[bytes] = []
    write = port.write
    port.write = lambda data: sent.append(data) or write(data)  # type: ignore[method-assign]
    # An event that arrives during the wait (no command was sent for it).
    port.incoming.put(b"# event sleep reason=idle\r\n")
    status, lines = _batch(port, "wait 0.2\npress\nwait 0\n", reply_wait=5)
    assert status == 0
    assert lines == ["# event sleep reason=idle", "ok state=ready"]
    assert sent == [b"press\r\n"]


def test_a_bad_wait_line_is_named_and_makes_the_status_1(capsys) -> None:
    status, lines = _batch(ScriptedPort({"status": ["ok state=ready"]}),
                           "wait\nwait soon\nwait 601\nstatus\n", reply_wait=5)
    assert status == 1 and lines == ["ok state=ready"]
    err = capsys.readouterr().err.splitlines()
    assert [e.split(":")[1] for e in err] == [" line 1", " line 2", " line 3"]
    assert all(e.endswith("usage: wait S, with S from 0 to 600 seconds") for e in err)


def test_wait_seconds_reads_only_a_wait_line() -> None:
    assert wait_seconds("wait 0.5") == 0.5 and wait_seconds("wait 600") == 600
    assert wait_seconds("press") is None and wait_seconds("waitress 1") is None
    assert wait_seconds("wait -1") == -1.0 and wait_seconds("wait 1 2") == -1.0


def test_the_handshake_is_not_printed_and_silence_is_announced() -> None:
    # The firmware greeted long ago: only the client's `version` question gets an answer.
    port = ScriptedPort({"version": ["ok firmware=9.9 python=3.11 board=simulated"]})
    port.incoming.put(b"# event dry side=mild streak=1\r\n")  # stale, from before we came
    client = Client(port, second=0.05)
    client.start()
    try:
        assert client.connect(10) == "ok firmware=9.9 python=3.11 board=simulated"
    finally:
        client.close()
    silent = Client(ScriptedPort({}), second=0.05)
    notices: list[str] = []
    silent.start()
    try:
        assert silent.connect(4, lambda: notices.append("waiting")) is None
    finally:
        silent.close()
    assert notices == ["waiting"]  # said once, not once a second


def test_a_slow_answer_is_announced_once_on_stderr(capsys) -> None:
    class Slow(ScriptedPort):
        def write(self, data: bytes) -> int:
            if data.startswith(b"selftest"):
                # Nothing for a while, then the reply (the notice comes in between).
                threading.Timer(0.3, self.incoming.put, [b"ok selftest=pass\r\n"]).start()
            return len(data)

    status, lines = _batch(Slow({}), "selftest\n", reply_wait=5, notice=0.1)
    assert status == 0 and lines == ["ok selftest=pass"]
    assert capsys.readouterr().err == \
        "launcher console: no answer to 'selftest' yet; waiting up to 5s\n"


def test_the_help_documents_wait_ctrl_c_and_the_exit_statuses() -> None:
    import argparse

    from launcher.cli import console_client

    parser = argparse.ArgumentParser(prog="launcher")
    console_client.register(parser.add_subparsers())
    text = " ".join(parser._subparsers._group_actions[0].choices["console"]  # type: ignore
                    .format_help().split())
    assert "A line `wait S` is the client's own" in text
    assert f"seconds (0 to {console_client.MAX_WAIT:g}) pass" in text
    assert "at an empty prompt it quits with status 130" in text
    assert "2 no launcher (the port cannot be opened or is in use" in text


def test_wait_takes_whole_seconds_from_1_to_3600(capsys) -> None:
    import argparse

    import pytest

    from launcher.cli import console_client

    parser = argparse.ArgumentParser(prog="launcher")
    console_client.register(parser.add_subparsers())
    assert parser.parse_args(["console", "/dev/ttyUSB0", "--wait", "1"]).wait == 1
    for bad in ("-1", "0", "3601", "soon"):
        with pytest.raises(SystemExit):
            parser.parse_args(["console", "/dev/ttyUSB0", "--wait", bad])
        assert "--wait" in capsys.readouterr().err


def test_a_port_that_is_not_there_is_said_once() -> None:
    import serial

    from launcher.cli.console_client import cannot_open

    try:
        serial.serial_for_url("/dev/ttyUSB-not-here")
    except serial.SerialException as exc:
        text = cannot_open("/dev/ttyUSB-not-here", exc)
    assert text == "cannot open /dev/ttyUSB-not-here: No such file or directory"
