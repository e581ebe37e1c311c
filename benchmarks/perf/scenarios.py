"""The command-level scenarios: synthetic specs and targets, check, diff, generate,
docs, import, parse and build times, each timed in interleaved rounds."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import time
from collections import defaultdict
from pathlib import Path

from .workspace import PY, REPO, SCRIPT, Workspace, clone, diff_workspace, python_out, run

# Torch's own getters, to compare build times with (see torch-facts.md).
TORCH_GETTERS = {
    "native": "torch.ao.quantization.backend_config:get_native_backend_config",
    "fbgemm": "torch.ao.quantization.backend_config:get_fbgemm_backend_config",
    "qnnpack": "torch.ao.quantization.backend_config:get_qnnpack_backend_config",
    "x86": "torch.ao.quantization.backend_config.x86:get_x86_backend_config",
    "onednn": "torch.ao.quantization.backend_config:get_onednn_backend_config",
    "executorch": "torch.ao.quantization.backend_config:get_executorch_backend_config",
    "tensorrt": "torch.ao.quantization.backend_config:get_tensorrt_backend_config",
    "qnnpack_pt2e": "torch.ao.quantization.backend_config._qnnpack_pt2e:get_qnnpack_pt2e_backend_config",
}

# Module classes and functions of torch 2.13 to build synthetic patterns from.
_MODULES = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "Linear",
    "Bilinear",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LayerNorm",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "ReLU",
    "ReLU6",
    "Hardtanh",
    "Hardswish",
    "Hardsigmoid",
    "ELU",
    "LeakyReLU",
    "PReLU",
    "SiLU",
    "Mish",
    "GELU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "Dropout",
    "Identity",
    "Flatten",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
]
_FUNCTIONS = [
    "relu",
    "relu6",
    "hardtanh",
    "hardswish",
    "elu",
    "leaky_relu",
    "silu",
    "mish",
    "gelu",
    "sigmoid",
    "tanh",
    "dropout",
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "avg_pool2d",
]


def synthetic_spec(n: int) -> str:
    """A backend with ``n`` distinct patterns (pairs, then triples), written out one by one."""
    atoms = [f"nn.{c}" for c in _MODULES] + [f"F.{f}" for f in _FUNCTIONS]
    lines = [
        "# Synthetic spec for bcfg's benchmark: many distinct patterns, written out.",
        "dtypes int8 = {input: quint8, output: quint8, weight: qint8, bias: float}",
        "dtypes dyn = {input: quint8, output: float, weight: qint8, bias: float, dynamic: true}",
        "dtypes fp16 = {input: float16, output: float16}",
        "",
        f"backend synth_{n} {{",
    ]
    sets = ["int8", "[int8, dyn]", "fp16"]

    def patterns():
        for a in atoms:
            for b in atoms:
                yield f"({a}, {b})"
        for a in atoms:
            for b in atoms:
                for c in atoms:
                    yield f"({a}, {b}, {c})"

    for i, pat in zip(range(n), patterns()):
        fields = [f"dtypes: {sets[i % 3]}"]
        if i % 7 == 0:
            fields.append("observation: shared_observer")
        if i % 11 == 0:
            fields.append("root: nn.Linear reference: nnqr.Linear")
        lines.append(f"    pattern {pat} {{ {' '.join(fields)} }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def synthetic_target(sizes: tuple[int, ...]) -> str:
    """A Python module whose ``get_synth_<n>_backend_config()`` builds ``n`` distinct patterns.

    The same patterns and fields as ``synthetic_spec``, built through torch's
    API: what ``bcfg import`` reads.
    """
    return (
        textwrap.dedent(f"""
        import torch
        import torch.ao.quantization.backend_config.utils  # noqa: F401
        import torch.ao.nn.quantized.reference as nnqr
        from torch import nn
        from torch.nn import functional as F
        from torch.ao.quantization.backend_config import (
            BackendConfig, BackendPatternConfig, DTypeConfig, ObservationType,
        )

        MODULES = {_MODULES!r}
        FUNCTIONS = {_FUNCTIONS!r}
        INT8 = DTypeConfig(torch.quint8, torch.quint8, torch.qint8, torch.float)
        DYN = DTypeConfig(torch.quint8, torch.float, torch.qint8, torch.float, is_dynamic=True)
        FP16 = DTypeConfig(torch.float16, torch.float16)


        def build(n):
            atoms = [getattr(nn, c) for c in MODULES] + [getattr(F, f) for f in FUNCTIONS]
            patterns = [(a, b) for a in atoms for b in atoms]
            patterns += [(a, b, c) for a in atoms for b in atoms for c in atoms]
            sets = [[INT8], [INT8, DYN], [FP16]]
            configs = []
            for i, pattern in zip(range(n), patterns):
                pc = BackendPatternConfig(pattern).set_dtype_configs(sets[i % 3])
                if i % 7 == 0:
                    pc.set_observation_type(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT)
                if i % 11 == 0:
                    pc.set_root_module(nn.Linear).set_reference_quantized_module(nnqr.Linear)
                configs.append(pc)
            return BackendConfig(f"synth_{{n}}").set_backend_pattern_configs(configs)
        """)
        + "".join(
            f"\n\ndef get_synth_{n}_backend_config():\n    return build({n})\n" for n in sizes
        )
    )


# ------------------------------------------------------------ measurements


class Side:
    """The workspaces of one checkout's command scenarios (see ``measure_commands``)."""

    def __init__(self, root: Path, tag: str, code: Path, scale: tuple[int, int]):
        self.tag = tag
        self.up = Workspace(root, f"{tag}uptodate", code=code)
        self.cold = Workspace(root, f"{tag}cold", code=code)
        self.warm = Workspace(root, f"{tag}warm", code=code)
        self.docs = Workspace(root, f"{tag}docs", code=code)
        self.imp = Workspace(root, f"{tag}import", {}, code=code)
        (self.imp.dir / "synth_target.py").write_text(synthetic_target(scale), encoding="utf-8")
        self.up.bcfg("generate")
        self.docs.bcfg("generate")  # the facts cache now knows every name: bcfg docs needs no torch
        self.up.bcfg("check")  # records the tree as verified
        self.diff = diff_workspace(root, tag, code)
        self.diff.bcfg("diff", "HEAD~1", "HEAD")  # fills the symbol facts cache, as any run would
        self.warm.bcfg("generate")
        self.edited = self.warm.dir / "specs" / "x86.bcfg"
        self.original = self.edited.read_text(encoding="utf-8")

    def round(self, r: int, small: int, times: dict[str, list]) -> None:
        """One round of the scenarios both checkouts run; ``times`` by key with the tag (and
        ``<key>_cpu``: CPU seconds)."""
        t = self.tag

        def took(key: str, result: tuple[float, int, str, float]) -> str:
            times[f"{t}{key}"].append(result[0])
            times[f"{t}{key}_cpu"].append(result[3])
            return result[2]

        took("check", self.up.bcfg("check"))
        took("diff", self.diff.bcfg("diff", "HEAD~1", "HEAD"))
        self.cold.clear_cache()
        self.cold.clear_generated()
        shutil.rmtree(self.cold.dir / "docs", ignore_errors=True)
        took("cold", self.cold.bcfg("generate"))
        # A real edit: one more pattern in the x86 backend, a different one each round.
        extra = f"    pattern (nn.Softmax, nn.{_MODULES[r % len(_MODULES)]}) {{ dtypes: default_quint8 }}\n}}"
        self.edited.write_text(
            self.original.rstrip().removesuffix("}") + extra + f"\n# edit {time.time()}\n",
            encoding="utf-8",
        )
        err = took("warm", self.warm.bcfg("generate"))
        # x86.py, and the docs: README.md, index.html, backends/x86.md (not __init__.py)
        if "wrote generated/x86.py" not in err or "4 written" not in err:
            raise SystemExit(
                f"warm generate after one edit wrote an unexpected set of files:\n{err}"
            )
        shutil.rmtree(self.docs.dir / "docs", ignore_errors=True)  # every docs file to write
        err = took("docs", self.docs.bcfg("docs"))
        # README.md, index.html and one page per backend of specs/
        expected = 2 + len(list((REPO / "specs").glob("*.bcfg"))) - 1  # common.bcfg has none
        if f" {expected} written" not in err:
            raise SystemExit(f"bcfg docs wrote an unexpected set of files:\n{err}")
        self.imp.clear_cache()
        target = f"synth_target:get_synth_{small}_backend_config"
        took("imp_s", self.imp.bcfg("import", target, "-o", f"specs/synth_{small}.bcfg"))


