"""The ``bcfg`` command line: one registry of commands, one way to report, one set of exit codes.

Each command is a module under ``tools/`` with ``add_arguments(parser)`` and
``run(args, report) -> ExitCode``; this module parses the command line, finds
nothing itself, and turns what a command raises into the documented outcome:
``SpecError`` prints its diagnostics and exits 2, ``UsageError`` and
``ConfigError`` one line and exit 2, anything else is a bug (one line, exit 3).
Commands are imported only when run, so ``bcfg check`` on an up-to-date tree
never imports torch, lark, jinja2 or black.

Standard library only at import time.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import IO, Any, cast

from .config import ConfigError
from .diagnostics import (
    OUTPUT_FORMATS,
    Diagnostic,
    Severity,
    SpecError,
    format_all,
    github_command,
    printable,
    use_color,
)
from .infra.write import OutputError
from .sources import GitError

REPORT = "this is a bug in bcfg: please report it with the command, the specs and this line to the bcfg issue tracker"


class ExitCode(IntEnum):
    """What a run's exit status means (docs/reference/commands.md, "Exit codes")."""

    OK = 0  # success; warnings allowed
    FINDINGS = 1  # a check found something: stale output, specs to reformat, ...
    ERROR = 2  # bad usage, a bad pyproject.toml, spec errors, output not writable; nothing changed
    INTERNAL = 3  # a bug in bcfg
    INTERRUPTED = 130


class UsageError(Exception):
    """The command cannot run as asked; the message says why in one line."""


@dataclass
class Report:
    """Where a command's messages go: results on ``out``, everything else on ``err``.

    ``prefix`` starts one-line messages (``bcfg fmt: ...``). ``verbosity`` is
    -1 with ``-q`` (errors and results only), 1 with ``-v`` (also ``detail``);
    ``output_format`` is how diagnostics and findings are printed (``full``,
    ``concise`` or ``github`` annotations).
    """

    prefix: str
    out: IO[str]
    err: IO[str]
    verbosity: int = 0
    output_format: str = "full"
    # Whether the terminals of ``out`` and ``err`` take colour; None: ask them (a child process
    # writing for its parent is told what its parent's streams are).
    colors: tuple[bool, bool] | None = None

    @property
    def color(self) -> bool:
        err = use_color(self.err) if self.colors is None else self.colors[1]
        return err and self.output_format == "full"

    @property
    def result_color(self) -> bool:
        """Whether results (on ``out``) may be coloured: ``out`` is a terminal, NO_COLOR unset."""
        return use_color(self.out) if self.colors is None else self.colors[0]

    def diagnostics(self, diagnostics: list[Diagnostic], sources: dict[str, str]) -> None:
        """Print diagnostics in the compiler format, with excerpts from ``sources``.

        With ``-q``, warnings are left out.
        """
        shown = [d for d in diagnostics if self.verbosity >= 0 or d.severity == Severity.ERROR]
        for text in format_all(shown, sources, self.color, self.output_format):
            print(text, file=self.err)

    def finding(self, file: str, text: str) -> None:
        """A finding about a whole file (out of date, would be reformatted), on stdout."""
        if self.output_format == "github":
            self.result(github_command("error", text, {"file": file, "title": self.prefix}) + "\n")
        else:
            self.result(printable(text) + "\n")

    def replay(self, formatted: str) -> None:
        """A diagnostic formatted (and escaped) by an earlier run, printed as it was."""
        if self.verbosity >= 0:
            print(formatted, file=self.err)

    def info(self, text: str) -> None:
        """A progress or summary line, on stderr (what it quotes escaped: ``printable``); not with -q."""
        if self.verbosity >= 0:
            print(printable(text), file=self.err)

    def detail(self, text: str) -> None:
        """What only ``-v`` shows: where settings came from, which path a run took."""
        if self.verbosity > 0:
            print(f"{self.prefix}: {printable(text)}", file=self.err)

    def message(self, text: str) -> None:
        """A one-line message in the command's voice: ``bcfg fmt: <text>``."""
        print(f"{self.prefix}: {printable(text)}", file=self.err)

    def result(self, text: str) -> None:
        """What the command produces, on stdout (a diff, a spec, a report)."""
        self.out.write(text)


@dataclass(frozen=True)
class Command:
    """A subcommand: its module under ``generator.tools`` provides ``add_arguments`` and ``run``."""

    name: str
    module: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    prefix: str = "bcfg"

    def load(self) -> Any:
        return importlib.import_module(f"generator.tools.{self.module}")


