"""The ``bcfg import`` command: run the import in a child process, then print or write what it made.

The user's code runs only in the child (``worker``, through ``infra.isolate``):
this process never imports it, so nothing it does can end bcfg, write into the
spec on standard output, or outlast ``--timeout``. Files are written all or
none: every file goes to a temporary name first and is renamed only when all
were written.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ...cli import ExitCode, Report, UsageError
from ...config import find_project
from ...infra.isolate import IsolationError, run_isolated
from ...infra.write import write_temporary

DEFAULT_TIMEOUT = 300.0


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    project = find_project()
    targets: list[str] = args.targets
    output: str | None = None if args.output in (None, "-") else args.output
    folder = output is not None and (
        len(targets) > 1 or Path(output).is_dir() or not output.endswith(".bcfg")
    )
    if len(targets) > 1 and output is None:
        raise UsageError(
            "several targets write one spec per backend and a shared file: name a folder with -o"
        )
    if folder and output is not None and not Path(output).is_dir():
        try:
            Path(output).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create {output}: {exc.strerror}") from None
    request = {
        "targets": targets,
        "output": output,
        "folder": folder,
        "verify": not args.no_verify,
        "root": str(project.root),
        "specs": str(project.specs),
        "out": str(project.out),
        "allow": list(project.allow),
        "pythonpath": [str(p) for p in project.pythonpath],
        # a PT2E quantizer's import (tools/importer/pt2e.py)
        "models": args.models,
        "probes": args.probe,
        "export": args.export,
        "format": args.format,
        "graph_timeout": args.graph_timeout,
    }
    what = f"the import of {' '.join(targets)}"
    try:
        result = run_isolated(
            "generator.tools.importer.worker:work", request, args.timeout, report.err, what
        )
    except IsolationError as exc:
        raise UsageError(str(exc)) from None
    if "failure" in result:
        raise UsageError(result["failure"])
    if "internal" in result:
        raise RuntimeError(result["internal"])
    return _report(result, output, project.root, report)


def _report(result: dict, output: str | None, root: Path, report: Report) -> ExitCode:
    for note in result["notes"]:
        kind, _, text = note.partition(": ") if note.startswith("warning: ") else ("note", "", note)
        report.message(f"{kind}: {text}")
    for d in result["findings"]:
        where = "<stdout>" if output is None else d["file"] or output
        report.message(f"{where}:{d['line']}:{d['column']}: {d['severity']}: {d['message']}")
    files: dict[str, str] = result["files"]
    if output is None:
        report.result(next(iter(files.values())))
    else:
        _write_all({Path(root, name): text for name, text in files.items()})
        for name, module, configs in result["backends"]:
            lines = _code_lines(files[name])
            report.message(
                f"wrote {name}: backend {module}, {configs} pattern configs in {lines} lines"
            )
        described = result.get("described", {})
        for name in files:
            if name not in {b[0] for b in result["backends"]}:
                what = described.get(name, "shared by the backends")
                report.message(f"wrote {name}: {what}, {_code_lines(files[name])} lines")
    if result["verified"]:
        report.message(result["verified"])
    elif result.get("verified") is None and not any(
        d["severity"] == "error" for d in result["findings"]
    ):
        report.message("not verified (--no-verify)")
    todo = []
    if result["not_allowed"]:
        todo.append(f"extend [tool.bcfg] allow with {', '.join(result['not_allowed'])}")
    errors = sum(d["severity"] == "error" for d in result["findings"])
    if errors:
        todo.append(
            f"fix the {errors} error(s) above in the spec (torch accepts them, bcfg's checks do not); "
            "the spec is not verified"
        )
    if todo:
        report.message(f"before bcfg generate accepts the spec: {'; '.join(todo)}")
        return ExitCode.FINDINGS
    return ExitCode.FINDINGS if result.get("differ") else ExitCode.OK


def _code_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def _write_all(files: dict[Path, str]) -> None:
    """Write every file, or none: temporaries first, renamed once all are written."""
    temps: list[tuple[Path, Path]] = []
    try:
        for path, text in files.items():
            temps.append((write_temporary(path, text.encode("utf-8")), path))
        for tmp, path in temps:
            os.replace(tmp, path)
    except OSError as exc:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
        where = exc.filename or next(iter(files), "")
        raise UsageError(f"cannot write {where}: {exc.strerror}") from None