# The scenarios both checkouts run when the benchmark compares with --against.
COMPARED = ("check", "diff", "cold", "warm", "docs", "imp_s")


def measure_commands(
    root: Path, rounds: int, scale: tuple[int, int], against: Path | None = None
) -> dict[str, list]:
    """Interleaved rounds of every command-level scenario (and of ``against``'s, tagged
    ``base:``, alternating which checkout goes first)."""
    small, large = scale
    sides = [Side(root, "", REPO, scale)]
    if against is not None:
        sides.append(Side(root, "base:", against, scale))
    s1 = Workspace(root, "scale-small", {"synth.bcfg": synthetic_spec(small)})
    s2 = Workspace(root, "scale-large", {"synth.bcfg": synthetic_spec(large)})
    fresh = Workspace(root, "fresh")
    if not SCRIPT.exists():
        raise SystemExit(f"no bcfg script next to {PY}: install bcfg there (pip install -e .)")
    own = Workspace(root, "own-modules", own_modules=True)
    own.script("generate")
    if "fast check:" not in own.script("-v", "check")[2]:
        raise SystemExit(
            "bcfg check did not take the fast path in the project with its own modules"
        )
    times: dict[str, list] = defaultdict(list)
    rss: dict[str, list] = defaultdict(list)
    torch_env = sides[0].up.env()
    for r in range(rounds):
        print(f"  round {r + 1}/{rounds}", file=sys.stderr, flush=True)
        times["torch"].append(run([PY, "-c", "import torch"], sides[0].up.dir, torch_env)[0])
        for side in sides if r % 2 == 0 else sides[::-1]:
            side.round(r, small, times)
        times["own"].append(own.script("check")[0])
        # A fresh clone: no cache, no generated/ or docs/, no byte code of bcfg's yet.
        fresh.clear_cache()
        fresh.clear_generated()
        shutil.rmtree(fresh.dir / "docs", ignore_errors=True)
        fresh.code = clone(root / "fresh-code")
        times["fresh"].append(fresh.bcfg("generate")[0])
        for key, ws in (("small", s1), ("large", s2)):
            ws.clear_cache()
            ws.clear_generated()
            t, peak, _, _ = ws.bcfg("generate")
            times[key].append(t)
            rss[key].append(peak)
        imp = sides[0].imp
        imp.clear_cache()
        target = f"synth_target:get_synth_{large}_backend_config"
        t, peak, _, _ = imp.bcfg("import", target, "-o", f"specs/synth_{large}.bcfg")
        times["imp_l"].append(t)
        rss["imp_l"].append(peak)
    times["rss_small"] = rss["small"]
    times["rss_large"] = rss["large"]
    times["rss_imp_l"] = rss["imp_l"]
    times["_sides"] = sides
    times["_own"] = [own]
    return times


