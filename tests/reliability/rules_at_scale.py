"""The rule-based state machine of tests/sim/test_machine_rules.py at scale (docs/RELIABILITY.md).

Run from the repository root:
``.venv/bin/python tests/reliability/rules_at_scale.py [N] [--out FILE]``. Chunks of 2,000
examples (each a fresh hypothesis run, no example database) until N (default 20,000)
examples have passed or 15 minutes have gone by; a violation raises. ``--out
docs/results/rules_at_scale.json`` records the count, the time and the command for the
page's row.
"""

import argparse
import sys
import time

sys.path.insert(0, "tests/sim")
sys.path.insert(0, "tests/reliability")
from fault_injection import record
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from test_machine_rules import SHORT, LauncherUnderUse

CHUNK = 2_000
BUDGET_S = 15 * 60

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("examples", nargs="?", type=int, default=20_000)
p.add_argument("--out", help="write the count, times and command to this JSON file")
args = p.parse_args()
start, cpu = time.monotonic(), time.process_time()
done = 0
while done < args.examples and time.monotonic() - start < BUDGET_S:
    run_state_machine_as_test(LauncherUnderUse,
                              settings=settings(SHORT, max_examples=CHUNK, database=None))
    done += CHUNK
    print(f"{done} examples passed, {time.monotonic() - start:.1f} s", flush=True)
wall = time.monotonic() - start
print(f"total: {done} examples, 0 violations, {wall:.1f} s", flush=True)
if args.out:
    record(args.out, {"asked": args.examples, "examples": done, "chunk": CHUNK,
                      "steps": SHORT.stateful_step_count, "budget_s": BUDGET_S,
                      "violations": 0, "wall_s": round(wall, 1),
                      "cpu_s": round(time.process_time() - cpu, 1)}, sys.argv)
