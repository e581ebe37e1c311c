"""The runtime checks the torchao it runs on, says what to install, and imports it quietly."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402

from generator.runtime import versions  # noqa: E402
from tests.support import REPO  # noqa: E402


def python(source: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` in a fresh interpreter at the repository's root (generated/ importable)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_verified_release_is_the_pt2e_extras():
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    (verified,) = versions.TORCHAO_VERIFIED
    assert f'pt2e = ["torchao=={verified}.*", ' in pyproject
    assert f"torchao=={verified}.*" in versions.INSTALL


@pytest.mark.parametrize("version", ["0.18.0", "0.18.1", "0.18.0+cpu"])
def test_a_verified_release_is_not_reported(version):
    assert versions.unsupported(version) is None


@pytest.mark.parametrize("version", ["0.17.0", "0.19.0", "1.18.0", "0.1.8", "unknown"])
def test_another_release_is_named_with_what_to_install(version):
    message = versions.unsupported(version)
    assert message is not None
    assert f"torchao {version}," in message and "0.18.x" in message
    assert "pip install 'torchao==0.18.*'" in message


def test_load_warns_on_a_release_it_is_not_verified_with(monkeypatch):
    monkeypatch.setattr(versions.metadata, "version", lambda name: "0.19.0")
    with pytest.warns(versions.TorchaoVersionWarning, match=r"this is torchao 0\.19\.0"):
        versions.load()


def test_load_is_silent_on_the_verified_release(recwarn):
    versions.load()
    assert not [w for w in recwarn if issubclass(w.category, versions.TorchaoVersionWarning)]


def test_a_generated_quantizer_without_torchao_says_what_to_install():
    done = python("""
        import sys

        class NoTorchao:
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name == "torchao" or name.startswith("torchao."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name="torchao")

        sys.meta_path.insert(0, NoTorchao)
        import generated.xnnpack_quantizer
        """)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "ModuleNotFoundError: bcfg's generated PT2E quantizers run on torchao: "
        "pip install 'torchao==0.18.*' (bcfg's pt2e extra)"
    ), done.stderr


@pytest.mark.skipif(
    torch.version.cuda is not None,
    reason="torch's CPU build only: on a CUDA build torchao's kernels load, or it says why",
)
def test_a_generated_quantizer_imports_silently_and_the_users_own_output_still_shows():
    done = python("""
        import logging
        import warnings

        import generated.xnnpack_quantizer  # noqa: F401

        print("imported")
        logging.getLogger("torchao").warning("Failed to load my_kernels.so: the user's own")
        logging.getLogger("torch.utils._pytree").warning("MyEnum is an Enum subclass: mine")
        warnings.warn("the user's warning")
        assert not logging.getLogger("torchao").filters
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "imported\n"
    lines = done.stderr.splitlines()
    assert len(lines) == 3, done.stderr  # the user's three, nothing else
    assert lines[0] == "Failed to load my_kernels.so: the user's own"
    assert lines[1].endswith("] MyEnum is an Enum subclass: mine")
    assert lines[2].endswith("UserWarning: the user's warning")


def _logged(stderr: str) -> str:
    """torch's log lines without their time and process id."""
    return re.sub(r"^([WIE])\d{4} [\d:.]+ \d+ ", r"\1 ", stderr, flags=re.M)


@pytest.mark.slow  # two fresh interpreters importing torchao
def test_torchao_imported_first_is_not_filtered():
    """A program that imports torchao itself gets torchao's own output, whatever it is."""
    alone = python("import torchao")
    first = python("import torchao\nimport generated.xnnpack_quantizer")
    assert first.returncode == 0, first.stderr
    assert _logged(first.stderr) == _logged(alone.stderr)
