"""The torchao this runtime runs on: the releases it is verified with, and a quiet first import.

The package's ``__init__`` calls ``load()`` before any other module imports torchao: a
missing torchao says what to install; one not verified (``TORCHAO_VERIFIED``) warns once
(``TorchaoVersionWarning``); on torch's CPU build, the records importing torchao gives there
(its CUDA kernels' ``Failed to load ... .so``, torch's pytree enum notice) are dropped, only
those and only during that first import.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata

__all__ = ["TORCHAO_VERIFIED", "TorchaoVersionWarning", "load", "unsupported"]

# The torchao releases (major.minor) generated quantizers are verified with: bcfg's tests
# compare them with torchao's own quantizers and run torchao's own tests with them swapped in.
TORCHAO_VERIFIED = ("0.18",)

INSTALL = "pip install 'torchao==0.18.*' (bcfg's pt2e extra)"


class TorchaoVersionWarning(UserWarning):
    """torchao is not a release the generated quantizers are verified with."""


def unsupported(version: str) -> str | None:
    """What to say about torchao ``version``: nothing for a verified release, else why and what
    to install."""
    m = re.match(r"(\d+)\.(\d+)", version)
    if m and f"{m.group(1)}.{m.group(2)}" in TORCHAO_VERIFIED:
        return None
    verified = ", ".join(f"{v}.x" for v in TORCHAO_VERIFIED)
    return (
        f"bcfg's generated PT2E quantizers are verified with torchao {verified}; this is "
        f"torchao {version}, whose annotation API may differ: {INSTALL}"
    )


class _CpuBuildNoise(logging.Filter):
    """Drops the records importing torchao gives on torch's CPU build and nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name == "torchao" and message.startswith("Failed to load "):
            return ".so" not in message
        return not (record.name == "torch.utils._pytree" and "is an Enum subclass" in message)


@contextmanager
def _quiet_cpu_build() -> Iterator[None]:
    import torch

    if torch.version.cuda is not None:  # a CUDA build: torchao's kernels load, or say why
        yield
        return
    noise = _CpuBuildNoise()
    loggers = [logging.getLogger("torchao"), logging.getLogger("torch.utils._pytree")]
    for logger in loggers:
        logger.addFilter(noise)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(noise)


def load() -> None:
    """Import torchao (quietly, the first time) and warn if it is not a verified release."""
    import sys

    if "torchao" not in sys.modules:
        try:
            with _quiet_cpu_build():
                import torchao  # noqa: F401
        except ModuleNotFoundError as e:
            if e.name != "torchao":
                raise
            raise ModuleNotFoundError(
                f"bcfg's generated PT2E quantizers run on torchao: {INSTALL}", name="torchao"
            ) from None
    try:
        version = metadata.version("torchao")
    except metadata.PackageNotFoundError:
        version = str(getattr(sys.modules["torchao"], "__version__", "unknown"))
    message = unsupported(version)
    if message is not None:
        warnings.warn(message, TorchaoVersionWarning, stacklevel=2)
