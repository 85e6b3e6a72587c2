"""stacktop's benchmarks: `python -m bench [--quick]` (see bench/__main__.py). Benchmarks are not tests."""