def _common(suppress: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name (``bcfg -q generate``)."""
    common = argparse.ArgumentParser(add_help=False)
    default = argparse.SUPPRESS if suppress else None
    quiet = common.add_mutually_exclusive_group()
    quiet.add_argument(
        "-q",
        "--quiet",
        dest="verbosity",
        action="store_const",
        const=-1,
        default=default if suppress else 0,
        help="print only errors and results",
    )
    quiet.add_argument(
        "-v",
        "--verbose",
        dest="verbosity",
        action="store_const",
        const=1,
        default=default if suppress else 0,
        help="also say where settings came from and which path a run took",
    )
    common.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default=default if suppress else "full",
        help="how to print diagnostics: full (with the source line), concise (one line), "
        "github (annotations for GitHub Actions)",
    )
    return common


def version_text() -> str:
    """``bcfg --version``: bcfg's version, Python's and the installed torch's (torch not imported)."""
    from . import __version__
    from .infra.cache import dist_version

    python = ".".join(map(str, sys.version_info[:3]))
    return f"bcfg {__version__} (Python {python}, torch {dist_version('torch') or 'not installed'})"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bcfg",
        description="Compile .bcfg specs into PyTorch BackendConfig modules.",
        epilog="exit codes: 0 success, 1 findings (generated/ or docs/ out of date, would reformat), "
        "2 errors (nothing was written), 3 internal error",
        parents=[_common(suppress=False)],
    )
    p.add_argument("--version", action="version", version=version_text())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        parser = sub.add_parser(command.name, help=command.help, parents=[_common(suppress=True)])
        command.arguments(parser)
        parser.set_defaults(command_spec=command)
    return p


def _generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "specs",
        nargs="*",
        type=Path,
        metavar="SPEC",
        help="spec files (default: every spec in [tool.bcfg] specs)",
    )
    _check_arguments(parser)


def _out_argument(
    parser: argparse.ArgumentParser,
    text: str = "output folder (default: [tool.bcfg] out, generated/)",
) -> None:
    parser.add_argument("--out", type=Path, metavar="DIR", help=text)


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    _out_argument(parser)
    parser.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings as errors (also: [tool.bcfg] strict = true)",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="show each out-of-date file's diff (default: its name and how many lines differ)",
    )


def _fmt_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "specs",
        nargs="*",
        metavar="SPEC",
        help="spec files or folders (default: [tool.bcfg] specs); - reads standard input "
        "and writes the result on standard output",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming the files that would change",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="write nothing; print what would change as a unified diff and exit 1 if anything would",
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="the name messages give the spec read from standard input (-)",
    )


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "targets",
        nargs="+",
        metavar="MODULE:FUNCTION",
        help="e.g. torch.ao.quantization.backend_config:get_native_backend_config",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="a .bcfg file, or a folder for one spec per backend and a shared file "
        "(default: standard output; several targets need a folder)",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="write without checking that the spec regenerates an equivalent config",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="the longest the import (the target's code included) may run (default 300)",
    )
    pt2e = parser.add_argument_group(
        "a PT2E quantizer (imported by probing; the spec, its hooks module and the proof "
        "report are written beside each other: -o NAME.bcfg)"
    )
    pt2e.add_argument(
        "--models",
        action="append",
        metavar="MODULE:FUNCTION",
        help="a function returning (model, example_inputs) pairs: probe and prove on them too",
    )
    pt2e.add_argument(
        "--probe",
        action="append",
        metavar="NAME",
        help="probe with this graph of the zoo only (repeat; default: all)",
    )
    pt2e.add_argument(
        "--export",
        choices=("both", "strict", "non-strict"),
        default="both",
        help="export the probes strict, non-strict or both (default both)",
    )
    pt2e.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="the proof report's format (default text)",
    )
    pt2e.add_argument(
        "--graph-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="the longest the quantizer may take on one graph (default 60)",
    )


def _docs_arguments(parser: argparse.ArgumentParser) -> None:
    _out_argument(parser, "write the docs here (default: [tool.bcfg] docs, docs/)")


def _explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("backend", metavar="BACKEND", help="a backend name, e.g. onednn")
    parser.add_argument(
        "pattern",
        nargs="*",
        metavar="PATTERN",
        help="a pattern as the spec writes it, quoted for the shell: 'nn.Conv2d', "
        "'(nn.Conv2d, nn.ReLU)', '\"relu_\"', or #N for the N-th config "
        "(default: list the backend's patterns)",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )


