"""The live suites' shared work: torchao's pattern graphs exported once a session.

torchao's ``prepare_qat_pt2e`` and ``convert_pt2e`` export each of their conv + batch
norm patterns (``qat_utils._get_aten_graph_module_for_pattern``, about 110
``torch.export`` calls a convert of a QAT conv + bn model) every time they run, and
the live suites run them for torchao's class and the generated one, on many models:
those exports were most of the QAT cases' time (a QAT conv + bn + relu comparison
took about 30 s on 2 free cores). A pattern's graph depends only on the pattern's
code, its closure (conv function, flags) and its inputs' shapes and dtypes, so it is
exported once a process (``pt2e_support.pattern_cache``, on for the whole session here,
so no module of a worker traces them again) and each call gets a fresh deep copy
(``test_pattern_cache.py`` checks the copy is the graph a fresh export gives).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _export_each_pattern_once() -> Iterator[None]:
    try:
        import torchao  # noqa: F401
    except ImportError:
        yield
        return
    from .pt2e_support import pattern_cache

    with pattern_cache():
        yield
