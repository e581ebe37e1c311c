"""bcfg's performance benchmark (``benchmarks/run.py``), one concern a module."""
