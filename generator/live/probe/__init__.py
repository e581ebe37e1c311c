"""Probing PT2E quantizers: a zoo of exported graphs, and what a quantizer annotates on them.

``zoo`` builds the graphs (from the ATen table's ops, the fused chains of the
specs, and sweeps of what production quantizers' checks read); ``annotations``
runs a quantizer on one and reads its annotations back as plain data that
compares by value. ``bcfg compare`` and the PT2E import are built on both.
"""
