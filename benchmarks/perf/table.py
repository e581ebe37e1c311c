"""The table's output: the machine, the rows, and which targets were met."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path

from .workspace import REPO, python_out

# ------------------------------------------------------------------ report


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GB RAM"
    except (OSError, ValueError, IndexError):
        pass
    torch_version = python_out(
        "import torch; print(torch.__version__)", REPO, dict(os.environ, PYTHONWARNINGS="ignore")
    ).strip()
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}, torch {torch_version}"
    )


Row = Callable[[str, str, str, "bool | None"], None]


def print_table(rows: list[tuple[str, str, str, str]], rounds: int) -> None:
    width = [max(len(r[i]) for r in rows + [("what", "measured", "target", "")]) for i in range(4)]
    print(f"\nMachine: {machine()}")
    print(f"Medians of {rounds} rounds.\n")
    line = (
        "| "
        + " | ".join(h.ljust(w) for h, w in zip(("what", "measured", "target", ""), width))
        + " |"
    )
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in width) + "|")
    for r_ in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r_, width)) + " |")
    missed = [r_ for r_ in rows if r_[3] == "MISSED"]
    judged = [r_ for r_ in rows if r_[3]]
    print(
        f"\n{len(judged) - len(missed)} of {len(judged)} met"
        + (f"; missed: {', '.join(r_[0].strip() for r_ in missed)}" if missed else "")
    )
