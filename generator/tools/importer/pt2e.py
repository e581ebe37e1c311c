"""``bcfg import`` of a PT2E quantizer: probe it, write a spec, prove it (in the worker process).

1. ``pt2e_observe``: the quantizer annotates every probe of the zoo (non-strict and
   strict exports); its annotations are read back as matches.
2. ``pt2e_spec``: the matches become patterns, configs and conditions of a
   ``scopes: composable`` spec, with a hooks module for what the language cannot say.
3. The proof (unless ``--no-verify``): the spec is generated into a scratch package and
   its quantizer, from the generated getter with no configuration, is compared with the
   original node by node (``tools.compare.engine``) on every probe, on random models of
   the zoo's ops and on the user's ``--models``. The report is written beside the spec;
   a difference is never dropped: the report lists each, and the import exits 1.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ...config import Project
from ...diagnostics import SpecError
from ...live.targets import ImportFailure
from ..compare import engine, render
from .pt2e_observe import Observations, observe
from .pt2e_spec import (
    CLUSTERS,
    COMPOSITIONS,
    Interpretation,
    Unsayable,
    Writer,
    backend_name,
    interpret,
)

RANDOM_MODELS = 8


def import_quantizer(
    quantizer: Any,
    target: str,
    request: dict[str, Any],
    project: Project,
    phase: Callable[[str], None],
) -> dict[str, Any]:
    start = time.monotonic()
    spec_path, hooks_path, report_path, fmt = _output_paths(quantizer, target, request)
    hooks_module = _dotted(hooks_path, Path(request["root"]))
    try:
        graphs = engine.probe_graphs(request.get("probes"))
    except KeyError as exc:  # a --probe the zoo has not: as bcfg compare says it
        raise ImportFailure(f"{exc.args[0]} (--probe: a graph of the probe zoo)") from None
    graphs += _user_models(request, phase)
    modes = engine.MODES[request.get("export") or "both"]
    seconds = float(request.get("graph_timeout") or 60.0)
    obs = _observe(quantizer, target, graphs, modes, seconds, phase)
    interp = interpret(obs)
    cls = type(quantizer).__name__
    name = backend_name(cls)
    header = _spec_header(cls, target, obs, interp, hooks_path)
    notes = _observation_notes(obs, interp)
    run = _Run(quantizer, target, hooks_module, name, cls, graphs, modes, seconds, project, phase)
    tried, best, problems = _choose_composition(run, interp, header, request["verify"])
    differ, composition, spec_text, hooks_text, result = best
    if len(tried) > 1:
        chosen = f"composition: scopes: {composition}, by generate-and-test: " + "; ".join(
            f"{c}: {what}" for c, what in tried
        )
        notes.insert(0, chosen)
        spec_text = f"# {chosen}\n{spec_text}"
    notes = [f"warning: {p}" for p in dict.fromkeys(problems)] + notes
    files = {str(spec_path): spec_text, str(hooks_path): hooks_text}
    verified = None
    if result is not None:
        files[str(report_path)] = _proof_report(result, fmt, tried, composition)
        same = len(result.graphs) - differ
        verified = (
            f"proved: the generated quantizer annotates as {target}() on all {same} graphs "
            f"({report_path.name})"
            if not differ
            else f"not proved: {differ} of {len(result.graphs)} graphs differ; each is in "
            f"{report_path.name}"
        )
    notes.append(f"import took {time.monotonic() - start:.0f} s")
    allowed = any(hooks_module == a or hooks_module.startswith(a + ".") for a in project.allow)
    return {
        "files": files,
        "backends": [(str(spec_path), name, len(interp.patterns))],
        "described": {
            str(hooks_path): "the spec's hooks (configs and what the language cannot say)",
            str(report_path): "the proof report",
        },
        "notes": notes,
        "findings": [],
        "not_allowed": [] if allowed else [hooks_module],
        "verified": verified,
        "differ": differ,
    }


def _output_paths(
    quantizer: Any, target: str, request: dict[str, Any]
) -> tuple[Path, Path, Path, str]:
    """The spec, hooks module and proof report the import writes, and the report's format."""
    output = request["output"]
    if output is None or not output.endswith(".bcfg"):
        raise ImportFailure(
            f"{target}() returned {type(quantizer).__name__}, a PT2E quantizer: its import writes "
            "a spec, a hooks module and a proof report: name the spec with -o NAME.bcfg"
        )
    spec_path = Path(output)
    hooks_path = spec_path.with_name(f"{spec_path.stem}_hooks.py")
    fmt = request.get("format") or "text"
    report_path = spec_path.with_name(
        f"{spec_path.stem}.proof.{ {'text': 'txt', 'markdown': 'md', 'json': 'json'}[fmt] }"
    )
    return spec_path, hooks_path, report_path, fmt


