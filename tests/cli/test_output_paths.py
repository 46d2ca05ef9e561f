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


@pytest.mark.parametrize("argv", [
    ["tune", "--config", str(REPO / "launcher" / "default.toml"), "--games", "1",
     "--no-progress", "--out"],
    ["sounds", "render", "--out"],
])
def test_an_out_that_is_a_file_says_so(capsys, tmp_path, argv):
    """It said `cannot write there: File exists`."""
    afile = tmp_path / "report"
    afile.write_text("mine\n")
    assert main([*argv, str(afile)]) == 2
    assert capsys.readouterr().err == f"error: --out = '{afile}': is a file; name a folder\n"
    assert afile.read_text() == "mine\n"


def test_an_interrupted_tune_leaves_no_empty_folder(capsys, tmp_path, monkeypatch):
    def interrupted(*args, **kw):
        raise KeyboardInterrupt  # Ctrl-C while the games are played

    monkeypatch.setattr("launcher.cli.simulate.simulate", interrupted)
    argv = ["tune", "--config", str(REPO / "launcher" / "default.toml"), "--games", "1",
            "--no-progress", "--out"]
    assert main([*argv, str(tmp_path / "new" / "report")]) == 130
    assert list(tmp_path.iterdir()) == []  # neither the folder nor the parent made for it
    # A folder that was there before stays, and so does what it holds.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("kept\n")
    assert main([*argv, str(tmp_path / "mine")]) == 130
    assert main([*argv, str(tmp_path / "mine" / "sub")]) == 130
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
