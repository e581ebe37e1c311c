"""python -m tests.reference.size: the size of the X86 and Arm Inductor specs against torchao's code.

Spec lines and hook lines are counted non-blank and non-comment; torchao's
quantizers (the installed x86_inductor_quantizer.py and arm_inductor_quantizer.py)
as code lines: not blank, not a comment, not inside a docstring.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SPECS = ["specs/x86_inductor.bcfg", "specs/arm_inductor.bcfg"]
HOOKS: list[str] = []  # neither spec names a hook
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


if __name__ == "__main__":
    ours, theirs = figures()
    print(
        f"X86 + Arm Inductor: {ours} spec and hook lines; torchao {theirs} code lines; "
        f"{ours / theirs:.1%} (budget {BUDGET:.0%}: {int(theirs * BUDGET)})"
    )