def _user_models(request: dict[str, Any], phase: Callable[[str], None]) -> list[engine.Graph]:
    """The graphs of the user's ``--models``."""
    from ..compare.load import load_models

    user_models: list[engine.Graph] = []
    for models in request.get("models") or []:
        phase(f"calling {models}")
        user_models.extend(load_models(models))
    return user_models


def _observe(
    quantizer: Any,
    target: str,
    graphs: list[engine.Graph],
    modes: tuple[bool, ...],
    seconds: float,
    phase: Callable[[str], None],
) -> Observations:
    """The quantizer's annotations on every graph; an error when it annotated nothing."""
    from ...live.probe.traces import pattern_cache

    with pattern_cache():  # torchao's pattern traces once, not at every probe
        obs = observe(quantizer, graphs, modes, seconds, phase)
    if not any(m.kind == "chain" for m in obs.matches) and not obs.matches:
        raise ImportFailure(
            f"{target}() returned a quantizer that annotated nothing on {obs.graphs} probe graphs"
            + (f" (it failed on {len(obs.failures)}: {obs.failures[0][1]})" if obs.failures else "")
        )
    return obs


def _spec_header(
    cls: str, target: str, obs: Observations, interp: Interpretation, hooks_path: Path
) -> list[str]:
    """The spec's opening comment: what was probed, what went to the hooks module."""
    return [
        f"{cls}, imported by probing {target} (bcfg import): {obs.graphs} probe graphs, "
        f"{len(obs.matches)} matches,",
        f"{len(interp.patterns)} patterns, {len(interp.configs)} configs. What the language "
        f"cannot say is in {hooks_path.name}:",
        *[f"  {h}" for h in ["CONFIG_*: the quantization configs (observers and their arguments)"]
          + interp.hooks],
        *[f"not reproduced: {n}" for n in interp.notes],
    ]  # fmt: skip


def _observation_notes(obs: Observations, interp: Interpretation) -> list[str]:
    """Warnings for what is not reproduced and the graphs the quantizer failed on."""
    notes = [f"warning: {n}" for n in interp.notes]
    notes += [f"warning: {g}: {why}" for g, why in obs.failures[:5]]
    if len(obs.failures) > 5:
        notes.append(f"warning: the quantizer failed on {len(obs.failures)} probe graphs in all")
    return notes


class _Run(NamedTuple):
    """What every composition's proof runs against."""

    quantizer: Any
    target: str
    hooks_module: str
    name: str
    cls: str
    graphs: list[engine.Graph]
    modes: tuple[bool, ...]
    seconds: float
    project: Project
    phase: Callable[[str], None]


_Best = tuple[int, str, str, str, engine.Result | None]


def _choose_composition(
    run: _Run, interp: Interpretation, header: list[str], verify: bool
) -> tuple[list[tuple[str, str]], _Best, list[str]]:
    """The composition by generate-and-test: composable first (its shared ops annotated by
    hooks.Sharing as observed); while graphs differ, composable with the shared ops as its own
    clusters (``CLUSTERS``), then the language's other schemes with the same observed rules;
    the fewest differing graphs wins.
    Returns what each composition's proof found, the best (differing graphs, composition,
    spec, hooks, proof result) and its writer's problems."""
    tried: list[tuple[str, str]] = []  # (composition, what its proof found)
    best: _Best | None = None
    problems: list[str] = []
    for composition in COMPOSITIONS:
        if best is not None and best[0] == 0:
            break
        if composition != "composable" and not verify:
            continue
        if composition == CLUSTERS and not interp.shares:
            continue  # the same spec as composable's
        writer = Writer(run.name, run.hooks_module, run.target, run.cls)
        try:
            spec_text = writer.spec_text(interp, header, composition)
        except Unsayable as exc:
            tried.append((composition, f"not tried: {exc}"))
            continue
        hooks_text = writer.hooks_text(interp, composition)
        result = None
        differ = 0
        if verify:
            run.phase(f"proving the spec (scopes: {composition}) against the original")
            proved = prove(
                run.quantizer, spec_text, hooks_text, run.hooks_module, run.name, run.graphs,
                run.modes, run.seconds, run.project, run.phase,
            )  # fmt: skip
            if isinstance(proved, str):
                tried.append((composition, f"does not generate: {proved}"))
                if composition == "composable":
                    raise RuntimeError(
                        f"the spec bcfg wrote for {run.target} does not generate: {proved}"
                    )
                continue
            result = proved
            differ = len(result.differing)
            tried.append((composition, _proof_summary(result, interp, composition)))
        if best is None or differ < best[0]:
            best = (differ, composition, spec_text, hooks_text, result)
            problems = writer.problems
    assert best is not None
    return tried, best, problems


