"""Benchmarks: reproducible scripts whose results are recorded in docs/benchmarks.md."""
