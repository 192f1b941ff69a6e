"""Benchmarks: run `bench/run_all`; each module is also a script (`python -m bench.NAME`)."""
