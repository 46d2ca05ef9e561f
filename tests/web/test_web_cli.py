"""`launcher web tokens` and `launcher web revoke ID`: the token file beside the state file
the config (or --state, or --simulated) names."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from launcher.cli.main import main
from launcher.web.tokens import FILE, TokenStore


def test_tokens_lists_ids_and_dates_and_no_secret(tmp_path: Path, capsys) -> None:
    state = tmp_path / "state.json"
    store = TokenStore(tmp_path / FILE, 30)
    (a, token_a), (b, _) = store.issue(), store.issue()
    assert main(["web", "tokens", "--state", str(state)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "MADE", "LAST", "USED", "EXPIRES"]
    assert {line.split()[0] for line in out[1:]} == {a, b}
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert out[1].split()[1] == today
    assert token_a not in "\n".join(out)


def test_revoke_removes_one_token(tmp_path: Path, capsys) -> None:
    state = tmp_path / "state.json"
    store = TokenStore(tmp_path / FILE, 30)
    tid, token = store.issue()
    assert main(["web", "revoke", tid, "--state", str(state)]) == 0
    assert capsys.readouterr().out == f"revoked {tid}\n"
    assert store.check(token) is None
    assert main(["web", "revoke", tid, "--state", str(state)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: no token '{tid}' in ") and err.count("\n") == 1
    assert main(["web", "tokens", "--state", str(state)]) == 0
    assert capsys.readouterr().out.startswith("no tokens in ")


def test_the_folder_comes_from_the_config_s_state_path(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "lib"
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(f'[state]\npath = "{folder}/state.json"\n', encoding="utf-8")
    tid, _ = TokenStore(folder / FILE, 30).issue()
    assert main(["web", "tokens", "--config", str(cfg)]) == 0
    assert tid in capsys.readouterr().out


def test_simulated_is_the_folder_of_launcher_run_simulated(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    tid, _ = TokenStore(tmp_path / "launcher" / FILE, 30).issue()
    assert main(["web", "tokens", "--simulated"]) == 0
    assert tid in capsys.readouterr().out


def test_a_file_that_does_not_read_is_one_line_and_exit_1(tmp_path: Path, capsys) -> None:
    (tmp_path / FILE).write_text("{broken", encoding="utf-8")
    assert main(["web", "tokens", "--state", str(tmp_path / "state.json")]) == 1
    err = capsys.readouterr().err
    assert "every token is refused" in err and err.count("\n") == 1, err


def test_a_bad_config_value_is_exit_2(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "launcher.toml"
    cfg.write_text("[web]\ntoken_days = 0\n", encoding="utf-8")
    assert main(["web", "tokens", "--config", str(cfg)]) == 2
    assert capsys.readouterr().err.startswith("config error: web.token_days = 0")


@pytest.mark.parametrize("words", [["web"], ["web", "revoke"]])
def test_the_verb_needs_its_words(words: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(words)
    assert exit_.value.code == 2
