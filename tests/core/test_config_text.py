"""Any text as any config value, in a config file: `launcher config check` and `launcher run`
answer with one line naming the key (exit 2), or accept it (exit 0); never a traceback.

Issue 21, finding 3: a NUL in ``audio.pack`` ended both in a traceback, and a NUL in
``state.path`` passed ``config check``, then crashed ``run``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.cli.main import main
from launcher.core import config
from launcher.core.errors import ConfigError

KEYS = config.dotted_keys(config.default_raw())
STRING_KEYS = [k for k in KEYS if isinstance(config.get_key(config.default_raw(), k), str)]


def nested(key: str, value: object) -> dict:
    *tables, leaf = key.split(".")
    out: dict = {leaf: value}
    for t in reversed(tables):
        out = {t: out}
    return out


def run_check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["config", "check", str(path)])
    return rc, capsys.readouterr().err


def one_line_or_accepted(rc: int, err: str, key: str | None) -> None:
    assert rc in (0, 2), (rc, err)
    if rc == 0:
        assert err == ""
        return
    assert err.endswith("\n") and err.count("\n") == 1, err  # one line
    assert err.startswith("config error: "), err
    assert "Traceback" not in err
    if key is not None:
        assert err.startswith((f"config error: {key} = ", "config error: file = ",
                               "config error: pins.", "config error: luck.")), err


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(key=st.sampled_from(KEYS), text=TEXT, raw_toml=st.booleans())
def test_any_text_as_any_key_in_a_file_is_one_line_or_accepted(
        tmp_path_factory, capsys, key: str, text: str, raw_toml: bool) -> None:
    path = tmp_path_factory.mktemp("c") / "launcher.toml"
    if raw_toml:  # the text as typed after `key =`, TOML or not
        *tables, leaf = key.split(".")
        body = (f"[{'.'.join(tables)}]\n" if tables else "") + f"{leaf} = {text}\n"
        path.write_text(body, encoding="utf-8")
    else:  # the text as a TOML string
        path.write_text(tomli_w.dumps(nested(key, text)), encoding="utf-8")
    one_line_or_accepted(*run_check(path, capsys), None if raw_toml else key)


@pytest.mark.parametrize("key", STRING_KEYS)
@pytest.mark.parametrize("value", ["\0", "a\0b", "/var/lib/\0/state.json"])
def test_a_nul_in_any_string_value_is_one_line_naming_the_key(tmp_path: Path, capsys,
                                                             key: str, value: str) -> None:
    path = tmp_path / "launcher.toml"
    path.write_text(tomli_w.dumps(nested(key, value)), encoding="utf-8")
    rc, err = run_check(path, capsys)
    assert rc == 2 and err.count("\n") == 1 and err.startswith(f"config error: {key} = "), err


@pytest.mark.parametrize(("key", "value"), [("state.path", "/var/lib/\0/state.json"),
                                            ("audio.pack", "\0")])
def test_run_refuses_a_nul_in_a_path_before_it_starts(tmp_path: Path, capsys, key: str,
                                                      value: str) -> None:
    path = tmp_path / "launcher.toml"
    path.write_text(tomli_w.dumps(nested(key, value)), encoding="utf-8")
    rc = main(["run", "--config", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and err == f"config error: {key} = {value!r}: must not contain a NUL " \
                              "character (U+0000)\n"


@pytest.mark.parametrize(("key", "value", "reason"), [
    ("state.path", "/var/lib/launcher/", "must name a file, not a folder"),
    ("state.path", "/var/lib/launcher/..", "must name a file, not a folder"),
    ("state.path", "", "must not be empty"),
    ("audio.pack", "  ", "must not be empty"),
    ("state.path", "/x/" + "n" * 256, "has a name longer than 255 bytes"),
    ("audio.pack", "/" + "d/" * 2100, "too long (4201 bytes; at most 4095)"),
    ("console.port", "x" * 5000, "too long (5000 bytes; at most 4095)"),
    ("audio.pack", "~no-such-user-here/pack", "names the home folder of an unknown user"),
])
def test_paths_the_file_system_cannot_take_are_refused(key: str, value: str,
                                                       reason: str) -> None:
    with pytest.raises(ConfigError) as err:
        config.set_key(config.default_raw(), key, value)
    assert str(err.value).startswith(f"{key} = ") and str(err.value).endswith(f": {reason}")


def test_ordinary_paths_and_ports_are_accepted() -> None:
    raw = config.default_raw()
    for key, value in [("state.path", "/var/lib/launcher/state.json"),
                       ("state.path", "/home/me/.local/state/launcher/s.json"),
                       ("audio.pack", "/etc/launcher/sounds/mine"), ("audio.pack", "default"),
                       ("audio.pack", "~/.local/share/launcher/sounds/mine"),
                       ("console.port", ""), ("console.port", "/dev/ttyUSB0")]:
        new = config.set_key(raw, key, value)
        section, name = key.split(".")
        assert new[section][name] == value  # taken as it was given
        settings = config.settings_from_dict(new)
        got = {"state.path": str(settings.state_path), "audio.pack": settings.audio.pack,
               "console.port": settings.console.port}[key]
        assert got == value, key
