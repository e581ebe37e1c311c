"""MkDocs hooks for bcfg's site (mkdocs.yml names this file; it is not a page).

What the hooks do, each so that a page cannot drift from what it documents:

- **The support matrix.** ``bcfg generate`` writes ``docs/README.md``,
  ``docs/index.html`` and ``docs/backends/*.md`` (``[tool.bcfg] docs``) and
  ``bcfg check`` owns them. mkdocs.yml excludes them from the pages found on
  disk (``README.md`` and ``index.html`` would both become the site's home);
  ``on_files`` mounts the same files under ``matrix/``: the overview at
  ``matrix/``, one page per backend, and the interactive page as
  ``matrix/explorer.html``. ``on_config`` lists the backends in the navigation,
  the examples (``[tool.bcfg] examples``) apart from them, under "Examples".
- **Markers** in a page's Markdown, each an HTML comment on a line of its own
  (invisible where the Markdown is read as it is):

  - ``<!-- bcfg:command NAME -->``: the synopsis and arguments of ``bcfg NAME``,
    read from ``generator.cli.COMMANDS``; a command without its marker fails
    the build, and so does a marker without a command.
  - ``<!-- bcfg:global-options -->``: the options every command takes.
  - ``<!-- bcfg:error NAME -->``: the error-corpus case ``tests/errors/NAME``:
    the spec and exactly what ``bcfg generate`` prints for it (the pinned
    ``.expected`` file). ``tests/docs/`` checks every case is shown once.
  - ``<!-- bcfg:key-table pattern -->`` (``quantizer``): the reference table of the
    pt2e keys (the quantizer fields), rendered from bcfg's table of PT2E keys.
  - ``<!-- bcfg:scale TARGET -->``: what ``benchmarks/pt2e_scale.py --docs`` measured
    for a shipped PT2E target (``benchmarks/scale/figures.json``): its generated
    quantizer and the hand-written class it replaces on the largest graph of each
    model. The target's page in the support matrix gets the same, as a section.
  - ``<!-- bcfg:include FILE -->``: a Markdown file of the repository
    (ARCHITECTURE.md), without its title, its links to the README pointed at
    the site's home. ``<!-- bcfg:include FILE#SECTION -->``: the part of it
    between ``<!-- bcfg:section SECTION -->`` and ``<!-- bcfg:end SECTION -->``
    (the README's list of what the shipped specs prove, on the home page).

  - ``<!-- bcfg:compass targets -->`` (the home page only): the shipped PT2E targets of
    ``tests/targets.py``, how each is proven and its spec size against the class it
    reproduces (``tests/reference/size.py``), then the boundary (``BOUNDARY``).

  A marker that names a file outside the repository (an absolute path, ``..``,
  a symlink that leads out; for ``error``, outside tests/errors) fails the
  build: the published site shows only the repository's files.

  - ``<!-- bcfg:session NAME -->``: a shell session whose figures count the specs and the
    support matrix's files (``SESSIONS``: ``bcfg fmt``'s, ``bcfg docs``'), so that a new
    target changes no page by hand.

  ``error``, ``key-table``, ``compass`` and ``session`` markers are also filled in the files (``fill``:
  ``python docs/hooks.py --fill``), their content up to ``<!-- bcfg:end KIND
  NAME -->``, so that the raw Markdown (GitHub, the repository) shows it too;
  the build drops what a file holds there and renders it afresh, and
  ``tests/docs/test_hooks.py`` fails while a file's copy differs.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from generator import cli
from generator.config import find_project
from generator.infra.write import DOCS

REPO = Path(__file__).resolve().parent.parent
ERRORS = REPO / "tests" / "errors"
COMMANDS_PAGE = "reference/commands.md"  # documents every command
MATRIX = "matrix"  # where the generated support matrix shows in the site
EXPLORER = "explorer.html"  # the generated index.html, renamed: matrix/ is the overview page

SCALE = REPO / "benchmarks" / "scale" / "figures.json"  # benchmarks/pt2e_scale.py --docs
MARKER = re.compile(r"^<!-- bcfg:([a-z-]+)(?: (\S+))? -->$", re.M)

# --------------------------------------------------------------------------- the matrix


def _generated(docs_dir: Path) -> list[Path]:
    """The support-matrix files bcfg wrote into the docs folder (their first line is its mark)."""
    return DOCS.files(docs_dir)


def _mounted(rel: str) -> str:
    """Where a generated docs file shows in the site."""
    return f"{MATRIX}/{EXPLORER}" if rel == "index.html" else f"{MATRIX}/{rel}"


def _nav_title(page: Path) -> str:
    """A backend page's title in the navigation: its name, marked if it is PT2E only."""
    head = page.read_text(encoding="utf-8").split("\n", 4)[:4]
    return f"{page.stem} (PT2E only)" if any("(PT2E only:" in line for line in head) else page.stem


