"""``bcfg diff``: what changed in the BackendConfigs, said in spec terms.

``bcfg diff [BASE [HEAD]]`` resolves the specs as they are at two git
revisions (BASE defaults to ``HEAD``, HEAD to the working tree), never the
checked-in generated files, which may be stale, and compares the resolved
backends (``semantics.compare``). ``bcfg diff --configs A B`` compares two
live BackendConfig getters instead (``live.comparable``), in a child process
(``cli.run_in_child``), as they are the user's code. Symbol facts come
from the cache, so comparing two revisions of specs that name only known
symbols does not import torch; so does a side whose every input resolved
before (``diff_cache``: most diffs resolve a base an earlier one resolved).
"""

from __future__ import annotations

import argparse
import dataclasses

from ..cli import ExitCode, Report, UsageError, run_in_child
from ..config import Project, find_project
from ..diagnostics import Diagnostic, Severity, SpecError
from ..infra.usermodules import user_tops
from ..semantics import model as m
from ..semantics.compare import Identity, compare
from ..semantics.facts import TorchFacts
from ..sources import FileSources, GitError, GitSources, SourceSet
from . import diff_cache, diff_python
from .diff_report import FORMATS, Labels, failing, text


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    if args.configs:
        if args.base is not None:
            raise UsageError("give either two revisions or --configs A B, not both")
        if not args.in_child:  # the getters are the user's code: run them in a child process
            return ExitCode(
                run_in_child(args, report, f"the comparison of {' and '.join(args.configs)}")
            )
        find_project().make_importable()  # the getters may be the project's own modules
        base, head, labels, identity = _live(args.configs)
        quantizers: tuple[list[m.Quantizer], list[m.Quantizer]] = ([], [])
    else:
        project = find_project()
        project.make_importable()  # allowed modules resolve from the working tree at every revision
        try:
            base, head, labels, identity, quantizers, sides = _revisions(
                project, args.base or "HEAD", args.head
            )
        except _Unresolved as exc:
            # The errors say why nothing was compared: they come first, and the warnings of
            # that revision only with -v (a review is not the place to fix them).
            report.diagnostics(exc.error.diagnostics, exc.error.sources)
            message = exc.message
            if exc.warnings and report.verbosity > 0:
                report.diagnostics(exc.warnings, exc.error.sources)
            elif exc.warnings:
                n = len(exc.warnings)
                message += f" ({n} warning{'s' if n != 1 else ''} there not shown; -v shows them)"
            report.message(message)
            return ExitCode.ERROR
    changes = compare(base, head, identity, quantizers)
    python: list[diff_python.PythonChange] = []
    if not args.configs:  # the project's Python the specs name, read at both revisions
        named = diff_python.named(
            [*base, *head, *quantizers[0], *quantizers[1]], user_tops(project)
        )
        python = diff_python.changed(project, named, *sides)
    if args.format == "text":
        report.result(text(changes, labels, report.result_color) + diff_python.text(python))
    elif args.format == "markdown":
        report.result(FORMATS[args.format](changes, labels) + diff_python.text(python))
    else:
        report.result(FORMATS[args.format](changes, labels))
    if args.fail_on:
        why = failing(changes, args.fail_on)
        if why is not None:
            report.message(why)
            return ExitCode.FINDINGS
    return ExitCode.FINDINGS if (changes or python) and args.exit_code else ExitCode.OK


class _Unresolved(Exception):
    """The specs at one side do not resolve: the errors, a line naming the side, and the
    warnings found there."""

    def __init__(self, error: SpecError, message: str, warnings: list[Diagnostic]):
        super().__init__(message)
        self.error = error
        self.message = message
        self.warnings = warnings


