#!/usr/bin/env python3
"""What the PT2E quantizer's report costs: ``annotate`` with it off, on, and at another revision.

    python benchmarks/pt2e_report.py                 # off and on, this checkout's runtime
    python benchmarks/pt2e_report.py --against main  # and the runtime of a git revision

The shipped xnnpack quantizer (generated/xnnpack_quantizer.py with its
_bcfg_pt2e runtime) annotates an exported model of 40 conv + relu blocks with a
residual add each, many times; annotations are cleared between calls, so each
call does the whole work. ``--against REV`` copies generated/ of REV from git
into a temporary folder and times its quantizer the same way (off only: REV may
have no report). Medians of rounds that interleave the variants; a measurement,
not a test.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEY = "quantization_annotation"


def package(root: Path, name: str, rev: str | None) -> str:
    """generated/_bcfg_pt2e and xnnpack_quantizer.py (of ``rev``, or this checkout) as ``name``."""
    pkg = root / name
    (pkg / "_bcfg_pt2e").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    if rev is None:
        for path in (REPO / "generated" / "_bcfg_pt2e").glob("*.py"):
            shutil.copy(path, pkg / "_bcfg_pt2e" / path.name)
        shutil.copy(REPO / "generated" / "xnnpack_quantizer.py", pkg / "xnnpack_quantizer.py")
    else:
        files = subprocess.run(
            ["git", "ls-tree", "--name-only", f"{rev}:generated/_bcfg_pt2e"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        for f in [*(f"_bcfg_pt2e/{f}" for f in files), "xnnpack_quantizer.py"]:
            text = subprocess.run(
                ["git", "show", f"{rev}:generated/{f}"],
                cwd=REPO,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            (pkg / f).write_text(text)
    return name


def model():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return F.relu(self.conv(x)) + x

    net = nn.Sequential(*[Block() for _ in range(40)]).eval()
    return torch.export.export(net, (torch.randn(1, 8, 8, 8),)).module()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--against", metavar="REV", help="also time the runtime of this git revision")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=20, help="annotate calls per round")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    root = Path(tempfile.mkdtemp(prefix="bcfg-bench-"))
    sys.path.insert(0, str(root))
    variants = {}
    config = get_symmetric_quantization_config()
    here = importlib.import_module(f"{package(root, 'bench_here', None)}.xnnpack_quantizer")
    variants["report off"] = here.get_xnnpack_quantizer().set_global(config)
    variants["report on"] = here.get_xnnpack_quantizer().set_global(config).report(None)
    if args.against:
        name = package(root, "bench_against", args.against)
        there = importlib.import_module(f"{name}.xnnpack_quantizer")
        variants[f"{args.against} (no report)"] = there.get_xnnpack_quantizer().set_global(config)
    gm = model()
    ops = sum(n.op == "call_function" for n in gm.graph.nodes)
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.rounds):
        for label, q in variants.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                for n in gm.graph.nodes:
                    n.meta.pop(KEY, None)
                q.annotate(gm)
            times[label].append((time.perf_counter() - start) / args.calls)
    base = statistics.median(times["report off"])
    print(f"annotate of {ops} ops, median of {args.rounds} rounds of {args.calls} calls:")
    for label, ts in times.items():
        med = statistics.median(ts)
        print(f"  {label:<24} {med * 1000:8.2f} ms   {med / base:5.2f}x")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