def on_config(config: Any) -> Any:
    """List the backends' pages under "Support matrix" in the navigation, as the specs have
    them; the examples (``[tool.bcfg] examples``: toys, not real targets) in a section of their
    own after them, as the matrix shows them apart."""
    docs_dir = Path(config.docs_dir)
    examples = set(find_project(REPO).examples)
    pages: dict[bool, list[dict[str, str]]] = {False: [], True: []}
    for p in _generated(docs_dir):
        if p.parent.name == "backends":
            # titled as the backend is named; a PT2E-only target's page says so in its first lines
            entry = {_nav_title(p): _mounted(p.relative_to(docs_dir).as_posix())}
            pages[p.stem in examples].append(entry)
    for section in config.nav or []:
        if isinstance(section, dict) and "Support matrix" in section:
            section["Support matrix"].append({"Backends": pages[False]})
            if pages[True]:
                section["Support matrix"].append({"Examples": pages[True]})
            return config
    raise PluginError("mkdocs.yml: the nav has no 'Support matrix' section for the backends")


def on_files(files: Files, config: Any) -> Files:
    """Mount the generated support matrix under matrix/ (mkdocs.yml excludes where it lies)."""
    docs_dir = Path(config.docs_dir)
    generated = _generated(docs_dir)
    if not any(p.name == "README.md" for p in generated):
        raise PluginError(
            f"no support matrix in {docs_dir}: run `bcfg generate` (it writes docs/README.md)"
        )
    for path in generated:
        rel = path.relative_to(docs_dir).as_posix()
        old = files.get_file_from_path(rel)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, _mounted(rel), abs_src_path=str(path)))
    return files


# --------------------------------------------------------------------------- commands


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise PluginError("bcfg's parser has no commands")


COMMON = {"help", "verbosity", "output_format"}  # every command's: documented once


def _metavar(action: argparse.Action) -> str:
    if action.choices is not None and action.metavar is None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.metavar or action.dest.upper()


def _usage(action: argparse.Action) -> str:
    """How an argument is written: ``SPEC ...``, ``--out DIR``, ``--configs A B``."""
    name = _metavar(action)
    nargs = action.nargs
    if not action.option_strings:
        if nargs == "*":
            return f"[{name} ...]"
        if nargs == "+":
            return f"{name} [...]"
        if nargs == "?":
            return f"[{name}]"
        return name
    flag = max(action.option_strings, key=len)
    if nargs == 0:
        return flag
    if isinstance(nargs, int):
        return f"{flag} {' '.join([name] * nargs)}"
    return f"{flag} {name}"


def _cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|")


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.dest not in COMMON]


def _wrapped(head: list[str], rest: list[str], width: int = 76) -> list[str]:
    """A synopsis in lines of at most ``width`` columns, continued under the first argument."""
    lines = [" ".join(head)]
    indent = " " * (len(" ".join(head[:2])) + 1)
    for part in rest:
        if len(lines[-1]) + 1 + len(part) > width and lines[-1].strip():
            lines.append(indent + part)
        else:
            lines[-1] += " " + part
    return lines


