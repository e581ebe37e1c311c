"""``bcfg compare``'s report: text, Markdown or JSON."""

from __future__ import annotations

import json
from typing import Any

from .engine import GraphResult, Result


def _counts(result: Result) -> str:
    gs = result.graphs
    same = sum(g.status == "same" for g in gs)
    differ = sum(g.status == "differ" for g in gs)
    skipped = sum(g.status == "not exported" for g in gs)
    text = f"{len(gs)} graphs: {same} same, {differ} differ"
    return text + (f", {skipped} not exported" if skipped else "")


def _models(result: Result) -> list[tuple[str, str, int]]:
    """Per model (a probe or a model, all its export modes): status and differing nodes."""
    out: dict[str, tuple[str, int]] = {}
    for g in result.graphs:
        status, n = out.get(g.name, ("not exported", 0))
        if g.status == "differ":
            status = "differ"
        elif g.status == "same" and status == "not exported":
            status = "same"
        out[g.name] = (status, n + len(g.diffs))
    return [(name, s, n) for name, (s, n) in out.items()]


def _diff_lines(g: GraphResult, indent: str) -> list[str]:
    lines = []
    if g.reason:
        lines.append(f"{indent}{g.reason}")
    for d in g.diffs:
        a, b = d.lines()
        lines.append(f"{indent}node {d.node} ({d.op}):")
        lines.extend(f"{indent}  A: {x}" for x in a)
        lines.extend(f"{indent}  B: {x}" for x in b)
    return lines


def text(result: Result, verbose: bool = False) -> str:
    lines = [f"compare A = {result.a}", f"    and B = {result.b}", _counts(result)]
    models = _models(result)
    user = [m for m in models if not _is_probe(result, m[0])]
    if user:
        lines.append("models:")
        lines.extend(f"  {name}: {s}" + (f" ({n} nodes)" if n else "") for name, s, n in user)
    ops = result.ops()
    differing_ops = {op: v for op, v in ops.items() if v[1]}
    lines.append(
        f"ops: {len(ops)} annotated, {len(differing_ops)} differ"
        + ("" if not differing_ops else ":")
    )
    lines.extend(f"  {op}: {d} of {n} nodes differ" for op, (n, d) in differing_ops.items())
    if verbose:
        lines.extend(f"  {op}: {n} nodes, same" for op, (n, d) in ops.items() if not d)
    if result.differing:
        lines.append("differences:")
        for g in result.differing:
            lines.append(f"  {g.kind} {g.label}:")
            lines.extend(_diff_lines(g, "    "))
    skipped = [g for g in result.graphs if g.status == "not exported"]
    if skipped and verbose:
        lines.append("not exported:")
        lines.extend(f"  {g.label}: {g.reason}" for g in skipped)
    failing = [g for g in result.graphs if g.status == "same" and g.a_error]
    if failing:
        lines.append(f"both refused {len(failing)} graphs alike (the same error), e.g.")
        lines.extend(f"  {g.label}: {g.a_error}" for g in failing[:3])
    lines.append("same" if not result.differing else f"{len(result.differing)} graphs differ")
    return "\n".join(lines) + "\n"


def _is_probe(result: Result, name: str) -> bool:
    return any(g.name == name and g.kind == "probe" for g in result.graphs)


def markdown(result: Result) -> str:
    lines = [
        "## bcfg compare",
        "",
        f"- A: `{result.a}`",
        f"- B: `{result.b}`",
        f"- {_counts(result)}",
        "",
        "| op | nodes | differ |",
        "| --- | ---: | ---: |",
    ]
    lines.extend(f"| `{op}` | {n} | {d} |" for op, (n, d) in result.ops().items())
    if result.differing:
        lines += ["", "### Differences", ""]
        for g in result.differing:
            lines.append(f"**{g.kind} {g.label}**")
            lines.append("")
            if g.reason:
                lines.append(f"- {g.reason}")
            for d in g.diffs:
                a, b = d.lines()
                lines.append(f"- node `{d.node}` (`{d.op}`)")
                lines.append("")
                lines.append("  | A | B |")
                lines.append("  | --- | --- |")
                for i in range(max(len(a), len(b))):
                    x = a[i] if i < len(a) else ""
                    y = b[i] if i < len(b) else ""
                    lines.append(f"  | {x} | {y} |")
                lines.append("")
    return "\n".join(lines) + "\n"


def as_json(result: Result) -> str:
    def graph(g: GraphResult) -> dict[str, Any]:
        return {
            "name": g.name,
            "kind": g.kind,
            "export": g.export,
            "status": g.status,
            "reason": g.reason,
            "a_error": g.a_error,
            "b_error": g.b_error,
            "differences": [{"node": d.node, "op": d.op, "a": d.a, "b": d.b} for d in g.diffs],
        }

    data = {
        "a": result.a,
        "b": result.b,
        "same": not result.differing,
        "graphs": [graph(g) for g in result.graphs],
        "ops": {op: {"nodes": n, "differ": d} for op, (n, d) in result.ops().items()},
        "models": [{"name": n, "status": s, "nodes": k} for n, s, k in _models(result)],
    }
    return json.dumps(data, indent=1, default=list) + "\n"


def render(result: Result, fmt: str, verbose: bool = False) -> str:
    if fmt == "json":
        return as_json(result)
    if fmt == "markdown":
        return markdown(result)
    return text(result, verbose)
