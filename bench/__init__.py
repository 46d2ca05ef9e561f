"""The benchmark suite: ``python -m bench`` (``make benchmarks``) writes docs/PERFORMANCE.md."""
