"""OpenVINO's quantizer probed: the evidence of docs/guides/pt2e/openvino.md (run on demand).

ExecuTorch's ``OpenVINOQuantizer`` runs NNCF's ``MinMaxQuantization`` over NNCF's own graph
of the model; it needs ``openvino`` and ``nncf`` from the package index, which bcfg's
environments do not install. The figures come from a venv of their own that sees the main
one's packages (torch 2.13.0, torchao 0.18, ExecuTorch 1.5.1)::

    python3.11 -m venv /tmp/ovenv
    .venv/bin/python -c "import site; print(site.getsitepackages()[0])" \\
        > /tmp/ovenv/lib/python3.11/site-packages/main_venv.pth
    /tmp/ovenv/bin/pip install openvino==2026.4.1 nncf==3.4.0
    PYTHONPATH=. /tmp/ovenv/bin/python -m tests.live.openvino_probe observe   # ~5 min
    PYTHONPATH=. /tmp/ovenv/bin/python -m tests.live.openvino_probe import    # ~15 min

``observe``: OpenVINO's quantizer in its three annotating modes on every graph of bcfg's
probe zoo, strict and non-strict exports, and what of its annotations depends on what
(export mode, the graph around an op, the mode). ``import``: ``bcfg import`` of the
default quantizer (``--no-verify``: the proof runs apart, memory-bounded), the spec
generated in a scratch project, ``bcfg compare`` of the original against it on the probe
zoo, and its differences by category. Each prints its figures as JSON (``--out FILE``
writes them too). The functions ``int8_sym``, ``int8_mixed`` and ``int8_transformer`` are
the subjects (``MODULE:FUNCTION``) both commands hand to bcfg.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MODES = ("int8_sym", "int8_mixed", "int8_transformer")
MEMORY = 10 << 30  # the comparison's address-space limit (one run grew past 20 GB unbounded)


def _quantizer(mode: str) -> Any:
    from executorch.backends.openvino.quantizer import (  # type: ignore[import-untyped]
        OpenVINOQuantizer,
        QuantizationMode,
    )

    return OpenVINOQuantizer(mode=QuantizationMode(mode))


def int8_sym() -> Any:
    """ExecuTorch's default: ``OpenVINOQuantizer()`` (NNCF's performance preset)."""
    return _quantizer("int8_sym")


def int8_mixed() -> Any:
    return _quantizer("int8_mixed")


def int8_transformer() -> Any:
    return _quantizer("int8_transformer")


# ------------------------------------------------------------------ observe


def _canonical(annotated: Any) -> list[tuple[str, Any]]:
    """A dump with node names replaced by ``op#k`` (the k-th node of that op in graph order):
    strict and non-strict exports name the same nodes differently."""
    seen: collections.Counter[str] = collections.Counter()
    names = {}
    for name, op in annotated.ops.items():
        names[name] = f"{op}#{seen[op]}"
        seen[op] += 1

    def rename(value: Any) -> Any:
        if isinstance(value, str) and value in names:
            return names[value]
        if isinstance(value, (list, tuple)):
            return type(value)(rename(v) for v in value)
        return value

    out = []
    for name, record in annotated.dump:
        inputs = [(names.get(i, i), rename(s)) for i, s in record["inputs"]]
        out.append((names[name], {"inputs": inputs, "output": rename(record["output"])}))
    return out


def _shape(record: dict[str, Any]) -> str:
    """An annotation's shape, independent of the graph: which edges are quantized how."""
    ins = sorted(
        "shared" if s[0] == "shared" else f"{s[1]}/{s[4]}" for _, s in record["inputs"] if s
    )
    out = record["output"]
    head = "none" if out is None else ("shared" if out[0] == "shared" else f"{out[1]}/{out[4]}")
    return f"in[{', '.join(ins)}] out[{head}]"


def observe(modes: tuple[str, ...] = MODES) -> dict[str, Any]:
    """Each mode's annotations on the probe zoo, both exports, and what they depend on."""
    import warnings

    from generator.live.probe.annotations import annotate
    from generator.live.probe.zoo import export_probe, select

    warnings.simplefilter("ignore")
    probes = select(None)
    runs: dict[str, dict[tuple[str, bool], Any]] = {m: {} for m in modes}
    exported = {}
    for probe in probes:
        for strict in (False, True):
            try:
                exported[(probe.name, strict)] = export_probe(probe, strict)[0]
            except Exception:  # noqa: BLE001  (a probe torch cannot export: not compared)
                continue
    for mode in modes:
        q = _quantizer(mode)
        for key, gm in exported.items():
            try:
                runs[mode][key] = _canonical(annotate(q, gm))
            except Exception as exc:  # noqa: BLE001  (NNCF raising on a graph: counted)
                runs[mode][key] = f"raised {type(exc).__name__}"
    figures: dict[str, Any] = {"probes": len(probes), "exported": len(exported), "modes": {}}
    for mode in modes:
        run = runs[mode]
        ok = {k: v for k, v in run.items() if not isinstance(v, str)}
        names = sorted({p for p, _ in exported})
        both = [p for p in names if (p, False) in ok and (p, True) in ok]
        annotated = [p for p in both if ok[(p, False)] or ok[(p, True)]]
        by_export = [p for p in annotated if ok[(p, False)] != ok[(p, True)]]
        shapes: dict[str, set[str]] = collections.defaultdict(set)
        on_inputs = shared = activation = 0
        for dump in ok.values():
            for node, record in dump:
                op = node.split("#")[0]
                shapes[op].add(_shape(record))
                out = record["output"]
                if out is not None:
                    activation += 1
                    shared += out[0] == "shared"
                    on_inputs += op == "placeholder"
                shared += sum(1 for _, s in record["inputs"] if s and s[0] == "shared")
        figures["modes"][mode] = {
            "graphs": len(run),
            "raised": sorted(
                {
                    f"{p} ({'strict' if s else 'non-strict'}): {v}"
                    for (p, s), v in run.items()
                    if isinstance(v, str)
                }
            ),
            "probes annotated": len(annotated),
            "probes whose annotations depend on the export mode": len(by_export),
            "first export-dependent probes": by_export[:8],
            "activation quantizers (output specs)": activation,
            "of them on graph inputs (placeholders)": on_inputs,
            "shared specs (unified scales)": shared,
            "ops annotated in more than one shape": {
                op: sorted(s) for op, s in sorted(shapes.items()) if len(s) > 1
            },
        }
        if mode != modes[0]:
            base = runs[modes[0]]
            differ = [
                k for k in run if k in base and not isinstance(run[k], str) and run[k] != base[k]
            ]
            figures["modes"][mode][f"graphs annotated otherwise than {modes[0]}"] = len(differ)
    return figures


