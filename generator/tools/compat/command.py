"""The ``bcfg compat`` command: 0 if everything is honoured, 1 if something is skipped, 2 on errors.

It runs the user's code (the QConfigMapping and model functions, allow-listed modules the specs
name), so it runs in a child process (``cli.run_in_child``): whatever that code writes to
standard output, even straight to file descriptor 1, stays out of the report and the JSON.
"""

from __future__ import annotations

import argparse
from typing import Any

from ...cli import ExitCode, Report, UsageError, progress, run_in_child
from ...config import Project, find_project
from ...diagnostics import printable
from ...semantics import model as m
from . import render


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    target = args.qconfig_mapping or args.quantization_config
    if args.quantization_config is not None and args.model is None:
        raise UsageError("--quantization-config needs --model: PT2E quantizes an exported model")
    if args.strict_export and args.quantization_config is None:
        raise UsageError("--strict-export is for PT2E (--quantization-config)")
    if not args.in_child:
        return ExitCode(run_in_child(args, report, f"the check of {target}"))
    if args.quantization_config is not None:
        return run_pt2e(args, report)
    project = find_project()
    backend = _backend(project, args.backend, report)
    import torch

    from ...live.build import build_backend
    from ...live.compat.observers import MappingError
    from ...live.compat.patterns import analyse_patterns
    from ...live.compat.truth import analyse_model
    from ...live.targets import ImportFailure, load_model, load_qconfig_mapping

    try:
        progress(f"calling {args.qconfig_mapping}")
        mapping = load_qconfig_mapping(args.qconfig_mapping, project.allow)
        progress(f"calling {args.model or args.qconfig_mapping}")
        model = load_model(args.model, project.allow) if args.model else None
    except ImportFailure as exc:
        raise UsageError(str(exc)) from None
    backend_config = build_backend(backend)
    progress(f"tracing and preparing {args.model}" if args.model else "judging the patterns")
    try:
        if model is None:
            result = analyse_patterns(backend_config, mapping, args.qat)
        else:
            result = analyse_model(model[0], model[1], mapping, backend_config, args.qat)
    except MappingError as exc:
        raise UsageError(f"{args.qconfig_mapping}(): {exc}") from None
    header = render.Header(
        backend=backend.module,
        spec=backend.spec_file,
        mapping=args.qconfig_mapping,
        model=args.model,
        qat=args.qat,
        torch=torch.__version__,
    )
    failure = None if result.error is None else f"prepare_fx fails on this model: {result.error}"
    table = render.rows(result, backend)
    return _show(args, report, render, (header, result, table), failure, result.not_honoured)


def _show(
    args: argparse.Namespace,
    report: Report,
    renderer: Any,
    content: tuple[Any, Any, Any],
    failure: str | None,
    findings: Any,
) -> ExitCode:
    """Write a check's report (FX's ``render`` or ``render_pt2e``: header, result, rows) in
    the format asked for, and its exit code: JSON even on failure, text only without one."""
    if args.format == "json":
        report.result(renderer.as_json(*content))
    elif failure is None:
        show = renderer.markdown if args.format == "markdown" else renderer.text
        report.result(show(*content))
    if failure is not None:
        # torch's and the spec's errors may run over several lines: each is shown as a line.
        first, *more = failure.split("\n")
        report.message(first)
        for line in more:
            print(f"    {printable(line.strip())}", file=report.err)
        return ExitCode.ERROR
    return ExitCode.FINDINGS if findings else ExitCode.OK


def _backend(project: Project, name: str, report: Report) -> m.Backend:
    """The backend called ``name`` in the project's specs (as ``bcfg explain`` finds it)."""
    from ...pipeline import analyze_project, paused_gc
    from ..explain import find_backend

    with paused_gc():
        analysis = analyze_project(project)
    fx_only = (
        "--qconfig-mapping checks a BackendConfig; check its PT2E quantizer with "
        "--quantization-config MODULE:FUNCTION --model MODULE:FUNCTION"
    )
    backend = find_backend(analysis.backends, name, analysis.pt2e_only, fx_only)
    concerned_warnings(report, analysis, backend.spec_file)
    return backend


