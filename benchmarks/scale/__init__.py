"""The PT2E annotate-at-scale benchmark (``benchmarks/pt2e_scale.py``): models, targets, plot."""