def _revisions(project: Project, base: str, head: str | None) -> tuple[
    list[m.Backend],
    list[m.Backend],
    Labels,
    Identity,
    tuple[list[m.Quantizer], list[m.Quantizer]],
    tuple[SourceSet, SourceSet],
]:
    facts = TorchFacts.cached(project.allow)
    try:
        old, old_q, base_label, old_src = _side(project, base, facts)
        new, new_q, head_label, new_src = _side(project, head, facts)
    finally:
        facts.save()

    labels = Labels(base_label, head_label)
    return old, new, labels, facts.identity, (old_q, new_q), (old_src, new_src)


def _side(
    project: Project, revision: str | None, facts: TorchFacts
) -> tuple[list[m.Backend], list[m.Quantizer], str, SourceSet]:
    """The backends and PT2E quantizers the specs resolve to at ``revision`` (None: the working
    tree), and its label."""
    from ..semantics.driver import analyze

    folder = project.rel(project.specs)
    sources: SourceSet
    if revision is None:
        label = "the working tree"
        files = FileSources(project.root)
        paths = sorted(project.specs.glob("*.bcfg")) if project.specs.is_dir() else []
        names = [files.name(p) for p in paths]
        sources = files
    else:
        try:
            at = GitSources(project.root, revision)
        except GitError as exc:
            raise UsageError(f"{exc}") from None
        label = f"{revision} ({at.commit[:7]})" if revision != at.commit else at.commit[:7]
        try:
            names = at.spec_names(folder)
        except GitError as exc:
            raise UsageError(f"cannot list {folder}/: {exc}") from None
        sources = at
    if not names:
        raise UsageError(f"{label} has no specs: no *.bcfg files in {folder}/")
    kept = diff_cache.lookup(project, sources, names)
    if kept is not None:  # these very inputs resolved before
        return kept[0], kept[1], label, sources
    before = diff_cache.snapshot()
    try:
        analysis = analyze(sources, names, project.allow, facts)
    except SpecError as exc:
        where = f"at {label}" if revision is not None else "in the working tree"
        note = f"at revision {label}" if revision is not None else "in the working tree"
        errors: list[Diagnostic] = []
        warnings: list[Diagnostic] = []
        for d in exc.diagnostics:
            notes = (*d.notes, note)
            if revision is not None and _names_user_module(d, project):
                notes += (
                    "the project's own modules are imported from the working tree "
                    f"({', '.join(project.import_path())}) for every revision",
                )
            noted = dataclasses.replace(d, notes=notes)
            (errors if d.severity == Severity.ERROR else warnings).append(noted)
        n = len(errors)
        message = (
            f"the specs {where} do not resolve ({n} error{'s' if n != 1 else ''}); nothing compared"
        )
        raise _Unresolved(SpecError(errors, exc.sources), message, warnings) from None
    # PT2E-only targets (fx: false) too: their patterns are what their quantizers quantize.
    backends = analysis.backends + analysis.pt2e_only
    diff_cache.keep(
        project, sources, names, analysis.sources, before, (backends, analysis.quantizers)
    )
    return backends, analysis.quantizers, label, sources


def _names_user_module(d: Diagnostic, project: Project) -> bool:
    """The diagnostic is about a name in one of the project's own modules."""
    return any(f"'{top}'" in d.message or f"'{top}." in d.message for top in user_tops(project))


def _live(targets: list[str]) -> tuple[list[m.Backend], list[m.Backend], Labels, Identity]:
    from ..live.comparable import Unreadable, read_pair
    from ..live.targets import ImportFailure, load_backend_config

    try:
        a, _ = load_backend_config(targets[0])
        b, _ = load_backend_config(targets[1])
    except ImportFailure as exc:
        hint = ""
        if "a PT2E quantizer" in str(exc):
            hint = (
                ": --configs compares BackendConfigs; compare a quantizer bcfg generates "
                "(a PT2E-only target's too, x86_inductor's) as its spec, with `bcfg diff BASE HEAD`"
            )
        raise UsageError(f"{exc}{hint}") from None
    try:
        base, head = read_pair(a, b, (targets[0], targets[1]))
    except Unreadable as exc:
        raise UsageError(str(exc)) from None
    return [base], [head], Labels(targets[0], targets[1]), lambda path: path