def heavy_imports(ws: Workspace, argv: list[str], expect: int, heavy: tuple[str, ...]) -> list[str]:
    """Which of the ``heavy`` modules a run of ``bcfg argv`` imports; it must exit ``expect``."""
    out = python_out(
        f"""
        import contextlib, io, sys
        from generator.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main({argv!r})
        print(code, " ".join(m for m in {heavy!r} if m in sys.modules))
        """,
        ws.dir,
        ws.env(),
    ).split()
    if out[0] != str(expect):
        raise SystemExit(f"bcfg {' '.join(argv)} exited {out[0]}, expected {expect}")
    return out[1:]


def measure_parse(root: Path, rounds: int, n: int) -> list[tuple[str, float, float, int]]:
    """Throughput (MB/s) of ``parse_text`` on the project's specs and on a synthetic spec, and
    of Lark's own LALR parser on the same texts with callbacks that do nothing (its ceiling:
    the grammar, Lark's contextual lexer and parser loop, no model built), interleaved.

    As in a run (``pipeline.compile_project``), the cyclic garbage collector is paused.
    Times are CPU time, medians of the rounds.
    """
    spec = root / "parse.bcfg"
    spec.write_text(synthetic_spec(n), encoding="utf-8")
    out = python_out(
        f"""
        import gc, statistics, time
        from pathlib import Path
        from lark import Lark
        from generator.lang.parse import parse_text
        from generator.resources import resource_path
        corpora = {{
            "the project's specs": [(p.name, p.read_text(encoding="utf-8")) for p in sorted(Path({str(REPO / "specs")!r}).glob("*.bcfg"))],
            "a synthetic spec": [("synthetic.bcfg", Path({str(spec)!r}).read_text(encoding="utf-8"))],
        }}
        lark = Lark(
            resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8"),
            parser="lalr",
            maybe_placeholders=False,
            lexer_callbacks={{"COMMENT": lambda tok: None}},
        )
        for rule in list(lark._callbacks):
            lark._callbacks[rule] = lambda children: None
        parse_text("backend warm {{}}", "warm.bcfg")
        gc.disable()
        for what, texts in corpora.items():
            size = sum(len(t.encode()) for _, t in texts)
            ours, theirs = [], []
            for _ in range(max({rounds}, 5) if size > 100_000 else 5 * {rounds}):
                t = time.process_time()
                for name, text in texts:
                    parse_text(text, name)
                ours.append(time.process_time() - t)
                t = time.process_time()
                for name, text in texts:
                    lark.parse(text)
                theirs.append(time.process_time() - t)
            mbs = [size / statistics.median(x) / 1e6 for x in (ours, theirs)]
            print(what.replace(" ", "_"), mbs[0], mbs[1], size)
        """,
        root,
        {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(root / "parse-cache")},
    )
    return [
        (w.replace("_", " "), float(ours), float(theirs), int(size))
        for w, ours, theirs, size in (ln.split() for ln in out.splitlines())
    ]


def measure_builds(ws: Workspace, rounds: int) -> dict[str, tuple[float, float]]:
    """Median time per call of torch's getter and of the generated one, per backend."""
    out = python_out(
        f"""
        import gc, importlib, statistics, sys, time
        sys.path.insert(0, ".")
        getters = {TORCH_GETTERS!r}

        def per_call(f):
            f()
            samples = []
            for _ in range({max(rounds, 5)} * 4):
                gc.collect()
                gc.disable()
                t = time.perf_counter()
                for _ in range(50):
                    f()
                samples.append((time.perf_counter() - t) / 50)
                gc.enable()
            return statistics.median(samples)

        for name, target in getters.items():
            mod, fn = target.split(":")
            theirs = getattr(importlib.import_module(mod), fn)
            ours = getattr(importlib.import_module("generated." + name), "get_" + name + "_backend_config")
            a, b = per_call(theirs), per_call(ours)
            a2, b2 = per_call(theirs), per_call(ours)  # again, alternating, against drift
            print(name, (a + a2) / 2, (b + b2) / 2)
        """,
        ws.dir,
        ws.env(),
    )
    result = {}
    for line in out.splitlines():
        name, a, b = line.split()
        result[name] = (float(a), float(b))
    return result