def _diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "base", nargs="?", metavar="BASE", help="the git revision to compare from (default: HEAD)"
    )
    parser.add_argument(
        "head",
        nargs="?",
        metavar="HEAD",
        help="the git revision to compare to (default: the working tree)",
    )
    parser.add_argument(
        "--configs",
        nargs=2,
        metavar="MODULE:FUNCTION",
        help="compare the BackendConfigs two functions return instead of two revisions of the specs",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json", "github"),
        default="text",
        help="text (default; coloured on a terminal), markdown (a pull-request comment), "
        "json, or github (workflow annotations)",
    )
    parser.add_argument(
        "--exit-code",
        action="store_true",
        help="exit 1 if anything changed, 0 if nothing did (2 on errors either way)",
    )
    parser.add_argument(  # bcfg diff --fail-on (tools/diff.py)
        "--fail-on",
        action="append",
        choices=("narrowing", "widening", "any"),
        metavar="{narrowing,widening,any}",
        help="exit 1 if a change of this severity is found (narrowing: user models may stop "
        "being quantized; any: as --exit-code), 0 otherwise; repeat for several",
    )


def _lsp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="talk over standard input and output (the default and only transport)",
    )
    parser.add_argument(
        "--preload-torch",
        action="store_true",
        help="import torch at start, so that a name bcfg's torch facts cannot answer is "
        "checked at once (a torch build bcfg ships no facts for, a module of yours)",
    )


def _compat_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("backend", metavar="BACKEND", help="a backend of the project's specs")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--qconfig-mapping",
        metavar="MODULE:FUNCTION",
        help="FX: a function returning the QConfigMapping to check (MODULE must be on the allow-list)",
    )
    what.add_argument(
        "--quantization-config",
        metavar="MODULE:FUNCTION",
        help="PT2E: a function returning the QuantizationConfig of the backend's quantizer "
        "(its global config), or taking the quantizer and configuring it; needs --model",
    )
    parser.add_argument(
        "--model",
        metavar="MODULE:FUNCTION",
        help="a function returning (model, example_inputs): judge each node of the traced "
        "(FX) or exported (PT2E) model",
    )
    parser.add_argument(
        "--qat",
        action="store_true",
        help="quantization-aware training (prepare_qat_fx, prepare_qat_pt2e)",
    )
    parser.add_argument(
        "--strict-export",
        action="store_true",
        help="PT2E: export with torch.export.export(..., strict=True) (default: non-strict)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="output format (default: a text table)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=COMPAT_TIMEOUT,
        metavar="SECONDS",
        help="the longest the check (the user's model and config code included) may run; "
        f"then it is stopped, and its process killed (default {COMPAT_TIMEOUT:g})",
    )


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    for side in ("a", "b"):
        parser.add_argument(
            side,
            metavar=side.upper(),
            help="a PT2E quantizer: MODULE:FUNCTION returning a ready torchao Quantizer, or a "
            "backend of the project's specs (its generated quantizer)",
        )
    parser.add_argument(
        "--models",
        action="append",
        metavar="MODULE:FUNCTION",
        help="a function returning (model, example_inputs), a list of such pairs or a dict of "
        "them by name: compare on these too (repeat for several)",
    )
    parser.add_argument(
        "--config",
        metavar="MODULE:FUNCTION",
        help="configure a backend's generated quantizer: a function returning its global "
        "QuantizationConfig, or taking the quantizer and configuring it",
    )
    parser.add_argument(
        "--no-probes", action="store_true", help="compare on --models (and --random) only"
    )
    parser.add_argument(
        "--probe",
        action="append",
        metavar="NAME",
        help="compare on this probe of the zoo only (repeat for several; default: all)",
    )
    parser.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="N",
        help="also compare on N random models composed of the zoo's ops (default 0)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random models")
    parser.add_argument(
        "--export",
        choices=("both", "strict", "non-strict"),
        default="both",
        help="export each graph strict, non-strict or both (default both: quantizers that "
        "read torch's source metadata annotate the two differently)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="output format (default text)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=COMPARE_TIMEOUT,
        metavar="SECONDS",
        help="the longest the whole comparison may run; then it is stopped "
        f"(default {COMPARE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--graph-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="the longest a quantizer may take on one graph; then the graph is reported and "
        "the run goes on (default 60)",
    )