def _proof_summary(result: engine.Result, interp: Interpretation, composition: str) -> str:
    """How many graphs a composition's proof found different (and the conditions it drops)."""
    dropped = sum(bool(p.checks) for p in interp.patterns)
    dropped += sum(bool(sh.when) for sh in interp.shares)
    left = (
        f" (without its {dropped} when: conditions: its base reads none)"
        if composition == "modules" and dropped
        else ""
    )
    return f"{len(result.differing)} of {len(result.graphs)} graphs differ{left}"


def _proof_report(
    result: engine.Result, fmt: str, tried: list[tuple[str, str]], composition: str
) -> str:
    """The proof report, with each composition tried and the one kept."""
    report = render.render(result, fmt)
    if fmt == "json":
        data = json.loads(report)
        data["compositions"] = [{"scopes": c, "result": what} for c, what in tried]
        data["composition"] = composition
        return json.dumps(data, indent=1) + "\n"
    return "".join(f"scopes: {c}: {what}\n" for c, what in tried) + (
        f"kept: scopes: {composition}\n\n" + report
    )


def _dotted(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return path.stem
    return ".".join(rel.with_suffix("").parts)


def prove(
    original: Any,
    spec_text: str,
    hooks_text: str,
    hooks_module: str,
    name: str,
    graphs: list[engine.Graph],
    modes: tuple[bool, ...],
    seconds: float,
    project: Project,
    phase: Callable[[str], None],
) -> engine.Result | str:
    """Generate the spec in a scratch folder and compare its quantizer with ``original``;
    the spec's errors (a bug of the import) as a string."""
    from ...live.compat.pt2e import build_quantizer, scratch
    from ...semantics.driver import resolve_specs

    with scratch() as root, _scratch_hooks(hooks_text) as proof_module:
        text = spec_text.replace(f"alias hooks = {hooks_module}", f"alias hooks = {proof_module}")
        spec = root / f"{name}.bcfg"
        spec.write_text(text, encoding="utf-8")
        allow = tuple(dict.fromkeys([*project.allow, proof_module, "torch", "operator"]))
        try:
            analysis = resolve_specs(root, [spec], allow)
        except SpecError as exc:
            errors = [d for d in exc.diagnostics if str(d.severity) == "error"]
            return "; ".join(
                f"{d.span.line if d.span else 0}: {d.message}"
                for d in (errors or exc.diagnostics)[:3]
            )
        if not analysis.quantizers:
            return "no quantizer"
        getter = build_quantizer(analysis.quantizers[0], root)
        generated = getter()  # configured by its constructor, as the user gets it
        graphs = graphs + engine.random_graphs(RANDOM_MODELS)
        return engine.compare(
            original, generated, graphs, modes, seconds, ("original", "generated"), phase
        )


@contextlib.contextmanager
def _scratch_hooks(text: str):  # type: ignore[no-untyped-def]
    folder = tempfile.mkdtemp(prefix="bcfg-hooks-")
    module = f"bcfg_import_hooks_{abs(hash(folder)) % 10**8}"
    Path(folder, f"{module}.py").write_text(text, encoding="utf-8")
    sys.path.insert(0, folder)
    try:
        yield module
    finally:
        sys.path.remove(folder)
        sys.modules.pop(module, None)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
