"""The generated pages rendered whole from their results: one place renders each of them.

The benchmarks and the test tiers only write results; a page is rendered from what they kept,
here, by the page's renderer, whoever asks (``python docs/blocks.py``, which renders every
generated page and block of the docs, a benchmark run, the kernel tier's report):

    docs/PERFORMANCE.md   from docs/PERFORMANCE.json   (python -m bench --out PAGE)
    docs/kernel-tier.md   from docs/results/kernel/     (bash .ci/kernel/report)

A page keeps its place's name: ``bench-report/PERFORMANCE.md`` (``python -m bench`` without
``--out``) is rendered from the ``PERFORMANCE.json`` beside it by the same renderer.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.keep import write_atomic


def performance(page: Path, images: Path) -> str:
    """PERFORMANCE.md from the PERFORMANCE.json beside it; its plot drawn into ``images``."""
    from bench import suite

    data = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    results, info = suite.from_json(data)
    info["out_dir"] = images  # not the folder of the machine that measured it
    return suite.render(results, info)


def kernel_tier(page: Path, images: Path) -> str:
    """kernel-tier.md from the run kept in docs/results/kernel/."""
    from bench import kernel_tier as tier

    return tier.render_kept()


Renderer = Callable[[Path, Path], str]  # (the page, the folder for its pictures) -> its text

# A page's renderer, by the page's file name.
PAGES: dict[str, Renderer] = {
    "PERFORMANCE.md": performance, "kernel-tier.md": kernel_tier}


def is_page(path: Path) -> bool:
    """Whether ``path`` is a page rendered whole (the others may hold generated blocks)."""
    return path.name in PAGES



def render(page: Path, images: Path | None = None, kind: Renderer | None = None) -> str:
    """The page's text from its results, by its name's renderer (or ``kind``: a benchmark run's
    ``--out`` may name its page otherwise). Its pictures are drawn into ``images`` (the
    page's own folder if None: they sit beside it, as the page links them)."""
    return (kind or PAGES[page.name])(page, page.parent if images is None else images)


def refresh(page: Path, check: bool = False, kind: Renderer | None = None) -> bool:
    """Whether the page differs from what its results render; unless ``check``, it is then
    written again, with its pictures. A page that matches is left alone, pictures too."""
    with tempfile.TemporaryDirectory() as scratch:
        stale = render(page, Path(scratch), kind) != (
            page.read_text(encoding="utf-8") if page.exists() else None)
    if stale and not check:
        write_atomic(page, render(page, None, kind))
    return stale
