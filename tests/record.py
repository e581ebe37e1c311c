"""Recordings: each target's zoo exported once and annotated once by the reference class.

    python -m tests.record [TARGET ...]          # every target of tests/targets.py by default
    python -m tests.record --compare TARGET ...  # the generated class against the recording

For each target (a row of ``tests/targets.py``) and each model of its zoo, records
under ``tests/recordings/TARGET/``:

- ``NAME.pt2``: the model exported (``torch.export.save``; strict where the target's flow
  exports strict), and for a ``transformed`` target the graph after the reference's
  ``transform_for_annotation``, exported again: what the comparison annotates;
- ``recording.json``: for each model, the reference quantizer's annotations of the loaded
  program (``tests/live/pt2e_dump.py``'s canonical dump, with the Arm classes' marks), or
  the error ``prepare_pt2e`` raised with it, the graph's node count; what made it (torch,
  torchao and ExecuTorch versions, Python, the command);
- for a deploy target (``deploy``), in each model's entry: the reference's deployment of
  the program (``deployment``): the converted model's outputs (a digest) and quantize and
  dequantize nodes, and, lowered and run, the program's bytes (a digest and size), its
  delegation and the runtime's outputs (a digest), or the stage that failed;
- ``config.pkl``: the quantization config the reference was set up with (torchao's
  objects only), which the comparison hands the generated class (targets set up with a
  config; the others are made without arguments).

A target whose reference imports only in an environment of ``tests/live/envs.py``
(``record_env``) is recorded there (this command runs itself in it). The comparison
(``compare``, ``tests/test_conformance.py``) loads a recording, refuses one made with
other versions (``stale``: named, with the command that re-records it), annotates each
program with the generated class alone (no reference class, no lowering) and returns the
differences node by node. Re-record when a pinned version or a zoo changes: the full tier.
"""

from __future__ import annotations

import json
import pickle
import platform
import re
import sys
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tests.targets import BY_NAME, TARGETS, Target, _load

ROOT = Path(__file__).resolve().parent / "recordings"
PINNED = ("torch", "torchao", "executorch")  # a recording of other versions is stale
FORMAT = 1


