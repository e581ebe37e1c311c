"""Import a reproduced production quantizer on demand and print its figures (issue 48)::

    python -m tests.tools.pt2e_subjects.run NAME [--out DIR] [--memory GB] [-- IMPORT ARGS]

``bcfg import tests.tools.pt2e_subjects.production:NAME -o DIR/NAME.bcfg --models
...:NAME_zoo`` run in the environment the target's reference imports in (``tests/targets.py``:
Cortex-M and Arm TOSA in ExecuTorch's Arm environment of ``tests/live/envs.py``, the others
in this Python), from a copy of this checkout (edits made while it runs do not reach it), in
a project of its own (DIR, default ``/tmp/bcfg-import-NAME``), its address space capped at
``--memory`` GB (default 12). Then a JSON line of figures: graphs the same of all, the
composition kept, the time, and the imported spec's and hooks' lines as
``tests/reference/size.py`` counts them.

ExecuTorch's Arm environment installs ExecuTorch and torch only; bcfg's own pure-Python
dependencies it lacks (lark, black and what they need) are linked from this Python's into
``DIR/_deps``, which goes on its path after the checkout. The figures are in
docs/guides/migrating.md ("Imported production quantizers").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SUBJECTS = "tests.tools.pt2e_subjects.production"
# bcfg's own dependencies (pyproject's [project] dependencies) besides torch
OWN = ("lark", "jinja2", "black", "pygments")


def _python(name: str) -> Path:
    """The Python the target's reference imports in."""
    from tests.live.envs import ENVS
    from tests.targets import BY_NAME

    env = BY_NAME[name].env
    if not env:
        return Path(sys.executable)
    if not ENVS[env].ready():
        raise SystemExit(f"{name} imports in {ENVS[env].root()}, not made: {ENVS[env].command()}")
    return ENVS[env].python()


def _missing(python: Path, names: list[str]) -> list[str]:
    """The distributions of ``names`` that ``python`` cannot import (by their top level)."""
    out = []
    for name in names:
        tops = _tops(name)
        if not tops:
            continue  # nothing to import (a distribution of scripts or data)
        code = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
        probe = subprocess.run([str(python), "-c", code, tops[0]], capture_output=True)
        if probe.returncode != 0:
            out.append(name)
    return out


def _tops(name: str) -> list[str]:
    """A distribution's top-level modules and packages, as installed for this Python."""
    dist = metadata.distribution(name)
    tops = (dist.read_text("top_level.txt") or "").split()
    if not tops:
        files = dist.files or []
        found = {f.parts[0].removesuffix(".py") for f in files if _importable(f.parts[0])}
        tops = sorted(t for t in found if t.isidentifier())
    return tops


def _importable(part: str) -> bool:
    """Whether a distribution's file (its first path part) lives in site-packages and is code:
    not its metadata, not a script installed beside the interpreter (``../../bin``)."""
    return (
        not part.startswith(".")
        and part != "__pycache__"
        and not part.endswith((".dist-info", ".pth", ".data"))
    )


def _requires(name: str) -> list[str]:
    """A distribution's unconditional requirements (no extra, no marker that fails)."""
    out = []
    for req in metadata.requires(name) or []:
        spec, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        out.append(re.split(r"[\s<>=!~\[(]", spec.strip(), maxsplit=1)[0])
    return out


def link_dependencies(python: Path, folder: Path) -> list[str]:
    """Link into ``folder`` this Python's installs of bcfg's own dependencies (and theirs) that
    ``python`` lacks; the distributions linked."""
    todo, done, linked = list(OWN), set(), []
    while todo:
        name = todo.pop(0)
        if name.lower() in done:
            continue
        done.add(name.lower())
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement of another platform or Python
        if not _missing(python, [name]):
            continue
        linked.append(name)
        todo += _requires(name)
        files = {f.parts[0] for f in dist.files or [] if _importable(f.parts[0])}
        for part in sorted(files):
            source = Path(str(dist.locate_file(part)))
            target = folder / part
            if source.exists() and not target.exists():
                folder.mkdir(parents=True, exist_ok=True)
                target.symlink_to(source)
    return linked


def _cap(gigabytes: float):  # type: ignore[no-untyped-def]
    def limit() -> None:
        size = int(gigabytes * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return limit


def figures(out: Path, name: str, stdout: str, seconds: float, returncode: int) -> dict:
    """What a run measured (see the module's docstring)."""
    from tests.reference.size import python_code_lines, spec_lines

    spec, hooks = out / f"{name}.bcfg", out / f"{name}_hooks.py"
    proved = re.search(r"proved: .* on all (\d+) graphs", stdout)
    differ = re.search(r"not proved: (\d+) of (\d+) graphs differ", stdout)
    if proved:
        same, total = int(proved.group(1)), int(proved.group(1))
    elif differ:
        total = int(differ.group(2))
        same = total - int(differ.group(1))
    else:
        same = total = None
    kept = re.search(r"^kept: scopes: (.+)$", _read(out / f"{name}.proof.txt"), re.M)
    proof_json = out / f"{name}.proof.json"  # -- --format json: the report says it as data
    composition = json.loads(_read(proof_json)).get("composition") if proof_json.exists() else None
    return {
        "quantizer": name,
        "returncode": returncode,
        "graphs_same": same,
        "graphs": total,
        "composition": kept.group(1) if kept else composition,
        "seconds": round(seconds),
        "spec_lines": spec_lines(_read(spec)) if spec.exists() else None,
        "hooks_lines": python_code_lines(_read(hooks)) if hooks.exists() else None,
    }


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def main(argv: list[str]) -> int:
    from tests.tools.pt2e_subjects.production import NAMES

    parser = argparse.ArgumentParser(prog="python -m tests.tools.pt2e_subjects.run")
    parser.add_argument("name", choices=NAMES)
    parser.add_argument("--out", type=Path, help="the project it writes in")
    parser.add_argument("--memory", type=float, default=12.0, help="address space cap, GB")
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(extra) - bool(extra)])
    name = args.name
    out = (args.out or Path(tempfile.gettempdir()) / f"bcfg-import-{name}").resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "pyproject.toml").write_text("[tool.bcfg]\n")
    python = _python(name)
    source = out / "_checkout"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".*", "__pycache__", "site"))
    path = [str(source)]
    if python != Path(sys.executable):
        linked = link_dependencies(python, out / "_deps")
        if linked:
            print(f"linked for {python}: {', '.join(linked)}", file=sys.stderr)
            path.append(str(out / "_deps"))
    command = [str(python), "-m", "generator", "import", f"{SUBJECTS}:{name}"]
    command += ["-o", str(out / f"{name}.bcfg"), "--models", f"{SUBJECTS}:{name}_zoo"]
    command += ["--timeout", "7200", *extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "OMP_NUM_THREADS": "1"}
    start = time.monotonic()
    run = subprocess.run(
        command, cwd=out, env=env, capture_output=True, text=True, preexec_fn=_cap(args.memory)
    )
    seconds = time.monotonic() - start
    (out / "stdout.txt").write_text(run.stdout)
    (out / "stderr.txt").write_text(run.stderr)
    result = figures(out, name, run.stdout + run.stderr, seconds, run.returncode)
    print(json.dumps(result))
    (out / "figures.json").write_text(json.dumps(result) + "\n")
    return 0 if run.returncode in (0, 1) else run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
