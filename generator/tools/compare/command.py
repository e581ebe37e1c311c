"""The ``bcfg compare`` command: 0 if two PT2E quantizers annotate alike, 1 if not, 2 on errors.

It runs the user's code (the quantizers' functions and constructors, the models'
functions, and the quantizers on every graph), so the whole command runs in a child
process (``cli.run_in_child``): whatever that code prints, however it exits or hangs,
stays out of the report and cannot end bcfg; ``--timeout`` bounds the run and
``--graph-timeout`` each graph (a graph past it is a report entry and the run goes on).
"""

from __future__ import annotations

import argparse

from ...cli import ExitCode, Report, UsageError, progress, run_in_child
from ...live.targets import ImportFailure
from . import engine, render
from .load import generated_quantizer, load_models, load_quantizer


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    if args.config is not None and ":" in args.a and ":" in args.b:
        raise UsageError("--config configures a backend's generated quantizer: name a backend")
    if not args.in_child:
        return ExitCode(run_in_child(args, report, f"the comparison of {args.a} and {args.b}"))
    from ...live.compat.pt2e import import_torchao, scratch

    import_torchao()
    with scratch() as root:
        try:
            sides = []
            for target in (args.a, args.b):
                progress(f"loading {target}")
                if ":" in target:
                    sides.append(load_quantizer(target))
                else:
                    sides.append(generated_quantizer(target, root, args.config))
            graphs: list[engine.Graph] = []
            for target in args.models or []:
                progress(f"calling {target}")
                graphs.extend(load_models(target))
        except ImportFailure as exc:
            raise UsageError(str(exc)) from None
        if not args.no_probes:
            try:
                graphs.extend(engine.probe_graphs(args.probe))
            except KeyError as exc:
                raise UsageError(str(exc.args[0])) from None
        graphs.extend(engine.random_graphs(args.random, args.seed))
        if not graphs:
            raise UsageError("nothing to compare on: --no-probes needs --models or --random")
        result = engine.compare(
            sides[0],
            sides[1],
            graphs,
            engine.MODES[args.export],
            args.graph_timeout,
            (args.a, args.b),
            progress,
        )
    report.result(render.render(result, args.format, report_verbose(args)))
    return ExitCode.FINDINGS if result.differing else ExitCode.OK


def report_verbose(args: argparse.Namespace) -> bool:
    return getattr(args, "verbosity", 0) > 0
