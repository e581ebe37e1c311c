"""The import's child process: everything that runs the user's code, with a JSON result.

``command`` starts it through ``infra.isolate`` (``work`` is the entry point);
it imports the targets, reads, assembles, checks and verifies, and returns the
files and messages, or the one line that says why it could not.
"""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path
from typing import Any

from ...config import Project
from ...diagnostics import Diagnostic
from ...infra.isolate import Channel
from ...live.targets import ImportFailure, QuantizerTarget


def work(request: dict, channel: Channel) -> dict:
    warnings.filterwarnings("ignore")
    import logging

    # torchao's import-time log lines (kernels this build lacks), if the target imports it
    for name in ("torchao", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))
    project = Project(
        Path(request["root"]),
        Path(request["specs"]),
        Path(request["out"]),
        tuple(request["allow"]),
        pythonpath=tuple(Path(p) for p in request["pythonpath"]),
    )
    project.make_importable()
    from .flow import Request, run_import

    req = Request(request["targets"], request["output"], request["folder"], request["verify"])
    gc.disable()  # as generate does: a one-shot run allocates much and frees little
    try:
        channel.phase(f"importing and calling {', '.join(req.targets)}")
        result = run_import(req, project, channel.phase)
    except QuantizerTarget as exc:
        if len(req.targets) > 1:
            return {"failure": f"{exc}: a PT2E quantizer is imported alone (one target)"}
        return _pt2e(exc.quantizer, req.targets[0], request, project, channel)
    except ImportFailure as exc:
        return {"failure": str(exc)}
    except SystemExit as exc:
        return {"failure": f"the target's code called sys.exit({exc.code!r}) while bcfg read it"}
    except RecursionError:
        return {"failure": "the target's configs nest too deeply for bcfg to read them"}
    return {
        "files": result.files,
        "backends": result.backends,
        "notes": result.notes,
        "findings": [_diagnostic(d) for d in result.findings],
        "not_allowed": result.not_allowed,
        "verified": result.verified,
    }


def _pt2e(quantizer: Any, target: str, request: dict, project: Project, channel: Channel) -> dict:
    """The import of a PT2E quantizer (``pt2e``): its user code failing is one line."""
    from .pt2e import import_quantizer

    try:
        return import_quantizer(quantizer, target, request, project, channel.phase)
    except ImportFailure as exc:
        return {"failure": str(exc)}
    except SystemExit as exc:
        return {"failure": f"the target's code called sys.exit({exc.code!r}) while bcfg probed it"}


def _diagnostic(d: Diagnostic) -> dict[str, Any]:
    span = d.span
    return {
        "severity": str(d.severity),
        "message": d.message,
        "file": span.file if span else None,
        "line": span.line if span else 0,
        "column": span.column if span else 0,
    }
