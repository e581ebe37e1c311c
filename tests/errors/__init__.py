"""The error corpus: broken specs, each with exactly what ``bcfg generate`` prints for it.

A case is a spec ``NAME.bcfg``, or a folder ``NAME/`` whose ``main.bcfg`` is
compiled (for imports). ``NAME.expected`` pins the run's stderr (every
``file:line:col: error: message``, its source line, caret, hint and notes) and
its exit code. The first comment line of a case says which check it shows;
a comment line ``# flags: --strict`` among the first lines passes flags to
``bcfg generate``.

After an intended change of wording, re-accept every message with::

    python -m tests.errors --accept

(or ``python -m pytest tests/test_errors.py --accept``) and review the diff.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ACCEPT_COMMAND = "python -m tests.errors --accept"


def cases() -> list[str]:
    """The name of every case, sorted."""
    names = {p.stem for p in HERE.glob("*.bcfg")}
    names |= {p.name for p in HERE.iterdir() if p.is_dir() and (p / "main.bcfg").is_file()}
    return sorted(names)


def spec_of(name: str) -> Path:
    folder = HERE / name
    return folder / "main.bcfg" if folder.is_dir() else HERE / f"{name}.bcfg"


def expected_path(name: str) -> Path:
    return HERE / f"{name}.expected"


def flags_of(name: str) -> list[str]:
    """The flags a case asks for: ``# flags: --strict`` in its leading comment lines."""
    lines = spec_of(name).read_bytes().decode("utf-8", "replace").splitlines()
    for line in lines[:5]:
        if line.startswith("# flags:"):
            return line.removeprefix("# flags:").split()
    return []


def run_case(name: str) -> str:
    """Run ``bcfg generate`` on the case in-process, from the repo root; return its transcript."""
    import torch  # noqa: F401  - imported first, so its import-time warnings are not in the transcript

    from generator import cli

    spec = spec_of(name).relative_to(REPO).as_posix()
    flags = flags_of(name)
    err = io.StringIO()
    old_cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as out:
        try:
            os.chdir(REPO)
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(["generate", *flags, spec, "--out", out])
        finally:
            os.chdir(old_cwd)
        text = err.getvalue().replace(out, "<out>")
    shown = " ".join([*flags, spec])
    return f"$ bcfg generate {shown}\n{text}[exit {code}]\n"


def accept(names: list[str] | None = None) -> list[str]:
    """Write the current transcript of each case as its expected one; return the names that changed."""
    changed = []
    for name in names or cases():
        got = run_case(name)
        path = expected_path(name)
        if not path.is_file() or path.read_text(encoding="utf-8") != got:
            path.write_text(got, encoding="utf-8")
            changed.append(name)
    return changed
