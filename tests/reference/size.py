"""python -m tests.reference.size: the size of the specs against the quantizers they reproduce.

X86 and Arm Inductor against torchao's code; Cortex-M (specs/cortex_m.bcfg and
the hooks it names) against ExecuTorch's ``backends/cortex_m/quantizer/``
(every file of it; its reporter, ``quantizer_reporter.py``, is not
reproduced and not counted), found in this environment or in the one of
``tests/live/envs.py``'s ``ARM``. Cadence (specs/cadence.bcfg and its hooks) against
ExecuTorch's ``backends/cadence/aot/quantizer/``: ``quantizer.py``, the
annotating half of ``patterns.py`` (``PartitionAnchors`` and each pattern's
``partition_types`` and ``get_anchors``; its ``fuse`` and ``replacement_op``
are the post-convert fusion pass's, which the hooks reuse) and the annotating
functions of ``utils.py`` (``CADENCE_UTILS``). Arm TOSA (specs/arm_tosa.bcfg and its hooks) against
the five files of ExecuTorch's ``backends/arm/quantizer/`` that hold its
quantizer (``ARM_REFERENCE``: both its implementations, the configs, the
support table; ``__init__.py`` left out). NXP (specs/nxp.bcfg and its hooks)
against ExecuTorch's ``backends/nxp/quantizer/``: its three files
(``NXP_REFERENCE``). Qualcomm (specs/qualcomm.bcfg and its hooks) against every file of
ExecuTorch's ``backends/qualcomm/quantizer/`` (``QUALCOMM_FILES``).

Spec lines and hook lines are counted non-blank and non-comment; torchao's
quantizers (the installed x86_inductor_quantizer.py and arm_inductor_quantizer.py)
as code lines: not blank, not a comment, not inside a docstring.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from tests.targets import BY_NAME, TARGETS

ROOT = Path(__file__).resolve().parent.parent.parent
# The specs and hooks counted: the target registry's (tests/targets.py) rows.
SPECS = [BY_NAME[n].spec for n in ("x86_inductor", "arm_inductor")]
HOOKS = [h for n in ("x86_inductor", "arm_inductor") for h in BY_NAME[n].hooks]  # none
BUDGET = 0.25  # of torchao's code lines


def spec_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def python_code_lines(text: str) -> int:
    """Lines that hold a Python token other than a comment or a docstring."""
    lines: set[int] = set()
    prev = tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tok.type
        if kind in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                    tokenize.DEDENT, tokenize.ENDMARKER):  # fmt: skip
            if kind in (tokenize.NEWLINE,):
                prev = kind
            continue
        docstring = kind == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT)
        if not docstring:
            lines.update(range(tok.start[0], tok.end[0] + 1))
        prev = kind
    return len(lines)


def figures() -> tuple[int, int]:
    """(spec + hook lines of both specs, torchao's code lines of both quantizers)."""
    import torchao.quantization.pt2e.quantizer as q

    ours = sum(spec_lines((ROOT / p).read_text()) for p in SPECS)
    ours += sum(python_code_lines((ROOT / p).read_text()) for p in HOOKS)
    folder = Path(q.__file__).parent
    theirs = sum(
        python_code_lines((folder / f).read_text())
        for f in ("x86_inductor_quantizer.py", "arm_inductor_quantizer.py")
    )
    return ours, theirs


CORTEX_M_SPECS = [BY_NAME["cortex_m"].spec]
CORTEX_M_HOOKS = list(BY_NAME["cortex_m"].hooks)


def executorch_dir() -> Path | None:
    """Where ExecuTorch is installed: here, else in the Arm environment; None if nowhere."""
    import importlib.util

    from tests.live.envs import ARM
    from tests.live.executorch_suites import installed

    if importlib.util.find_spec("executorch") is not None:
        return installed()
    return installed(ARM.python()) if ARM.ready() else None


def cortex_m_figures() -> tuple[int, int] | None:
    """(spec + hook lines of specs/cortex_m.bcfg, ExecuTorch's Cortex-M quantizer's code lines)."""
    where = executorch_dir()
    folder = where / "backends" / "cortex_m" / "quantizer" if where else None
    if folder is None or not folder.is_dir():
        return None
    ours = sum(spec_lines((ROOT / p).read_text()) for p in CORTEX_M_SPECS)
    ours += sum(python_code_lines((ROOT / p).read_text()) for p in CORTEX_M_HOOKS)
    theirs = sum(python_code_lines(f.read_text()) for f in sorted(folder.glob("*.py")))
    return ours, theirs


CADENCE_SPECS = [BY_NAME["cadence"].spec]
CADENCE_HOOKS = list(BY_NAME["cadence"].hooks)
CADENCE_PATTERNS = {"PartitionAnchors", "partition_types", "get_anchors"}
CADENCE_UTILS = {
    "is_annotated", "no_outside_users", "get_bias_qparams", "get_aten_node_target_partitions",
    "_partitions_sequential", "find_sequential_partitions_aten",
}  # fmt: skip


def definitions_lines(text: str, names: set[str]) -> int:
    """The code lines of the classes and functions (at any depth) called one of ``names``."""
    import ast

    lines = text.splitlines()
    total = 0
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            total += python_code_lines("\n".join(lines[start - 1 : node.end_lineno]) + "\n")
    return total


def cadence_figures() -> tuple[int, int] | None:
    """(spec + hook lines of specs/cadence.bcfg, ExecuTorch's Cadence quantizing code lines)."""
    where = executorch_dir()
    folder = where / "backends" / "cadence" / "aot" / "quantizer" if where else None
    if folder is None or not folder.is_dir():
        return None
    ours = sum(spec_lines((ROOT / p).read_text()) for p in CADENCE_SPECS)
    ours += sum(python_code_lines((ROOT / p).read_text()) for p in CADENCE_HOOKS)
    theirs = python_code_lines((folder / "quantizer.py").read_text())
    theirs += definitions_lines((folder / "patterns.py").read_text(), CADENCE_PATTERNS)
    theirs += definitions_lines((folder / "utils.py").read_text(), CADENCE_UTILS)
    return ours, theirs


ARM_SPECS = [BY_NAME["arm_tosa"].spec]
ARM_HOOKS = list(BY_NAME["arm_tosa"].hooks)
ARM_REFERENCE = [
    "arm_quantizer.py", "quantization_annotator.py", "arm_quantizer_utils.py",
    "quantization_config.py", "quantizer_support.py",
]  # fmt: skip


def arm_figures() -> tuple[int, int] | None:
    """(spec + hook lines of specs/arm_tosa.bcfg, the code lines of ``ARM_REFERENCE``)."""
    where = executorch_dir()
    folder = where / "backends" / "arm" / "quantizer" if where else None
    if folder is None or not all((folder / f).is_file() for f in ARM_REFERENCE):
        return None
    ours = sum(spec_lines((ROOT / p).read_text()) for p in ARM_SPECS)
    ours += sum(python_code_lines((ROOT / p).read_text()) for p in ARM_HOOKS)
    theirs = sum(python_code_lines((folder / f).read_text()) for f in ARM_REFERENCE)
    return ours, theirs


# ExecuTorch's vendor quantizers reproduced whole: a registry row's ``counted`` files under
# executorch/backends/, every one counted (tests/targets.py), by the row's name.
VENDORS: dict[str, list[str]] = {t.name: list(t.counted) for t in TARGETS if t.counted}


def vendor_figures(name: str) -> tuple[int, int] | None:
    """(spec + hook lines of the registry row ``name``, the code lines of its ``counted`` files)."""
    target, files = name, VENDORS[name]
    where = executorch_dir()
    folder = where / "backends" if where else None
    if folder is None or not all((folder / f).is_file() for f in files):
        return None
    ours = spec_lines((ROOT / BY_NAME[target].spec).read_text())
    ours += sum(python_code_lines((ROOT / p).read_text()) for p in BY_NAME[target].hooks)
    return ours, sum(python_code_lines((folder / f).read_text()) for f in files)


# The figures of the docs home page's compass (docs/hooks.py): each registry row's reference
# code lines, written by ``python -m tests.reference.size --write`` (ExecuTorch installed);
# the spec and hook lines are counted afresh whenever the page is rendered.
SIZES = ROOT / "tests" / "reference" / "sizes.json"
_XNNPACK_FILES = ("xnnpack_quantizer.py", "xnnpack_quantizer_utils.py")


def target_lines(name: str) -> int:
    """The spec and hook lines of registry row ``name`` (non-blank, non-comment; hooks as code)."""
    target = BY_NAME[name]
    ours = spec_lines((ROOT / target.spec).read_text())
    return ours + sum(python_code_lines((ROOT / p).read_text()) for p in target.hooks)


def reference_lines() -> dict[str, int]:
    """Each registry row's reference, in code lines, as this module counts it for the row's
    budget (the Inductor classes one file each; XNNPACK's quantizer and its utils)."""
    import importlib.util

    import torchao.quantization.pt2e.quantizer as q

    def code(folder: Path, files: tuple[str, ...] | list[str]) -> int:
        return sum(python_code_lines((folder / f).read_text()) for f in files)

    inductor = Path(q.__file__).parent
    out = {
        "x86_inductor": code(inductor, ["x86_inductor_quantizer.py"]),
        "arm_inductor": code(inductor, ["arm_inductor_quantizer.py"]),
    }
    spec = importlib.util.find_spec("torchao.testing.pt2e._xnnpack_quantizer")
    if spec is not None and spec.origin:
        out["xnnpack"] = code(Path(spec.origin).parent, [f"_{f}" for f in _XNNPACK_FILES])
    where = executorch_dir()
    if where is not None and (where / "backends" / "xnnpack" / "quantizer").is_dir():
        out["xnnpack_executorch"] = code(where / "backends/xnnpack/quantizer", _XNNPACK_FILES)
    for name, found in (
        ("cortex_m", cortex_m_figures()),
        ("cadence", cadence_figures()),
        ("arm_tosa", arm_figures()),
        *((v, vendor_figures(v)) for v in VENDORS),
    ):
        if found is not None:
            out[name] = found[1]
    return out


def line(name: str, ours: int, theirs: int, whose: str) -> str:
    return (
        f"{name}: {ours} spec and hook lines; {whose} {theirs} code lines; "
        f"{ours / theirs:.1%} (budget {BUDGET:.0%}: {int(theirs * BUDGET)})"
    )


if __name__ == "__main__":
    import json
    import sys

    if "--write" in sys.argv[1:]:  # the compass's figures (tests/reference/sizes.json)
        SIZES.write_text(json.dumps(reference_lines(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {SIZES.relative_to(ROOT)}")
        sys.exit(0)
    print(line("X86 + Arm Inductor", *figures(), "torchao"))
    cortex_m = cortex_m_figures()
    print(
        line("Cortex-M", *cortex_m, "ExecuTorch")
        if cortex_m
        else "Cortex-M: ExecuTorch is not installed here nor in the Arm environment"
    )
    cadence = cadence_figures()
    print(line("Cadence", *cadence, "ExecuTorch") if cadence else "Cadence: no ExecuTorch here")
    arm = arm_figures()
    print(
        line("Arm TOSA", *arm, "ExecuTorch")
        if arm
        else "Arm TOSA: ExecuTorch's Arm quantizer is not installed here nor in the Arm environment"
    )
    for vendor in VENDORS:
        found = vendor_figures(vendor)
        print(line(vendor, *found, "ExecuTorch") if found else f"{vendor}: no ExecuTorch here")
