"""The ``bcfg`` command line: generate and check."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from .diagnostics import SpecError, use_color

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
REPORT = "this is a bug in bcfg: please report it with the command, the specs and this line to the bcfg issue tracker"


def _out_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default: [tool.bcfg] out, generated/)",
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bcfg",
        description="Compile .bcfg specs into PyTorch BackendConfig modules.",
        epilog="exit codes: 0 success, 1 findings (generated/ out of date), 2 bad usage or spec errors, 3 internal error",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    g = sub.add_parser("generate", help="write generated modules for the specs")
    g.add_argument(
        "specs",
        nargs="*",
        type=Path,
        metavar="SPEC",
        help="spec files (default: every spec in [tool.bcfg] specs)",
    )
    _out_argument(g)
    c = sub.add_parser(
        "check", help="exit 1 with a diff if generated modules are stale; writes nothing"
    )
    _out_argument(c)
    f = sub.add_parser(
        "fmt", help="format specs in the one canonical layout; --check exits 1 if any would change"
    )
    f.add_argument(
        "specs",
        nargs="*",
        metavar="SPEC",
        help="spec files or folders (default: [tool.bcfg] specs)",
    )
    f.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming the files that would change",
    )
    i = sub.add_parser(
        "import", help="write a spec for the BackendConfig a Python function returns"
    )
    i.add_argument(
        "target",
        metavar="MODULE:FUNCTION",
        help="e.g. torch.ao.quantization.backend_config:get_native_backend_config",
    )
    i.add_argument(
        "-o", "--output", metavar="FILE", help="write the spec here (default: standard output)"
    )
    return p


def _print_diagnostics(diags, stream=None) -> None:
    stream = sys.stderr if stream is None else stream
    color = use_color(stream)
    for d in diags:
        print(d.format(color=color), file=stream)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except SpecError as exc:
        _print_diagnostics(exc.diagnostics)
        n = sum(d.severity == "error" for d in exc.diagnostics)
        print(f"bcfg: {n} error{'s' if n != 1 else ''}; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the one place a bug becomes a message, not a traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        detail = " ".join(str(exc).split())[:200]
        print(
            f"bcfg: internal error: {type(exc).__name__}: {detail} ({Path(where.filename).name}:{where.lineno}); {REPORT}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _run(args) -> int:
    import warnings

    # torch warns on import when NumPy is absent; bcfg never needs NumPy.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    if args.command == "fmt":
        from .fmt import run_fmt

        return run_fmt(args.specs, args.check)
    if args.command == "import":
        from .importer import run_import

        return run_import(args.target, args.output)
    from . import fastcheck
    from .config import ConfigError, find_project
    from .pipeline import compile_project, spec_files
    from .write import diff_outputs, write_outputs

    try:
        project = find_project()
    except ConfigError as exc:
        print(f"bcfg: {exc}", file=sys.stderr)
        return EXIT_USAGE
    specs = None
    if getattr(args, "specs", None):
        missing = [s for s in args.specs if not s.is_file()]
        if missing:
            print(f"bcfg: no such spec file: {missing[0]}", file=sys.stderr)
            return EXIT_USAGE
        specs = list(args.specs)
    out_dir = args.out or project.out
    if specs is None:
        # The fast path: a full run already found this very tree up to date.
        paths = spec_files(project)
        hit = fastcheck.verified(project, paths, out_dir)
        if hit is not None:
            color = use_color(sys.stderr)
            for plain, colored in hit.warnings:
                print(colored if color else plain, file=sys.stderr)
            if args.command == "check":
                print(f"bcfg check: {hit.files} generated file(s) up to date", file=sys.stderr)
            else:
                print(f"bcfg generate: {hit.files} file(s), 0 written, 0 removed", file=sys.stderr)
            return EXIT_OK
        before = fastcheck.snapshot(project, paths)
    outputs, warnings = compile_project(project, specs, args.out)
    _print_diagnostics(warnings)
    if args.command == "check":
        diffs = diff_outputs(outputs, project.rel)
        if diffs:
            sys.stdout.writelines(diffs)
            print(
                f"bcfg check: {len(diffs)} generated file(s) out of date; run `bcfg generate`",
                file=sys.stderr,
            )
            return EXIT_FINDINGS
        if specs is None:
            fastcheck.record(project, paths, out_dir, before, outputs.files, warnings)
        print(f"bcfg check: {len(outputs.files)} generated file(s) up to date", file=sys.stderr)
        return EXIT_OK
    written, removed = write_outputs(outputs)
    if specs is None:
        fastcheck.record(project, paths, out_dir, before, outputs.files, warnings)
    for p in written:
        print(f"wrote {project.rel(p)}", file=sys.stderr)
    for p in removed:
        print(f"removed {project.rel(p)}", file=sys.stderr)
    print(
        f"bcfg generate: {len(outputs.files)} file(s), {len(written)} written, {len(removed)} removed",
        file=sys.stderr,
    )
    return EXIT_OK