COMPARE_TIMEOUT = 1800.0


# A check exports and prepares the user's model twice: minutes for a large one, never an hour.
COMPAT_TIMEOUT = 600.0


# Arguments are declared here, not in the command modules, so that --help and
# argument errors never import a command's dependencies.
COMMANDS: tuple[Command, ...] = (
    Command("generate", "generate", "write generated modules for the specs", _generate_arguments),
    Command(
        "check",
        "generate",
        "exit 1 naming the generated files that are stale (--diff: with their diffs); "
        "writes nothing",
        _check_arguments,
    ),
    Command(
        "fmt",
        "fmt",
        "format specs in the one canonical layout; --check exits 1 if any would change",
        _fmt_arguments,
        prefix="bcfg fmt",
    ),
    Command(
        "docs",
        "docs",
        "write the support matrix (Markdown and one HTML page) into the docs folder",
        _docs_arguments,
        prefix="bcfg docs",
    ),
    Command(
        "explain",
        "explain",
        "say where every value of a backend's pattern config comes from",
        _explain_arguments,
        prefix="bcfg explain",
    ),
    Command(
        "diff",
        "diff",
        "what changed in the BackendConfigs between two revisions of the specs, or two getters",
        _diff_arguments,
        prefix="bcfg diff",
    ),
    Command(
        "compat",
        "compat.command",
        "will a QConfigMapping (FX) or a quantization config (PT2E) be honoured by a backend, and why not; exit 1 if something is skipped",
        _compat_arguments,
        prefix="bcfg compat",
    ),
    Command(
        "compare",
        "compare.command",
        "compare two PT2E quantizers' annotations node by node on the probe zoo and your "
        "models; exit 1 if they differ",
        _compare_arguments,
        prefix="bcfg compare",
    ),
    Command(
        "import",
        "importer.command",
        "write a spec for the BackendConfig, or the PT2E quantizer (by probing it), a Python "
        "function returns",
        _import_arguments,
        prefix="bcfg import",
    ),
    Command(
        "lsp",
        "lsp.command",
        "run the language server (for editors: diagnostics, hover, definitions, formatting, completion)",
        _lsp_arguments,
        prefix="bcfg lsp",
    ),
)


def main(
    argv: list[str] | None = None,
    *,
    out: IO[str] | None = None,
    in_child: bool = False,
    colors: tuple[bool, bool] | None = None,
) -> int:
    """Run one command; return its exit code. The one place an exception becomes a message.

    ``in_child``: this process is the child a command that runs the user's code started
    (``run_in_child``), which runs it here and writes its results on ``out``.

    Standard output may be closed, full or gone: a result that cannot be written is one line
    on standard error and exit 2 (a reader that went away, ``bcfg check | head``, exit 1 and
    nothing said). Standard error that cannot be written is given up silently.
    """
    stdout = Guarded(sys.stdout if out is None else out, "standard output")
    stderr = Guarded(sys.stderr, "standard error", quiet=True)
    try:
        try:
            code = _main(argv, stdout, stderr, in_child, colors)
        except SystemExit:  # --help, --version, a usage error: argparse printed and exits
            stdout.flush()
            raise
        stdout.flush()
        return code
    except StreamError as exc:
        print(f"bcfg: {exc}", file=stderr)
        _drop_stdout()
        return ExitCode.ERROR
    except BrokenPipeError:  # `bcfg check | head`: the reader is gone; nothing left to say
        _drop_stdout()
        return ExitCode.FINDINGS


def _drop_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that the interpreter's last flush of what is
    left in ``sys.stdout`` cannot fail again as it exits."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)


