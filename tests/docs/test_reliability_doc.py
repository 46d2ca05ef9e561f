"""docs/RELIABILITY.md's fault matrix names tests that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = "tests/reliability/test_fault_matrix.py"


def matrix_tests() -> list[tuple[str, str]]:
    """(file, test name) for every test the fault matrix's last column names."""
    text = (ROOT / "docs" / "RELIABILITY.md").read_text(encoding="utf-8")
    table = text.split("## The fault matrix\n", 1)[1].split("\n## ", 1)[0]
    found = []
    for row in table.splitlines()[4:]:
        if not row.startswith("|"):
            continue
        for ref in re.findall(r"`([^`]+)`", row.rstrip("| ").rsplit("|", 1)[1]):
            path, _, name = ref.rpartition("::")
            if name.startswith("test_"):
                found.append((path or DEFAULT, name))
            else:
                assert (ROOT / ref).exists(), f"RELIABILITY.md names {ref}, which is not there"
    return found


def test_every_test_the_fault_matrix_names_exists():
    named = matrix_tests()
    assert len(named) >= 10
    for path, name in named:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{path} has no {name}"
