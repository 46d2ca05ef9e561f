"""An output path that cannot be written is one line naming the option, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.cli.main import main

REPO = Path(__file__).resolve().parents[2]
# /proc refuses new entries even to root, which a permission test cannot rely on.
NOWHERE = "/proc/launcher-no-such-folder"


@pytest.mark.parametrize("argv", [
    ["tune", "--config", str(REPO / "launcher" / "default.toml"), "--games", "1",
     "--no-progress", "--out", NOWHERE],
    ["sounds", "render", "--out", NOWHERE],
    ["sounds", "sheet", "--out", f"{NOWHERE}/sheet.png"],
])
def test_an_unwritable_out_is_one_line_and_exit_2(capsys, argv):
    if argv[:2] == ["sounds", "sheet"]:
        pytest.importorskip("matplotlib")
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: --out = '{NOWHERE}")
    assert "cannot write there: No such file or directory" in err[0]


def test_another_unwritable_path_is_one_line_naming_it(capsys, monkeypatch):
    # A path this code does not expect to fail: the last net in main, exit 1.
    def refuse(args):
        raise PermissionError(13, "Permission denied", "/etc/launcher/x")

    monkeypatch.setattr("launcher.cli.main.cmd_config_default", refuse)
    assert main(["config", "default"]) == 1
    assert capsys.readouterr().err == "error: /etc/launcher/x: Permission denied\n"
