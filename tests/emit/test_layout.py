"""Layout: render lays statements out exactly as black would, without running black."""

from __future__ import annotations

import random
import string

from generator.emit import backend_config as render
from generator.emit import layout, pysource


def test_layout_is_black_on_every_backend(resolved):
    for name, backend in resolved.items():
        fast = render.render_backend(backend, fast=True)
        assert fast == render.render_backend(backend, fast=False), name
        body = fast.split("\n", 2)[2]
        assert pysource.black_format(body) == body, name


def _fragment(rnd: random.Random) -> tuple[str, str]:
    """A random statement or list element of the shapes render emits, at random lengths."""

    def ident(lo: int, hi: int) -> str:
        return rnd.choice(string.ascii_letters) + "".join(
            rnd.choices(string.ascii_letters + "_0123456789", k=rnd.randint(lo, hi) - 1)
        )

    def name() -> str:
        return ".".join("n" + ident(1, 14) for _ in range(rnd.choice([1, 2, 3, 5])))

    def expr(depth: int = 0) -> str:
        r = rnd.random()
        if depth > 2 or r < 0.45:
            return rnd.choice(
                [
                    name(),
                    name(),
                    f'"{ident(1, 25)}"',
                    str(rnd.randint(0, 10**6)),
                    "-7",
                    "0.0078125",
                    "1e-05",
                    "True",
                ]
            )
        args = ", ".join(
            (f"k{ident(1, 12)}=" if rnd.random() < 0.3 else "") + expr(depth + 1)
            for _ in range(rnd.randint(1, 3))
        )
        if r < 0.7:
            return f"{name()}({args})"
        open_, close = rnd.choice(["()", "[]"])
        items = ", ".join(expr(depth + 1) for _ in range(rnd.randint(2, 4)))
        return rnd.choice(
            [f"{open_}{items}{close}", "{" + f'"{ident(1, 8)}": {expr(depth + 1)}' + "}"]
        )

    chain = (
        "B"
        + ident(3, 20)
        + f"({expr(1)})"
        + "".join(f".m{ident(3, 30)}({expr(1)})" for _ in range(rnd.choice([0, 1, 2, 4])))
    )
    if rnd.random() < 0.3:  # an empty call after a call, as ``load_object("...")()``
        chain += "()"
    kind = rnd.choice(["item", "item", "assign", "return", "call"])
    if kind == "item":
        return kind, f"({chain})"
    if kind == "call":
        return "assign", chain  # a statement that is a call: ``self.add_stage(...)``
    if rnd.random() < 0.2:  # a conditional value, or one atom
        value = rnd.choice([f"{expr(1)} if {name()} else {expr(1)}", f'"{ident(40, 90)}"'])
        return "assign", f"v{ident(1, 20)} = {value}"
    if kind == "assign":
        return kind, f"v{ident(1, 20)} = {rnd.choice([chain, expr(1)])}"
    return kind, f"return {chain}"


def test_layout_agrees_with_black_on_random_fragments():
    rnd = random.Random(20261121)
    black_frag = pysource.Fragments(fast=False)
    checked = 0
    for _ in range(400):
        kind, text = _fragment(rnd)
        depth = rnd.choice([1, 2, 3])
        try:
            ours = (
                layout.list_item(text, depth) if kind == "item" else layout.statement(text, depth)
            )
        except layout.Unsupported:
            continue
        theirs = (
            black_frag.item(text, depth) if kind == "item" else black_frag.statement(text, depth)
        )
        assert ours == theirs, text
        checked += 1
    assert checked > 200
