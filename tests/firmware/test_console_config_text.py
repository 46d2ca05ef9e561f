"""Any text as any key through the console's `config set`: one line, ok or error, never an
``internal`` fault (issue 21, finding 3: `config set audio.pack "\\u0000"` was one)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.core import config
from launcher.firmware.console import Console
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

KEYS = config.dotted_keys(config.default_raw())
STRING_KEYS = [k for k in KEYS if isinstance(config.get_key(config.default_raw(), k), str)]


@pytest.fixture(scope="module")
def console() -> Iterator[Console]:
    rig = SimRig(seed=4)
    c = Console(rig.app, **console_extras(rig.sim), raw_config=config.default_raw())
    yield c
    c.close()
    rig.close()


def one_final_line(console: Console, line: str) -> str:
    replies = console.handle_line(line)
    assert len(replies) == 1, (line, replies)
    reply = replies[0]
    assert reply.startswith(("ok ", "error ")), (line, reply)
    assert not reply.startswith("error internal"), (line, reply)
    assert reply.isprintable(), (line, reply)
    return reply


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(key=st.sampled_from(KEYS), text=TEXT, quoted=st.booleans(), debug=st.booleans())
def test_config_set_of_any_text_is_one_line_never_an_internal_fault(
        console: Console, key: str, text: str, quoted: bool, debug: bool) -> None:
    # Quoted: a TOML string whose escapes may decode to anything (NUL, ESC...); else the text
    # as typed (a control character in the line itself is refused before the command).
    value = json.dumps(text) if quoted else text
    internal = console.counters["internal"]
    console.handle_line("debug on" if debug else "debug off")
    one_final_line(console, f"config set {key} {value}")
    assert console.counters["internal"] == internal
    assert console.app.machine.state != "fault" or console.app.machine.memory.fault != "internal"


@pytest.mark.parametrize("key", STRING_KEYS)
def test_a_nul_in_any_string_key_is_refused_naming_the_key(console: Console, key: str) -> None:
    console.handle_line("debug on")
    reply = one_final_line(console, f'config set {key} "\\u0000"')
    assert reply.startswith(f"error value {key} = '\\x00': "), reply
    console.handle_line("debug off")
