"""The rule-based state machine of tests/sim/test_machine_rules.py at scale (docs/RELIABILITY.md).

Run from the repository root: ``.venv/bin/python tests/reliability/rules_at_scale.py [N]``.
Chunks of 2,000 examples (each a fresh hypothesis run, no example database) until N
(default 20,000) examples have passed or 15 minutes have gone by; a violation raises.
"""

import sys
import time

sys.path.insert(0, "tests/sim")
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from test_machine_rules import SHORT, LauncherUnderUse

start = time.monotonic()
target = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
done = 0
while done < target and time.monotonic() - start < 15 * 60:
    run_state_machine_as_test(LauncherUnderUse,
                              settings=settings(SHORT, max_examples=2_000, database=None))
    done += 2_000
    print(f"{done} examples passed, {time.monotonic() - start:.1f} s", flush=True)
print(f"total: {done} examples, 0 violations, {time.monotonic() - start:.1f} s", flush=True)
