"""``bcfg lsp``: serve the Language Server Protocol over stdin and stdout, for editors.

The server needs pygls (the ``lsp`` extra); without it this says how to
install it, in one line, and exits 2.
"""

from __future__ import annotations

import argparse
import sys

from ...cli import ExitCode, Report, UsageError


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    try:
        from .server import serve
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] in ("pygls", "lsprotocol", "cattrs"):
            raise UsageError(
                f"the language server needs {exc.name.split('.')[0]}: pip install 'bcfg[lsp]'"
            ) from None
        raise
    if sys.stdin.isatty():
        report.message(
            "serving the Language Server Protocol on standard input"
            " (an editor starts this; Ctrl-D ends it)"
        )
    serve(verbose=args.verbosity > 0, preload=args.preload_torch)  # -v: each check's duration
    return ExitCode.OK
