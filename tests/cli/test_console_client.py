"""`launcher console`'s client on a scripted port: long replies, silence, completion words."""

from __future__ import annotations

import io
import queue

from launcher.cli.console_client import Client, completion_tree


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
