"""bcfg's PT2E runtime: what every quantizer module bcfg generates runs on.

bcfg copies this package, module for module, beside the quantizers it generates
(``generated/_bcfg_pt2e/``), so that a generated package needs torch and torchao at run
time, never bcfg; nothing in the compiler imports it. A generated quantizer is data: a
table of ``Rule``s, one per pattern of its spec, over the base its ``scopes:`` names.
ARCHITECTURE.md ("The PT2E runtime") says what each module holds; docs/reference/pt2e.md
how each base matches and annotates a rule.
"""

from .versions import load

load()
