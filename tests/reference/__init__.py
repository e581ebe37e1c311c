"""torchao 0.18's own test files for its PT2E quantizers, run against bcfg's generated classes.

``python -m tests.reference x86`` (or ``arm``, or ``all``) runs torchao's
``test/quantization/pt2e/test_x86inductor_quantizer.py`` (51 tests) or
``test_arm_inductor_quantizer.py`` (22 tests) twice, unmodified: once with
torchao's class, once with the class replaced on torchao's module by the
generated one (``generated/x86_inductor_quantizer.py``,
``generated/arm_inductor_quantizer.py``) before the test module imports it.
It prints the outcome of every test in both runs and exits 1 if any differs.

``python -m tests.reference xnnpack`` does the same with torchao's PT2E test
files written with its XNNPACK copy (``test_quantize_pt2e.py``,
``test_quantize_pt2e_qat.py``, ``test_representation.py``), its
``XNNPACKQuantizer`` replaced by ``generated/xnnpack_quantizer.py``'s class.

The test files are not in torchao's wheel and are not copied into this
project: they are read from a cache folder (``--cache``, default
``~/.cache/bcfg/torchao-v0.18.0``), filled once from a clone of pytorch/ao
(``--from-git PATH``, which reads tag v0.18.0) or from GitHub
(``--download``).
"""