# ------------------------------------------------------------------ import and compare


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _bcfg(args: list[str], cwd: Path, env: dict[str, str], out: Path | None = None) -> int:
    """``python -m generator ARGS`` in ``cwd`` (memory-bounded), its output to ``out``."""
    with open(out or os.devnull, "w") as sink:
        return subprocess.run(
            [sys.executable, "-m", "generator", *args],
            cwd=cwd,
            env=env,
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_limit_memory,
        ).returncode


def _normal(record: dict[str, Any] | None) -> Any:
    """What prepare_pt2e observes of a record: its quantized edges and output (an input edge
    with no spec observes nothing; ``_annotated`` is not what is observed)."""
    if record is None:
        return None
    inputs = [i for i in record["inputs"] if i[1] is not None]
    if not inputs and record["output"] is None:
        return None
    return {"inputs": inputs, "output": record["output"]}


def classify(result: dict[str, Any]) -> dict[str, Any]:
    """``bcfg compare --format json``'s differences by category."""
    nodes: collections.Counter[str] = collections.Counter()
    graphs: collections.Counter[str] = collections.Counter()
    formal = 0
    for g in result["graphs"]:
        graphs[g["status"]] += 1
        for d in g.get("differences", []):
            a, b = _normal(d["a"]), _normal(d["b"])
            if a == b:
                formal += 1
            elif a is not None and b is not None:
                nodes[f"both annotate, differently: {d['op']}"] += 1
            elif a is not None:
                nodes[f"only OpenVINO annotates: {d['op']}"] += 1
            else:
                nodes[f"only the spec annotates: {d['op']}"] += 1
    return {
        "graphs": dict(graphs),
        "node differences that prepare_pt2e does not see (_annotated, unquantized edges)": formal,
        "node differences that it does": dict(sorted(nodes.items())),
    }


def import_and_compare(work: Path, probes: list[str] | None = None) -> dict[str, Any]:
    """bcfg import of ``int8_sym`` (no proof), the spec generated, compared with the original."""
    project = work / "project"
    (project / "specs").mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text(
        '[tool.bcfg]\nspecs = "specs"\nout = "generated"\nallow = ["openvino_hooks"]\n'
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(project / "specs")])}
    spec = project / "specs" / "openvino.bcfg"
    subject = "tests.live.openvino_probe:int8_sym"
    only = [a for p in probes or [] for a in ("--probe", p)]
    rc = _bcfg(
        ["import", subject, "-o", str(spec), "--no-verify", "--timeout", "1800", *only], REPO, env
    )
    if not spec.is_file():
        raise SystemExit(f"bcfg import of {subject} wrote no spec (exit {rc})")
    if _bcfg(["generate"], project, env) != 0:
        raise SystemExit(f"bcfg generate of {spec} failed")
    report = work / "compare.json"
    env["PYTHONPATH"] += os.pathsep + str(project)
    rc = _bcfg(
        ["compare", subject, "open_vino", "--format", "json", "--timeout", "3600", *only],
        project,
        env,
        report,
    )
    if rc not in (0, 1):
        raise SystemExit(f"bcfg compare failed (exit {rc}); see {report}")
    lines = [ln for ln in spec.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    hooks = project / "specs" / "openvino_hooks.py"
    return {
        "spec lines": len(lines),
        "hook lines": len([ln for ln in hooks.read_text().splitlines() if ln.strip()]),
        "not reproduced, as the import says": [
            ln.removeprefix("# not reproduced: ")
            for ln in spec.read_text().splitlines()
            if ln.startswith("# not reproduced:")
        ],
        **classify(json.loads(report.read_text())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.live.openvino_probe")
    parser.add_argument("what", choices=("observe", "import"))
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--work", type=Path, help="import: keep the spec and report here")
    parser.add_argument("--probe", action="append", help="import: these probes only (repeat)")
    args = parser.parse_args(argv)
    if args.what == "observe":
        figures = observe()
    elif args.work is not None:
        figures = import_and_compare(args.work, args.probe)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            figures = import_and_compare(Path(tmp), args.probe)
    text = json.dumps(figures, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
