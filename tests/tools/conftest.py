"""What the tests of tools share: ``run``, a bcfg command run in-process in a module's project."""

from __future__ import annotations

import sys

import pytest

from generator import cli


@pytest.fixture
def run(project, monkeypatch, capsys):
    """``run(*args)`` -> (exit code, stdout, stderr) of bcfg in the module's ``project`` fixture."""
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("NO_COLOR", "1")

    def call(*args: str, in_child: bool = True) -> tuple[int, str, str]:
        # The command runs the user's code in a child process; the tests of what it says run
        # this process as that child (``in_child``), those of the isolation start the child.
        code = cli.main(list(args), in_child=in_child)
        out = capsys.readouterr()
        return code, out.out, out.err

    return call
