"""The parser builds the syntax model as it reduces, and keeps no state between parses."""

from __future__ import annotations

from tests.support import REPO


def test_parser_builds_the_model_lark_trees_describe():
    """``parse`` builds model nodes as it reduces; Lark's own trees must agree, spans included.

    The reference parses with Lark's tree builder (its own position tracking,
    child filtering and inlining) and converts each tree node with the same
    builders, so the reduction callbacks' filtering, splicing and span logic
    is checked against Lark's.
    """
    from lark import Lark, Transformer, v_args

    from generator.lang import parse
    from generator.lang import syntax as m
    from generator.resources import resource_path

    plain = Lark(
        resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8"),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
    )

    @v_args(meta=True)
    class Reference(Transformer):
        def __init__(self, file: str):
            super().__init__()
            self.file = file

        def __default__(self, data, children, meta):
            span = (
                m.Span(self.file, 1, 1, 1, 1)
                if meta.empty
                else m.Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)
            )
            return parse._BUILDERS[data](span, *children)

    texts = [
        (p.name, p.read_text(encoding="utf-8")) for p in sorted((REPO / "specs").glob("*.bcfg"))
    ]
    texts.append(("edge.bcfg", "fuse f((a, (b, c)), _) eval_only = X(a, Y(b))\n"))
    for name, text in texts:
        actual = parse.parse_text(text, name).decls
        token = parse._current.set(parse._State(name))  # the file the builders name in spans
        try:
            expected = Reference(name).transform(plain.parse(text))
        finally:
            parse._current.reset(token)
        assert list(actual) == list(expected), name
