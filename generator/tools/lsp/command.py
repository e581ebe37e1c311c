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
    for stream, what in (
        (sys.stdin, "read standard input"),
        (sys.stdout, "write to standard output"),
    ):
        if getattr(stream, "buffer", None) is None:  # closed: there is no client to talk to
            raise UsageError(f"cannot {what}: it is closed (an editor starts bcfg lsp on pipes)")
    if sys.stdin.isatty():
        report.message(
            "serving the Language Server Protocol on standard input"
            " (an editor starts this; Ctrl-D ends it)"
        )
    serve(verbose=args.verbosity > 0, preload=args.preload_torch)  # -v: each check's duration
    return ExitCode.OK