def versions() -> dict[str, str]:
    """The pinned packages' versions here, without a local label (``2.13.0+cpu``: 2.13.0)."""
    out = {}
    for name in PINNED:
        try:
            out[name] = version(name).split("+")[0]
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def slug(model: str) -> str:
    """A zoo model's name as a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model).strip("_")


def folder(target: Target, root: Path = ROOT) -> Path:
    return root / target.name


def command(target: Target) -> str:
    return f"python -m tests.record {target.name}"


def program(target: Target, path: Path) -> Any:
    """The recorded program at ``path`` as a graph module, as the reference was handed it:
    for a target recorded in its environment (``record_env``), without torch's
    ``_guards_fn`` call (torch leaves it out when a file whose path names executorch calls
    ``.module()``, and there every file does, the environment's folder being
    ``executorch-arm``; Cortex-M's passes refuse the ``call_module``)."""
    import torch

    return torch.export.load(path).module(check_guards=not target.record_env)


# ----------------------------------------------------------------- annotate


def canonical(gm: Any) -> list:
    """The annotations of ``gm`` as JSON data: the canonical dump (an annotation's fields
    beyond torchao's, not the name of its class: torchao's X86 class and bcfg's differ), and
    for each node the marks ExecuTorch's Arm classes leave in ``meta["custom"]``."""
    from tests.live.pt2e_dump import dump

    records = dict(dump(gm))
    out = []
    for n in gm.graph.nodes:
        custom = n.meta.get("custom", {})
        marks = [custom[k] for k in ("_arm_annotation_info", "cortex_m") if k in custom]
        if "_arm_disallow_tfa" in n.meta:
            marks.append({"disallow_tfa": n.meta["_arm_disallow_tfa"]})
        if n.name not in records and not marks:
            continue
        record = dict(records.get(n.name, {}))
        if "extra" in record:  # the annotation's fields beyond torchao's, not its class name
            record["extra"] = record["extra"][1]
        if record:
            record["inputs"] = [(i, _derived(s)) for i, s in record["inputs"]]
            record["output"] = _derived(record["output"])
        if marks:
            record["marks"] = marks
        out.append((n.name, record))
    return json.loads(json.dumps(out, default=repr))


def _derived(spec: Any) -> Any:
    """A derived spec with its function named by role: the reference's function (Cadence's
    int32 bias) and the generated module's are two functions of one formula."""
    if spec and spec[0] == "derived":
        return (spec[0], spec[1], "derive_qparams_fn", *spec[3:])
    return spec


def annotate(gm: Any, quantizer: Any, transform: bool = True) -> Any:
    """``quantizer``'s annotations of ``gm`` as ``canonical`` data (its transform first unless
    ``transform`` is False, then ``annotate`` and ``validate``, as ``prepare_pt2e`` calls
    them), or ``{"error": type}`` when one of them raises."""
    try:
        if transform:
            gm = quantizer.transform_for_annotation(gm)
        quantizer.annotate(gm)
        quantizer.validate(gm)
    except Exception as exc:  # the same failure on both sides is the same behaviour
        return {"error": type(exc).__name__}
    return canonical(gm)


def export(target: Target, model: Any, args: tuple) -> Any:
    """The model exported as the target's flow exports it (Cadence: its own trace, which
    keeps the quantizer's ops from decomposition)."""
    import torch

    torch.manual_seed(0)
    if target.name == "cadence":
        from executorch.backends.cadence.aot.compiler_funcs import trace

        keep = target.reference_class()().get_ops_to_preserve_from_decomposition()
        return trace(model, args, strict=True, ops_to_keep=keep)
    return torch.export.export(model, args, strict=target.exports_strict)


# ------------------------------------------------------------------- record


def record(target: Target, root: Path = ROOT) -> dict[str, Any]:
    """Record ``target`` here (its reference must import): write its folder, return the
    recording."""
    import torch

    where = folder(target, root)
    where.mkdir(parents=True, exist_ok=True)
    for old in where.glob("*.pt2"):
        old.unlink()
    config = None
    if not target.setup:
        config = target.make_config()
        (where / "config.pkl").write_bytes(pickle.dumps(config, protocol=4))
    models: dict[str, Any] = {}
    names: dict[str, str] = {}
    for name, (model, args) in target.models().items():
        file = f"{slug(name)}.pt2"
        assert file not in names, f"{name!r} and {names.get(file)!r} share the file {file}"
        names[file] = name
        exported = export(target, model, args)
        if target.transformed:
            q = target.make(target.reference_class())
            gm = q.transform_for_annotation(exported.module())
            exported = torch.export.export(gm, args, strict=False)
        torch.export.save(exported, where / file)
        gm = program(target, where / file)
        q = target.make(target.reference_class())
        models[name] = {
            "program": file,
            "nodes": len(gm.graph.nodes),
            "annotations": annotate(gm, q, transform=not target.transformed),
        }
        if target.deploy:
            reference = target.make(target.reference_class())
            models[name]["deploy"] = deployment(target, where / file, reference, lower=True)
    made = {
        "format": FORMAT,
        "target": target.name,
        "reference": target.reference,
        "command": command(target),
        "python": platform.python_version(),
        **versions(),
        "config": "config.pkl" if config is not None else None,
        "models": models,
    }
    (where / "recording.json").write_text(json.dumps(made, indent=1, sort_keys=True) + "\n")
    return made


def record_anywhere(target: Target, root: Path = ROOT) -> None:
    """Record ``target`` here, or in its ``record_env`` (running this command there)."""
    from tests.live.envs import ENVS

    env = ENVS.get(target.record_env)
    if env is None or Path(sys.executable).absolute() == env.python().absolute():
        made = record(target, root)
        print(f"{target.name}: {len(made['models'])} models recorded in {folder(target, root)}")
        return
    if not env.ready():
        raise SystemExit(f"{target.name} records in {env.root()}, not made: {env.command()}")
    run = env.run_module("tests.record", target.name, "--root", str(root), timeout=3600)
    sys.stdout.write(run.stdout)
    if run.returncode:
        sys.stderr.write(run.stderr[-4000:])
        raise SystemExit(f"{target.name}: recording in {env.root()} failed")


# ------------------------------------------------------------------ compare


class Stale(Exception):
    """A recording made with other versions than these, or missing."""


def load(target: Target, root: Path = ROOT) -> dict[str, Any]:
    """The recording of ``target``; ``Stale`` (naming it and how to re-record) when it is
    missing or was made with other versions of torch, torchao or ExecuTorch."""
    path = folder(target, root) / "recording.json"
    if not path.exists():
        raise Stale(f"{path}: no recording of {target.name}: {command(target)}")
    made = json.loads(path.read_text())
    here = versions()
    differ = [f"{k} {made.get(k)} (here {here[k]})" for k in PINNED if made.get(k) != here[k]]
    if differ or made.get("format") != FORMAT:
        what = ", ".join(differ) or f"format {made.get('format')} (here {FORMAT})"
        raise Stale(f"{path} is stale: made with {what}; re-record: {command(target)}")
    return made


def generated_quantizer(target: Target, made: dict[str, Any], root: Path = ROOT) -> Any:
    """The generated class configured as the reference was: the recorded config, or none."""
    cls = target.generated_class()
    if made["config"] is None:
        return target.make(cls)
    config = pickle.loads((folder(target, root) / made["config"]).read_bytes())
    return cls().set_global(config)


def compare(target: Target, model: str, root: Path = ROOT) -> list[str]:
    """The generated class against the recording of ``model``: every difference."""
    from tests.live.pt2e_dump import differences

    made = load(target, root)
    entry = made["models"][model]
    gm = program(target, folder(target, root) / entry["program"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = annotate(gm, generated_quantizer(target, made, root), not target.transformed)
    theirs = entry["annotations"]
    if isinstance(theirs, dict) or isinstance(ours, dict):
        return [] if theirs == ours else [f"outcomes differ: recorded {theirs}, generated {ours}"]
    return differences([tuple(r) for r in theirs], [tuple(r) for r in ours])


# ------------------------------------------------------------------- deploy


def digest(tensors: list[Any] | None) -> list | None:
    """Tensors as (dtype, shape, SHA-256 of their bytes): equal digests, bit-identical tensors."""
    import hashlib

    if tensors is None:
        return None
    return [
        [str(t.dtype), list(t.shape), hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest()]
        for t in (t.detach().cpu() for t in tensors)
    ]


def deployment(target: Target, path: Path, quantizer: Any, lower: bool) -> dict[str, Any]:
    """``quantizer`` on the program at ``path`` through the target's deploy flow: prepared,
    calibrated (seeded, tests/live/executorch_support.py), converted, and (``lower``) lowered
    by ``target.deploy`` and run, on one torch thread. ``converted``: what convert gave
    (compared in the PR tier); ``deployed``: what lowering and the runtime gave."""
    import torch

    from tests.live.executorch_support import deploy_module

    exported = torch.export.load(path)
    args = exported.example_inputs[0]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        # oneDNN on, as recorded: Qualcomm's quantizer (and so its generated copy) turns it off
        # for the whole process on AMD CPUs (disable_mkldnn_on_amd, in transform_for_annotation),
        # and a converted model's outputs are bit for bit only under one setting.
        with torch.backends.mkldnn.flags(enabled=True):
            out = deploy_module(
                lambda: exported.module(check_guards=False),  # as ExecuTorch's flows load it
                args,
                quantizer,
                _load(target.deploy) if lower else None,
            )
    finally:
        torch.set_num_threads(threads)
    lowering = out.failed and not out.failed.startswith(("export:", "prepare_pt2e", "convert_pt2e"))
    made: dict[str, Any] = {
        "converted": {
            "failed": "" if lowering else out.failed,
            "qdq": dict(sorted(out.qdq.items())),
            "outputs": digest(out.converted),
        }
    }
    if lower:
        made["deployed"] = {
            "failed": out.failed if lowering else "",
            "pte_sha256": out.pte_sha256,
            "pte_size": out.pte_size,
            "delegates": out.delegates,
            "delegated_ops": dict(sorted(out.delegated_ops.items())),
            "outside_ops": dict(sorted(out.outside_ops.items())),
            "runtime": digest(out.outputs),
        }
    return json.loads(json.dumps(made))


def compare_deployment(target: Target, model: str, lower: bool, root: Path = ROOT) -> list[str]:
    """The generated class through the deploy flow on the recording of ``model``, against
    the reference's: converted (``lower`` False: nothing lowered, nothing of ExecuTorch
    imported for a generated class that imports none), or converted, lowered and run."""
    made = load(target, root)
    entry = made["models"][model]
    path = folder(target, root) / entry["program"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = deployment(target, path, generated_quantizer(target, made, root), lower)
    theirs = entry["deploy"]
    return [
        f"{part} {key}: recorded {theirs[part][key]!r}, generated {ours[part][key]!r}"
        for part in ours
        for key in ours[part]
        if ours[part][key] != theirs[part][key]
    ]


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.record")
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=", ".join(BY_NAME))
    parser.add_argument("--compare", action="store_true", help="compare, do not record")
    parser.add_argument("--root", type=Path, default=ROOT, help="the recordings' folder")
    args = parser.parse_args(argv)
    unknown = [n for n in args.targets if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}: one of {', '.join(BY_NAME)}")
    chosen = [BY_NAME[n] for n in args.targets] or list(TARGETS)
    if not args.compare:
        for target in chosen:
            record_anywhere(target, args.root.resolve())
        return 0
    root = args.root.resolve()
    report = {f"{t.name} {m}": compare(t, m, root) for t in chosen for m in load(t, root)["models"]}
    print(json.dumps(report, indent=1))
    return 1 if any(report.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
