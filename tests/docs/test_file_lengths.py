"""Every Python file of launcher/, hal/, bench/ and tests/ is at most ``MAX_LINES`` long: a
longer one is split by concern (docs/ARCHITECTURE.md)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("launcher", "hal", "bench", "tests")
MAX_LINES = 700


def _lengths() -> dict[str, int]:
    return {str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
            for folder in FOLDERS for path in sorted((REPO / folder).rglob("*.py"))}


def test_every_file_is_at_most_700_lines() -> None:
    lengths = _lengths()
    assert len(lengths) > 300  # the folders were read: hundreds of files, not none
    assert "launcher/firmware/app.py" in lengths and "tests/conftest.py" in lengths
    longer = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not longer, f"split by concern, at most {MAX_LINES} lines each: {longer}"