def command_markdown(name: str) -> str:
    """The synopsis and the table of arguments of ``bcfg NAME``, from its parser."""
    commands = {c.name: c for c in cli.COMMANDS}
    if name not in commands:
        raise PluginError(f"<!-- bcfg:command {name} -->: bcfg has no command {name!r}")
    parser = _subparsers(cli._parser())[name]
    actions = _arguments(parser)
    positional = [_usage(a) for a in actions if not a.option_strings]
    optional = [_usage(a) if a.required else f"[{_usage(a)}]" for a in actions if a.option_strings]
    lines = [commands[name].help[:1].upper() + commands[name].help[1:] + ".", ""]
    lines += ["```text", *_wrapped(["bcfg", name, *positional], optional), "```", ""]
    if actions:
        lines += ["| argument | meaning |", "| --- | --- |"]
        for a in actions:
            if a.option_strings:
                written = ", ".join(f"`{s}`" for s in a.option_strings)
                if a.nargs != 0:
                    count = a.nargs if isinstance(a.nargs, int) else 1
                    written += f" `{' '.join([_metavar(a)] * count)}`"
            else:
                written = f"`{_metavar(a)}{' ...' if a.nargs in ('*', '+') else ''}`"
            meaning = _cell(a.help or "")
            if a.required and a.option_strings:
                meaning += " (required)"
            lines.append(f"| {written} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def global_options_markdown() -> str:
    """The options every command takes, before or after its name, and ``--version``."""
    common = [a for a in cli._parser()._actions if a.dest in COMMON - {"help"}]
    lines = ["| option | meaning |", "| --- | --- |"]
    for a in common:
        written = ", ".join(f"`{s}`" for s in a.option_strings)
        if a.nargs != 0:
            written += f" `{_metavar(a)}`"
        lines.append(f"| {written} | {_cell(a.help or '')} |")
    lines.append(f"| `--version` | `{_cell(cli.version_text())}` (on this build of the site) |")
    lines.append("| `-h`, `--help` | a command's arguments, as on this page |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the error corpus


def _inside(root: Path, path: Path, marker: str) -> Path:
    """``path``, refused (a build error) unless it is inside ``root`` once symlinks are
    resolved: a page shows files of the repository, never others of the building machine."""
    if not path.resolve().is_relative_to(root.resolve()):
        where = root.relative_to(REPO).as_posix() if root != REPO else "the repository"
        raise PluginError(
            f"{marker}: {path} is outside {where}: a page may show only the repository's files"
        )
    return path


CASE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # a case of tests/errors, not a path


def _case_files(name: str) -> list[Path]:
    marker = f"<!-- bcfg:error {name} -->"
    if not CASE_NAME.fullmatch(name) or ".." in name:
        raise PluginError(f"{marker}: {name!r} is not the name of a case of tests/errors")
    folder = ERRORS / name
    if folder.is_dir():
        main = folder / "main.bcfg"
        files = [main, *sorted(p for p in folder.glob("*.bcfg") if p != main)]
    else:
        spec = ERRORS / f"{name}.bcfg"
        files = [spec] if spec.is_file() else []
    return [_inside(ERRORS, p, marker) for p in files]


def _shown(data: bytes) -> str:
    """A case's bytes as text a page can show: bytes that are not UTF-8 and NUL as escapes."""
    text = data.decode("utf-8", "backslashreplace").removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\0", "\\x00")


def error_markdown(name: str) -> str:
    """A collapsed block: the broken spec (with line numbers) and what bcfg prints for it."""
    files = _case_files(name)
    expected = _inside(ERRORS, ERRORS / f"{name}.expected", f"<!-- bcfg:error {name} -->")
    if not files or not expected.is_file():
        raise PluginError(
            f"<!-- bcfg:error {name} -->: no case tests/errors/{name} with its .expected"
        )
    main = _shown(files[0].read_bytes())
    first = main.splitlines()[0] if main.strip() else ""
    # "# check: topic - what it shows": the section a case is shown in names the topic.
    title = first.removeprefix("# check:").strip() if first.startswith("# check:") else name
    title = title.split(" - ", 1)[-1].replace('"', "'")
    title = title[:1].upper() + title[1:]
    out = [f'<a id="error-{name}"></a>', "", f'??? failure "{title}"', ""]
    for path in files:
        text = _shown(path.read_bytes())
        label = path.relative_to(REPO).as_posix()
        if not text.strip():
            out += [f"    `{label}` is empty.", ""]
            continue
        out += [f'    ```bcfg title="{label}" linenums="1"']
        out += [f"    {line}".rstrip() for line in text.rstrip("\n").split("\n")]
        out += ["    ```", ""]
    out += ['    ```text title="bcfg generate"']
    out += [
        f"    {line}".rstrip()
        for line in expected.read_text(encoding="utf-8").rstrip("\n").split("\n")
    ]
    out += ["    ```", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- includes

INCLUDE_LINKS = {"README.md": "index.md"}  # a repository file's links, as the site has them


def _section(name: str, text: str, section: str) -> str:
    """The part of ``text`` between ``<!-- bcfg:section NAME -->`` and ``<!-- bcfg:end NAME -->``."""
    m = re.search(
        rf"^<!-- bcfg:section {re.escape(section)} -->\n(.*?)^<!-- bcfg:end {re.escape(section)} -->$",
        text,
        re.M | re.S,
    )
    if m is None:
        raise PluginError(
            f"<!-- bcfg:include {name}#{section} -->: {name} has no "
            f"<!-- bcfg:section {section} --> ... <!-- bcfg:end {section} -->"
        )
    return m.group(1).strip("\n") + "\n"


def include_markdown(name: str, page_uri: str) -> str:
    """A Markdown file of the repository without its title (or, for ``FILE#SECTION``, the
    part of it between ``<!-- bcfg:section SECTION -->`` and ``<!-- bcfg:end SECTION -->``).
    Its links to files the site has are pointed at their pages (``docs/PAGE`` at ``PAGE``), a
    link to another file or folder of the repository shows as its text, and a link to
    anything else fails the build. A name outside the repository fails the build too."""
    marker = f"<!-- bcfg:include {name} -->"
    name, _, section = name.partition("#")
    if Path(name).is_absolute() or ".." in Path(name).parts:
        raise PluginError(f"{marker}: {name} is outside the repository: name a file in it")
    path = _inside(REPO, REPO / name, marker)
    if not path.is_file() or path.suffix != ".md":
        raise PluginError(
            f"<!-- bcfg:include {name} -->: no Markdown file {name} in the repository"
        )
    text = path.read_text(encoding="utf-8")
    text = _section(name, text, section) if section else re.sub(r"\A# [^\n]*\n+", "", text)
    up = "../" * page_uri.count("/")

    def link(m: re.Match[str]) -> str:
        shown, (target, _, anchor) = m.group(1), m.group(2).partition("#")
        if not target or re.match(r"[a-z]+:", target):
            return m.group(0)
        anchor = "#" + anchor if anchor else ""
        if target in INCLUDE_LINKS:
            return f"[{shown}]({up}{INCLUDE_LINKS[target]}{anchor})"
        if target.startswith("docs/") and (REPO / target).is_file():
            return f"[{shown}]({up}{target.removeprefix('docs/')}{anchor})"
        if (REPO / target).exists():
            return shown  # a spec, a generated module, a folder: the site has no page for it
        raise PluginError(
            f"{name} links to {target!r}, which the site does not have: "
            "add it to INCLUDE_LINKS in docs/hooks.py or write it as code"
        )

    return re.sub(r"\[([^\]]*)\]\(([^)\s]*)\)", link, text)


# --------------------------------------------------------------------------- figures at scale


def _over(data: dict[str, Any], what: str) -> str:
    limit = f"{data['limit']:g} s"
    return f"> {limit} (stopped)" if what == "over" else f"> {limit} (over it on a smaller graph)"


def scale_figures(data: dict[str, Any], target: str) -> list[tuple[str, int, str, str, str]]:
    """(model, nodes, generated, hand-written, ratio) on the largest graph of each model."""
    times = {
        (t["family"], t["nodes"], t["variant"]): statistics.median(t["seconds"])
        for t in data["times"]
        if t["target"] == target
    }
    over = {
        (o["family"], o["nodes"], o["variant"]): o["what"]
        for o in data["over"]
        if o["target"] == target
    }
    largest: dict[str, int] = {}  # of the graphs the target was timed on (runs may differ)
    for family, nodes, variant in times:
        if variant == "gen":
            largest[family] = max(largest.get(family, 0), nodes)
    rows = []
    for family, nodes in largest.items():
        gen, ref = times.get((family, nodes, "gen")), times.get((family, nodes, "ref"))
        if gen is None:
            continue
        if ref is not None:
            rows.append((family, nodes, f"{gen:.2f} s", f"{ref:.2f} s", f"{gen / ref:.2f}x"))
        elif (family, nodes, "ref") in over:
            what = over[(family, nodes, "ref")]
            rows.append(
                (
                    family,
                    nodes,
                    f"{gen:.2f} s",
                    _over(data, what),
                    f"< {math.ceil(gen / data['limit'] * 100) / 100:.2f}x",
                )
            )
    return rows


def scale_markdown(target: str, page_uri: str, figures: Path = SCALE) -> str:
    """A sentence and a table: the target's generated quantizer against the hand-written class
    it replaces, on the largest graph of each model the benchmark exported."""
    marker = f"<!-- bcfg:scale {target} -->"
    if not figures.is_file():
        raise PluginError(
            f"{marker}: no {figures.name}: run `python benchmarks/pt2e_scale.py --docs`"
        )
    data = json.loads(figures.read_text(encoding="utf-8"))
    if target not in data["targets"]:
        raise PluginError(f"{marker}: {figures.name} has no figures for {target!r}")
    names = data["targets"][target]
    rows = scale_figures(data, target)
    if not rows:
        raise PluginError(f"{marker}: {figures.name} has no timed graph for {target!r}")
    gen, ref = f"`{names['generated']}`", f"`{names['reference'].replace(':', '.')}`"
    lead = next((r for r in rows if r[0] == "transformer"), rows[0])
    model = data["families"].get(lead[0], lead[0]).split(":")[0]  # "conv net: conv, ..."
    if names.get("strict"):  # annotated on a strict export of each model, as its flow's
        model += " (a strict export, as its flow exports)"
    took = lead[3] if lead[3].startswith(">") else f"{lead[3]}"
    link = "../" * page_uri.count("/") + "contributing/benchmarks.md#pt2e-quantizers-at-scale"
    out = [
        f"The generated {gen} annotates a {lead[1]:,}-node {model} in {lead[2]}; "
        f"the hand-written class it replaces, {ref}, takes {took}. On the largest graph of each "
        f"model (medians, one process, shared cores; `benchmarks/pt2e_scale.py`, all figures on "
        f"the [Benchmarks]({link}) page):",
        "",
        "| model | nodes | generated annotate | hand-written annotate | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for family, nodes, g, r, x in rows:
        what = data["families"].get(family, family)
        out.append(f"| {_cell(what)} | {nodes:,} | {g} | {r} | {x} |")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- the compass

# Quantizers probed and documented as beyond a spec (not in the target registry): the
# compass lists them after the targets. (name, what it is, its page, its code lines)
BOUNDARY = (
    (
        "OpenVINOQuantizer",
        "ExecuTorch's OpenVINO quantizer (NNCF's algorithm)",
        "guides/pt2e/openvino.md",
        687,
    ),
)


def _whose(reference: str) -> str:
    module, _, cls = reference.partition(":")
    owner = {"torchao": "torchao", "executorch": "ExecuTorch"}.get(module.split(".")[0], module)
    return f"{owner}'s `{cls}`"


def compass_markdown() -> str:
    """The shipped PT2E targets (tests/targets.py's registry): each generated class, the class
    it reproduces, how it is proven, and its spec and hooks against that class's code lines
    (tests/reference/size.py: counted afresh, the reference's from its sizes.json); then the
    quantizers documented as the boundary of the approach (``BOUNDARY``)."""
    import sys

    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.reference.size import SIZES, target_lines
    from tests.targets import TARGETS

    theirs = json.loads(SIZES.read_text(encoding="utf-8"))
    out = [
        "| target | reproduces | how it is proven | spec + hooks | reference | share |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for t in TARGETS:
        zoo = len(list((REPO / "tests" / "recordings" / t.name).glob("*.pt2")))
        proof = f"zoo of {zoo} models, node by node, every PR"
        if t.proof:
            proof += f"; {t.proof}"
        ours = target_lines(t.name)
        ref = theirs.get(t.name)
        link = f"[`{t.generated}`](guides/pt2e/{t.docs})" if t.docs else f"`{t.generated}`"
        share = f"{ours / ref:.1%}" if ref else "-"
        out.append(
            f"| {link} | {_whose(t.reference)} | {_cell(proof)} | {ours:,} "
            f"| {f'{ref:,}' if ref else '-'} | {share} |"
        )
    for name, what, page, lines in BOUNDARY:
        out.append(
            f"| [`{name}`]({page}) | {what} | boundary, not reproduced: probed, and every "
            f"graph it annotates differs from the spec probing finds | - | {lines:,} | - |"
        )
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- sessions

# Shell sessions whose figures count the repository's specs and the support matrix's pages:
# ``<!-- bcfg:session NAME -->`` renders the console block, its counts from ``figures()``,
# so that a new target (a spec, its page) changes no page by hand. tests/docs/test_pages.py
# replays each as the page shows it.
SESSIONS = {
    "fmt": (
        "$ bcfg fmt --check specs/",
        "would reformat specs/my_backend.bcfg",
        "bcfg fmt --check: 1 of {specs} file(s) would be reformatted; run `bcfg fmt`",
        "$ bcfg fmt",
        "reformatted specs/my_backend.bcfg",
        "bcfg fmt: 1 file(s) reformatted, {specs_but_one} unchanged",
    ),
    "docs": (
        "$ bcfg docs",
        "wrote docs/README.md",
        "...",
        "bcfg docs: {backends} backend(s), {pt2e_only} PT2E-only target(s), {files} file(s) in "
        "docs/, {files} written, 0 removed",
    ),
}
FX_FALSE = re.compile(r"^\s*fx: false\b", re.M)  # a PT2E-only target's quantizer says it


def figures() -> dict[str, int]:
    """The repository's counts the sessions show: its specs (``specs/*.bcfg``), the
    PT2E-only targets among them (``fx: false``), and the support matrix's files in docs/
    (README.md, index.html, a page a backend or target), the FX backends the rest."""
    specs = sorted((REPO / "specs").rglob("*.bcfg"))
    pt2e_only = sum(bool(FX_FALSE.search(p.read_text(encoding="utf-8"))) for p in specs)
    files = len(_generated(REPO / "docs"))
    return {
        "specs": len(specs),
        "specs_but_one": len(specs) - 1,
        "pt2e_only": pt2e_only,
        "files": files,
        "backends": files - 2 - pt2e_only,
    }


def session_markdown(name: str) -> str:
    if name not in SESSIONS:
        raise PluginError(f"<!-- bcfg:session {name} -->: no session {name!r} in docs/hooks.py")
    lines = "\n".join(SESSIONS[name]).format(**figures())
    return f"```console\n{lines}\n```\n"


# --------------------------------------------------------------------------- filled markers

FILLED_KINDS = ("error", "key-table", "compass", "session")  # markers whose content the files hold
FILLED = re.compile(
    r"^(<!-- bcfg:(error|key-table|compass|session) (\S+) -->)\n.*?^<!-- bcfg:end \2 \3 -->$\n?",
    re.M | re.S,
)


def bare(markdown: str) -> str:
    """``markdown`` with each filled marker's content and end marker dropped: the markers alone."""
    return FILLED.sub(lambda m: m.group(1) + "\n", markdown)


def _rendered(kind: str, arg: str) -> str:
    if kind == "error":
        return error_markdown(arg)
    if kind == "compass":
        return compass_markdown()
    if kind == "session":
        return session_markdown(arg)
    from generator.emit.docs import pt2e_key_markdown

    return pt2e_key_markdown(arg)


def filled(markdown: str) -> str:
    """``markdown`` with the content of each ``error`` and ``key-table`` marker written after
    it, up to ``<!-- bcfg:end KIND NAME -->`` (what the build renders there)."""

    def fill(m: re.Match[str]) -> str:
        kind, arg = m.group(1), m.group(2)
        if kind not in FILLED_KINDS or not arg:
            return m.group(0)
        content = _rendered(kind, arg).rstrip("\n")
        return f"{m.group(0)}\n{content}\n\n<!-- bcfg:end {kind} {arg} -->"

    return MARKER.sub(fill, bare(markdown))


def pages() -> list[Path]:
    """The hand-written pages of the site (not the generated support matrix)."""
    generated = set(_generated(REPO / "docs"))
    return sorted(p for p in (REPO / "docs").rglob("*.md") if p not in generated)


# --------------------------------------------------------------------------- pages

# Pages whose tables are wider than the content column beside both sidebars at 1,280
# pixels (the backends' table, the PT2E key table): shown without the table of contents.
WIDE = (f"{MATRIX}/README.md", "reference/pt2e.md")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    uri = page.file.src_uri
    markdown = bare(markdown)  # filled markers are rendered afresh
    if uri in WIDE:  # their tables get the table of contents' width at 1,280 pixels
        page.meta["hide"] = [*page.meta.get("hide", []), "toc"]
    if page.file.generated_by is not None and uri.startswith(f"{MATRIX}/"):
        # A generated page starts with bcfg's mark, a comment, so MkDocs would not find its title.
        title = re.search(r"^# (.+)$", markdown, re.M)
        if title:
            page.meta["title"] = title.group(1)
    if uri == f"{MATRIX}/README.md":
        # The generated overview links its interactive page as index.html, beside it on disk.
        if "](index.html)" not in markdown:
            raise PluginError("docs/README.md no longer links index.html: update docs/hooks.py")
        markdown = markdown.replace("](index.html)", f"]({EXPLORER})")
    backend = re.fullmatch(rf"{MATRIX}/backends/(\w+)\.md", uri)
    if backend and SCALE.is_file() and backend.group(1) in json.loads(SCALE.read_text())["targets"]:
        markdown += f"\n## At scale\n\n{scale_markdown(backend.group(1), uri)}"

    def expand(m: re.Match[str]) -> str:
        kind, arg = m.group(1), m.group(2)
        if kind == "command" and arg:
            return command_markdown(arg)
        if kind == "global-options" and not arg:
            return global_options_markdown()
        if kind == "error" and arg:
            return error_markdown(arg)
        if kind == "include" and arg:
            return include_markdown(arg, uri)
        if kind == "scale" and arg:
            return scale_markdown(arg, uri)
        if kind == "compass" and arg == "targets" and uri == "index.md":
            return compass_markdown()
        if kind == "session" and arg:
            return session_markdown(arg)
        if kind == "key-table" and arg in ("pattern", "quantizer"):
            from generator.emit.docs import pt2e_key_markdown

            return pt2e_key_markdown(arg)
        raise PluginError(f"{uri}: unknown marker {m.group(0)!r}")

    if uri == COMMANDS_PAGE:
        shown = {m.group(2) for m in MARKER.finditer(markdown) if m.group(1) == "command"}
        missing = [c.name for c in cli.COMMANDS if c.name not in shown]
        if missing:
            raise PluginError(
                f"{uri}: no <!-- bcfg:command NAME --> for {', '.join(missing)}: document every command"
            )
    return MARKER.sub(expand, markdown)


if __name__ == "__main__":  # python docs/hooks.py --fill [--check]
    import sys

    check = "--check" in sys.argv[1:]
    stale = []
    for path in pages():
        text = path.read_text(encoding="utf-8")
        new = filled(text)
        if new != text:
            stale.append(path.relative_to(REPO).as_posix())
            if not check:
                path.write_text(new, encoding="utf-8")
    verb = "out of date" if check else "filled"
    for name in stale:
        print(f"{name}: {verb}")
    sys.exit(1 if check and stale else 0)
