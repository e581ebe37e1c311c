"""Where the grammar, templates and libraries are.

The grammar and templates are at the repo root in a checkout and in
``bcfg_resources/`` beside the package in a wheel; the spec libraries
(``bcfg:torch``) are package data, in ``generator/library/``.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def resource_path(folder: str, name: str) -> Path:
    """Return ``folder/name`` from the installed package, or from the source tree."""
    for base in (_HERE.parent, _HERE.parent / "bcfg_resources"):
        candidate = base / folder / name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"bcfg is installed without its {folder}/{name}")


def library_path(stem: str) -> Path | None:
    """The shipped library ``bcfg:<stem>`` (``generator/library/<stem>.bcfg``), or None."""
    if not stem.isidentifier():
        return None
    candidate = _HERE / "library" / f"{stem}.bcfg"
    return candidate if candidate.is_file() else None


def library_stems() -> list[str]:
    """Every library bcfg ships, by stem (``torch``)."""
    return sorted(p.stem for p in (_HERE / "library").glob("*.bcfg"))
