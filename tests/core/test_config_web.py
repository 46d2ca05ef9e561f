"""The ``[web]`` section: its defaults, its ranges, and errors that name the bad key."""

from __future__ import annotations

import pytest

from launcher.core import config
from launcher.core.errors import ConfigError


def load(**web: object) -> config.Web:
    raw = config.default_raw()
    raw["web"].update(web)
    return config.settings_from_dict(raw).web


def test_the_defaults_are_the_contract_s() -> None:
    assert config.load().web == config.Web(enabled=False, host="0.0.0.0", port=8080,
                                           tls_cert="", tls_key="", token_days=30.0,
                                           max_streams=8)


@pytest.mark.parametrize("key", ["web.port", "web.token_days", "web.max_streams"])
def test_each_number_is_checked_against_its_range(key: str) -> None:
    lo, hi = config.RANGES[key]
    raw = config.default_raw()
    for ok in (lo, hi):
        config.settings_from_dict(config.set_key(raw, key, int(ok)))
    for bad in (lo - 1, hi + 1):
        with pytest.raises(ConfigError, match=rf"{key} = .*must be"):
            config.set_key(raw, key, int(bad))
    assert f"{lo:g}..{hi:g}" in config.default_text()  # documented beside the key


@pytest.mark.parametrize(("key", "value", "why"), [
    ("port", 80.5, "whole number"),
    ("max_streams", "8", "whole number"),
    ("token_days", True, "number"),
    ("enabled", "yes", "true or false"),
    ("host", "", "IP address"),
    ("host", "every interface", "IP address"),
    ("tls_cert", "cert.pem", "absolute path"),
    ("tls_key", "/etc/launcher/", "must name a file"),
])
def test_a_bad_value_names_its_key(key: str, value: object, why: str) -> None:
    with pytest.raises(ConfigError, match=rf"web\.{key} = .*{why}"):
        load(**{key: value})


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1", "::", "fe80::1%wlan0", "launcher.local"])
def test_addresses_and_names_are_hosts(host: str) -> None:
    assert load(host=host).host == host


def test_tls_takes_both_files_or_neither() -> None:
    web = load(tls_cert="/etc/launcher/web.crt", tls_key="/etc/launcher/web.key")
    assert (web.tls_cert, web.tls_key) == ("/etc/launcher/web.crt", "/etc/launcher/web.key")
    with pytest.raises(ConfigError, match=r"^web\.tls_key = .*with web\.tls_cert"):
        load(tls_cert="/etc/launcher/web.crt")
    with pytest.raises(ConfigError, match=r"^web\.tls_cert = .*with web\.tls_key"):
        load(tls_key="/etc/launcher/web.key")