def concerned_warnings(report: Report, analysis: Any, spec_file: str) -> None:
    """The warnings of the spec the command is about; those of the other specs as one line
    with their count (``-v``: all of them), not each on every command."""
    warnings = analysis.warnings
    mine = [
        w for w in warnings if report.verbosity > 0 or w.span is None or w.span.file == spec_file
    ]
    report.diagnostics(mine, analysis.sources)
    rest = len(warnings) - len(mine)
    if rest and report.verbosity >= 0:
        s = "s" if rest != 1 else ""
        report.message(f"{rest} warning{s} in other specs not shown (-v or bcfg check shows them)")


def _explainable(quantizer: m.Quantizer) -> None:
    """Refuse a quantizer whose runtime base has no ``report()`` (the key table's ``BASES``),
    at its spec, saying what shows its matches instead."""
    from ...lang.pt2e_keys import BASES

    base = BASES[quantizer.scopes]
    if base.reports:
        return
    names = [f"scopes: {s}" for s, b in BASES.items() if b.reports]
    explained = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    raise UsageError(
        f"{quantizer.span}: quantizer {quantizer.module} has scopes: {quantizer.scopes}, whose "
        f"runtime base ({base.runtime}) has no report(), which bcfg compat reads to explain "
        f"each op; compat explains {explained} quantizers. To see what it matched, prepare "
        f"the model with get_{quantizer.module}_quantizer() and read the quantizer's "
        "last_matches: every match tried, accepted or with the reason it was rejected"
    )


def run_pt2e(args: argparse.Namespace, report: Report) -> ExitCode:
    """``bcfg compat BACKEND --quantization-config ... --model ...``: the backend's quantizer."""
    from ...pipeline import analyze_project, paused_gc
    from ..explain import find_backend

    project = find_project()
    with paused_gc():
        analysis = analyze_project(project)
    backend = find_backend(analysis.backends + analysis.pt2e_only, args.backend)
    concerned_warnings(report, analysis, backend.spec_file)
    quantizer = next((q for q in analysis.quantizers if q.module == backend.module), None)
    if quantizer is None:
        raise UsageError(
            f"backend '{backend.module}' has no PT2E quantizer: add `quantizer "
            f"{backend.module} {{}}` to {backend.spec_file}, or check FX with --qconfig-mapping"
        )
    _explainable(quantizer)
    import torch

    from ...live.compat.pt2e import analyse, build_quantizer, configure, import_torchao, scratch
    from ...live.targets import ImportFailure, find_function, load_model
    from . import render_pt2e as render

    import_torchao()

    target = args.quantization_config
    with scratch() as root:
        getter = build_quantizer(quantizer, root)
        try:
            progress(f"calling {args.model}")
            function = find_function(target, project.allow)
            model = load_model(args.model, project.allow)
            progress(f"calling {target}")
            # Called once: a bad config is a usage error, before export.
            configured, configured_how = configure(getter(), target, function)
        except ImportFailure as exc:
            raise UsageError(str(exc)) from None
        where = {r.name: str(r.origins[0].item) for r in quantizer.rules if r.origins}
        progress(f"exporting and preparing {args.model} with {target}")
        result = analyse(
            model[0],
            model[1],
            configured,
            qat=args.qat,
            strict=args.strict_export,
            where=where,
        )
        header = render.Header(
            backend=backend.module,
            spec=quantizer.spec_file,
            config=target,
            model=args.model,
            qat=args.qat,
            strict=args.strict_export,
            torch=torch.__version__,
            how=configured_how,
        )
        table = render.rows(result)  # the report's classes are the scratch package's
    return _show(args, report, render, (header, result, table), result.error, result.not_quantized)
