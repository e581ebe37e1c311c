"""``bcfg compat``'s analysis: will FX quantization honour a QConfigMapping on a backend, and why not.

``verdict`` holds the results (no torch); ``observers`` restates torch's support
checks with reasons; ``suggest`` edits a QConfig until it fits; ``mapping`` says
which mapping entry gives an op its QConfig; ``patterns`` judges every pattern
config without a model; ``nodes`` judges every node of a traced model and
``truth`` checks those verdicts against a real ``prepare_fx``.
"""
