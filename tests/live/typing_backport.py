"""A pytest plugin: ``typing.override`` on Python 3.11, for ExecuTorch's Cadence tests.

    python -m pytest -p tests.live.typing_backport <site-packages>/executorch/backends/cadence/aot/tests

ExecuTorch's ``backends/cadence/aot/fuse_ops.py`` does ``from typing import override``,
new in Python 3.12 (PEP 698), so two of the three Cadence test files that
``tests/live/executorch_suites.py`` runs fail to collect on 3.11, the project's Python.
``override`` only marks a method (it sets ``__override__ = True`` and returns it: a type
checker's hint, never read at run time); ``typing_extensions.override``, the backport the
PEP names, does the same on 3.11. Loaded before collection, this plugin puts it on
``typing`` where ``typing`` has none, so the tests run on the project's own torch,
torchao and ExecuTorch, unchanged; on 3.12 and later it does nothing.
"""

from __future__ import annotations

import typing

import typing_extensions

if not hasattr(typing, "override"):
    typing.override = typing_extensions.override  # type: ignore[attr-defined]
