"""The driver: run the resolution passes over a source set, in order.

1. load every spec named (and, through them, every file they import);
2. expand each backend of those specs, in file order;
3. resolve the definitions nothing used, so that their errors show too;
4. resolve the quantizer declarations (``quantizers``) of those specs;
5. check that backend names, and the modules they generate, are unique;
6. warn about definitions no backend used (only when there are no errors).

Definitions are evaluated when first used, so diagnostics come out in source
order of use. Everything a run needs is in one ``Ctx``; two analyses share
nothing but the (thread-safe, read-mostly) parser, so a language server can
run them side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import DEFAULT_ALLOW
from ..diagnostics import Diagnostic, Severity, SpecError
from ..sources import FileSources, SourceSet
from . import checks
from . import model as m
from .coerce import Coercions
from .context import Ctx
from .evaluate import Evaluator
from .expand import Expander
from .facts import TorchFacts
from .load import Loader, Parse, Program
from .model import RUNTIME_MODULE, quantizer_module
from .pt2e.quantizers import Quantizers


@dataclass(frozen=True)
class Analysis:
    """What an analysis found: the backends, its warnings, the texts read, the loaded files,
    and the PT2E quantizers."""

    backends: list[m.Backend]
    warnings: list[Diagnostic]
    sources: dict[str, str]
    program: Program
    quantizers: list[m.Quantizer] = field(default_factory=list)
    # Backends whose quantizer says fx: false: PT2E-only targets, no BackendConfig (not in backends).
    pt2e_only: list[m.Backend] = field(default_factory=list)


def analyze(
    sources: SourceSet,
    names: list[str],
    allow: tuple[str, ...] = DEFAULT_ALLOW,
    facts: TorchFacts | None = None,
    parse: Parse | None = None,
) -> Analysis:
    """Resolve the backends declared in the specs called ``names``; raise SpecError on any error.

    Definitions that no backend of this run uses are warned about only in the
    files named: a file that is merely imported is a library. ``facts``
    answers questions about torch's names (a fresh, uncached table by default);
    ``parse`` turns a source into its syntax tree (``parse_source`` by default).
    """
    analysis, diagnostics = analyze_partial(sources, names, allow, facts, parse)
    if any(d.severity == Severity.ERROR for d in diagnostics):
        raise SpecError(diagnostics, analysis.sources)
    return analysis


def analyze_partial(
    sources: SourceSet,
    names: list[str],
    allow: tuple[str, ...] = DEFAULT_ALLOW,
    facts: TorchFacts | None = None,
    parse: Parse | None = None,
) -> tuple[Analysis, list[Diagnostic]]:
    """``analyze``, returning what resolved and every diagnostic instead of raising on errors.

    With errors, the backends hold the configs of every item that resolved (an
    item with an error is left out), for tools that show partial results (the
    language server). Past ``MAX_ERRORS`` errors it raises SpecError as
    ``analyze`` does.
    """
    ctx = Ctx(facts if facts is not None else TorchFacts(tuple(allow)))
    program = Program()
    loader = (
        Loader(ctx, sources, program) if parse is None else Loader(ctx, sources, program, parse)
    )
    files = []
    for name in names:
        f = loader.load(name)
        if f is not None and f not in files:
            files.append(f)
    coerce = Coercions(ctx, program)
    evaluator = Evaluator(ctx, program, coerce)
    expander = Expander(ctx, program, evaluator, coerce)
    backends: list[m.Backend] = []
    for f in files:
        backends.extend(expander.backends(f))
    for b in backends:
        ctx.report(checks.dead_fusions(b, ctx.facts.identity))
    quantizers = Quantizers(ctx, program, evaluator, coerce).resolve(files, backends)
    evaluator.definitions.check_all()
    _unique_modules(ctx, backends, quantizers)
    # A backend whose quantizer says fx: false is that quantizer's only: no BackendConfig.
    pt2e_only = {q.module for q in quantizers if not q.fx}
    _fx_patterns(ctx, [b for b in backends if b.module not in pt2e_only])
    if ctx.diag.error_count == 0:
        evaluator.definitions.unused_warnings(files, sources)
    fx = [b for b in backends if b.module not in pt2e_only]
    only = [b for b in backends if b.module in pt2e_only]
    analysis = Analysis(fx, ctx.diag.warnings, ctx.diag.sources, program, quantizers, only)
    return analysis, list(ctx.diag.diagnostics)


def _fx_patterns(ctx: Ctx, backends: list[m.Backend]) -> None:
    """FX's sequential patterns have 2 or 3 ops; 4 only in a PT2E-only backend (fx: false).
    A plain Python function FX traces through never matches: a warning, once a place."""
    warned: set[tuple[Any, str]] = set()
    for b in backends:
        for c in b.configs:
            for fn in m.traced_functions(c.pattern):
                where = c.field_span("pattern") or b.span
                if (where, fn.path) not in warned:
                    warned.add((where, fn.path))
                    ctx.warning(where, *traced_through_message(fn.path))
            if isinstance(c.pattern, tuple) and not c.complex and len(c.pattern) > 3:
                ctx.error(
                    c.origin.item if c.origin is not None else b.span,
                    f"a sequential pattern has 2 or 3 elements in a BackendConfig, this one has "
                    f"{len(c.pattern)}",
                    "write it as a 'complex' pattern, or make the backend PT2E-only with "
                    f"quantizer {b.module} {{ fx: false }}",
                )


def traced_through_message(path: str) -> tuple[str, str]:
    """The warning and hint for a pattern naming ``path``, a plain Python function."""
    name = path.rpartition(".")[2]
    return (
        f"FX traces through {path}, a plain Python function: prepare_fx records the torch ops "
        "it calls, never the function, so this pattern's FX config never matches",
        f"register it as an op (torch.library.custom_op) and name the op, or call "
        f"torch.fx.wrap('{name}') at the top of its module so FX keeps the call; under PT2E, "
        "torch.export goes through it too: name the ops it exports as (pt2e: {aten: ...})",
    )


def _unique_modules(ctx: Ctx, backends: list[m.Backend], quantizers: list[m.Quantizer]) -> None:
    """Backend names become file names, as do quantizers: no two may be the same file."""
    seen: dict[str, m.Backend] = {}
    for b in backends:
        # Module names that differ only in case are one file on macOS and Windows.
        first = seen.get(b.module.casefold())
        if first is not None:
            same = "" if first.module == b.module else f" as '{first.module}'"
            ctx.error(
                b.span,
                f"backend '{b.module}' is also declared{same} at {first.span}",
                "backend names become file names and must be unique, whatever their case",
            )
        seen.setdefault(b.module.casefold(), b)
    taken = {quantizer_module(q.module).casefold(): q for q in quantizers}
    for b in backends:
        q = taken.get(b.module.casefold())
        if q is not None:
            ctx.error(
                b.span,
                f"backend '{b.module}' would be generated as the module of the quantizer declared at {q.span}",
                "rename the backend",
            )
        elif b.module.casefold() == RUNTIME_MODULE.casefold() and quantizers:
            ctx.error(
                b.span,
                f"backend '{b.module}' would be generated as the module of bcfg's PT2E runtime",
                "rename the backend",
            )


def resolve_specs(
    root: Path,
    spec_paths: list[Path],
    allow: tuple[str, ...] = DEFAULT_ALLOW,
    facts: TorchFacts | None = None,
) -> Analysis:
    """``analyze`` the spec files ``spec_paths`` on disk, named relative to ``root``."""
    files = FileSources(root)
    return analyze(files, [files.name(p) for p in spec_paths], allow, facts)