def _main(
    argv: list[str] | None,
    stdout: Guarded,
    stderr: Guarded,
    in_child: bool,
    colors: tuple[bool, bool] | None,
) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    saved = sys.stdout
    sys.stdout = cast(IO[str], stdout)  # what argparse prints (--help, --version)
    try:
        args = _parser().parse_args(argv)
    finally:
        sys.stdout = saved
    args.argv, args.in_child = argv, in_child
    command: Command = args.command_spec
    # Results (specs, diffs) are UTF-8 text whatever the locale: the bytes of a
    # spec printed by `bcfg fmt -` are the bytes `bcfg fmt` would write.
    with contextlib.suppress(AttributeError, ValueError):
        if sys.stdout.encoding.replace("-", "").lower() != "utf8":
            sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    out, err = cast(IO[str], stdout), cast(IO[str], stderr)  # Guarded: what Report uses of IO
    report = Report(command.prefix, out, err, args.verbosity, args.output_format, colors)
    try:
        import warnings

        # torch warns on import when NumPy is absent; bcfg never needs NumPy.
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
        return int(command.load().run(args, report))
    except SpecError as exc:
        report.diagnostics(exc.diagnostics, exc.sources)
        n = sum(d.severity == Severity.ERROR for d in exc.diagnostics)
        print(f"bcfg: {n} error{'s' if n != 1 else ''}; nothing was written", file=stderr)
        return ExitCode.ERROR
    except (UsageError, ConfigError, OutputError, GitError) as exc:
        report.message(str(exc))
        return ExitCode.ERROR
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except (StreamError, BrokenPipeError):
        raise
    except Exception as exc:  # the one place a bug becomes a message, not a traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        detail = printable(" ".join(str(exc).split())[:200])
        print(
            f"bcfg: internal error: {type(exc).__name__}: {detail} ({Path(where.filename).name}:{where.lineno}); {REPORT}",
            file=stderr,
        )
        return ExitCode.INTERNAL


class StreamError(Exception):
    """A standard stream cannot be used (closed, full, failing): what and why, in one line."""


class Guarded:
    """A standard stream whose failures are one line (``StreamError``), never a traceback.

    ``stream`` is None where the stream is closed (Python starts with ``sys.stdout`` None when
    file descriptor 1 is not open). ``quiet``: failures are ignored (standard error: there is
    nowhere to say them). A reader gone away is still ``BrokenPipeError``.
    """

    def __init__(self, stream: IO[str] | None, name: str, quiet: bool = False):
        self.stream = stream
        self.name = name
        self.quiet = quiet

    def write(self, text: str) -> int:
        try:
            if self.stream is None and text:
                raise StreamError(f"cannot write to {self.name}: it is closed")
            return self.stream.write(text) if self.stream is not None else 0
        except BrokenPipeError:
            if self.quiet:
                return 0
            raise
        except (OSError, ValueError, StreamError) as exc:
            self._fail(exc)
            return 0

    def flush(self) -> None:
        try:
            if self.stream is not None and not self.stream.closed:  # closing flushed it
                self.stream.flush()
        except BrokenPipeError:
            if not self.quiet:
                raise
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        if self.quiet:
            return
        if isinstance(exc, StreamError):
            raise exc
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "it is closed"
        raise StreamError(f"cannot write to {self.name}: {why}") from None

    def isatty(self) -> bool:
        try:
            return self.stream is not None and bool(self.stream.isatty())
        except (AttributeError, OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self.stream is None:
            raise OSError(9, "closed")
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"


def run_in_child(args: argparse.Namespace, report: Report, what: str) -> int:
    """Run this command again in a child process, which runs the user's code, and print what it
    printed: nothing the user's code does (writing to file descriptor 1, exiting, crashing the
    interpreter, raising a ``BaseException`` of its own, hanging past ``--timeout``) reaches
    standard output or ends bcfg (``infra.isolate``), and the child does not outlive bcfg.

    The child's messages come on standard error as it writes them; its results come back as
    data and are printed here, so standard output holds nothing else.
    """
    from .infra.isolate import IsolationError, run_isolated

    request = {"argv": args.argv, "colors": [report.result_color, report.color]}
    timeout = getattr(args, "timeout", None)
    try:
        result = run_isolated("generator.cli:child", request, timeout, report.err, what)
    except IsolationError as exc:
        raise UsageError(str(exc)) from None
    if "failure" in result:
        raise UsageError(f"{what}: {result['failure']}")
    if "internal" in result:
        raise RuntimeError(result["internal"])
    report.result(result["out"])
    return int(result["code"])


_CHANNEL: Any = None  # in the child of ``run_in_child``: where ``progress`` writes


def progress(text: str) -> None:
    """Say what the child of ``run_in_child`` is doing (a timeout's message names it)."""
    if _CHANNEL is not None:
        _CHANNEL.phase(text)


def child(request: dict[str, Any], channel: Any) -> dict[str, Any]:
    """The child of ``run_in_child``: the command, its results kept to send back."""
    import io

    global _CHANNEL
    _CHANNEL = channel
    out = io.StringIO()
    colors = request["colors"]
    code = main(request["argv"], out=out, in_child=True, colors=(colors[0], colors[1]))
    return {"out": out.getvalue(), "code": code}
