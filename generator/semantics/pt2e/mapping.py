"""A pattern's ATen chain: its elements through the one table of ``aten_ops``, and the
fused modules of its backend, which an exported graph holds unfused."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...lang.vocabulary import spell
from .. import model as m
from ..aten_ops import FX_ONLY_PREFIXES, MAPPING, WEIGHT_BIAS
from ..checks import pattern_text as shown
from ..context import Ctx
from ..facts import CACHED_TOPS, UnknownSymbol, exported_op, op_in_other_namespace
from .keys import NOT_OBSERVED, fail

# What a rule's roots (and partitions) may be.
ROOT_KINDS = (m.SymbolKind.MODULE, m.SymbolKind.FUNCTION)


@dataclass(frozen=True)
class Fusions:
    """A backend's fusions, by the identity of the module: the pattern that fuses into each
    fused module, the pattern of each module a pattern names alone, and the modules its
    sequential fusers build."""

    fusing: dict[str, m.PatternConfig] = field(default_factory=dict)
    modules: dict[str, m.PatternConfig] = field(default_factory=dict)
    built: frozenset[str] = frozenset()

    @staticmethod
    def of(ctx: Ctx, backend: m.Backend) -> Fusions:
        fusing: dict[str, m.PatternConfig] = {}
        modules: dict[str, m.PatternConfig] = {}
        built: set[str] = set()
        for c in backend.configs:
            if c.fused_module is not None:
                fusing.setdefault(ctx.facts.identity(c.fused_module.path), c)
            p = c.pattern
            if isinstance(p, m.Symbol) and p.kind == m.SymbolKind.MODULE:
                modules.setdefault(ctx.facts.identity(p.path), c)
            if isinstance(c.fuser, m.SequentialFuser):
                built.add(ctx.facts.identity(c.fuser.fused.path))
        return Fusions(fusing, modules, frozenset(built))


class Mapping:
    """The mapping table, by the identity of the object each key names, for one run."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self._index: dict[str, tuple[tuple[str, ...], ...]] | None = None

    def table(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """The table by the identity of the object each key names (method names as is)."""
        if self._index is None:
            index: dict[str, tuple[tuple[str, ...], ...]] = {}
            for key, chain in MAPPING.items():
                if "." not in key:
                    index[key] = chain
                    continue
                try:
                    index.setdefault(self.ctx.facts.lookup(key).identity, chain)
                except UnknownSymbol:
                    continue  # not in this torch
            self._index = index
        return self._index

    def chain(self, c: m.PatternConfig, fusions: Fusions) -> m.AtenChain | None:
        """The ATen chain of a pattern through the table; None if it is FX-only."""
        elements = c.pattern if isinstance(c.pattern, tuple) else (c.pattern,)
        out: list[tuple[m.Symbol, ...]] = []
        for e in elements:
            if isinstance(e, m.Symbol) and e.kind == m.SymbolKind.OP:
                out.append((e,))
                continue
            if isinstance(e, m.Symbol) and e.path.startswith(FX_ONLY_PREFIXES):
                return None
            if isinstance(e, str):
                chain = self.table().get(e)
            elif isinstance(e, m.Symbol):
                chain = self.table().get(self.ctx.facts.lookup(e.path).identity)
            else:
                chain = None
            if chain is None and isinstance(e, m.Symbol) and self._fx_only(c, e, fusions):
                return None
            if chain is None:
                shown_e = repr(e) if isinstance(e, str) else spell(str(getattr(e, "path", e)))
                # A torch.library op is named by its own namespace, not aten's.
                likely = (
                    exported_op(e.path, self.ctx.facts.allow) if isinstance(e, m.Symbol) else None
                ) or f"aten.{aten_name(e)}.default"
                if isinstance(e, m.Symbol) and e.path.partition(".")[0] not in CACHED_TOPS:
                    # a project's module class: its forward likely calls its package's op
                    likely = op_in_other_namespace(aten_name(e)) or likely
                raise fail(
                    self.ctx,
                    c,
                    None,
                    f"{shown_e} has no ATen mapping: the PT2E quantizer cannot match pattern "
                    f"{shown(c.pattern)}",
                    "name the ATen ops torch.export emits for it, likely "
                    f"pt2e: {{aten: {likely}}} (check the exported graph), "
                    "or leave the pattern out of the quantizer with pt2e: {aten: []}",
                )
            out.extend(tuple(self.op(path) for path in ops) for ops in chain)
        return tuple(out)

    def _fx_only(self, c: m.PatternConfig, e: m.Symbol, fusions: Fusions) -> bool:
        """Whether module ``e``, with no mapping, is a fused module whose fusion's own rule
        covers it (True); raise where nothing covers it."""
        fusing = fusions.fusing.get(self.ctx.facts.identity(e.path))
        if e.kind == m.SymbolKind.MODULE and fusing is not None:
            if covered(fusing):
                return True  # FX-only: PT2E graphs hold the ops it fuses, a rule of their own
            raise fail(
                self.ctx,
                c,
                None,
                f"{spell(e.path)} is FX's fused module of pattern {shown(fusing.pattern)}"
                + (f" ({fusing.origin.item})" if fusing.origin is not None else "")
                + "; an exported graph holds that pattern's ops unfused, but the PT2E "
                f"quantizer leaves it out, so nothing covers pattern {shown(c.pattern)}",
                f"give pattern {shown(fusing.pattern)} a PT2E rule (pt2e: {{aten: ...}} "
                "or pt2e: {annotate: ...}), or leave this pattern out of the quantizer "
                "with pt2e: {aten: []}",
            )
        if self._fused_module(c, e, fusions):
            root = c.root_module
            raise fail(
                self.ctx,
                c,
                None,
                f"{spell(e.path)} is a fused module"
                + (f" (its root is {spell(root.path)})" if root is not None else "")
                + ": torch.export records the modules it holds, unfused, so no ATen op "
                "stands for it, and no pattern of this backend fuses into it",
                "write the chain it fuses as a pattern with 'fused: "
                f"{spell(e.path)}' (its rule quantizes the unfused ops, and this pattern "
                "stays FX-only), or leave this pattern out of the quantizer with "
                "pt2e: {aten: []}",
            )
        return False

    def _fused_module(self, c: m.PatternConfig, e: m.Symbol, fusions: Fusions) -> bool:
        """Whether module ``e`` (pattern ``c``, or an element of it) is a fused module: a fuser
        of the backend builds it, or ``c`` is ``e`` alone with another module as its root."""
        if e.kind != m.SymbolKind.MODULE:
            return False
        ident = self.ctx.facts.identity(e.path)
        if ident in fusions.built:
            return True
        root = c.root_module
        return c.pattern == e and root is not None and self.ctx.facts.identity(root.path) != ident

    def op(self, path: str) -> m.Symbol:
        facts = self.ctx.facts.lookup(path)
        return m.Symbol(path, facts.kind, facts.module)


def covered(fusing: m.PatternConfig) -> bool:
    """Whether the quantizer has a rule for a fusion's own (unfused) pattern."""
    opts = fusing.pt2e or m.PT2EOptions()
    if opts.aten == () or fusing.observation == NOT_OBSERVED:
        return False
    return not fusing.complex or opts.annotate is not None


def weight_bias(c: m.PatternConfig, chain: m.AtenChain) -> tuple[int | None, int | None]:
    """The weight and bias positions of a chain's first op: ``input_index``, or the table's."""
    given = dict(c.input_type_to_index)
    if "weight" in given or "bias" in given:
        return given.get("weight"), given.get("bias")
    if not chain:
        return None, None
    found = {WEIGHT_BIAS.get(op.path) for op in chain[0]}
    if len(found) == 1:
        only = found.pop()
        if only is not None:
            return only
    return None, None


def aten_name(e: object) -> str:
    """The ATen op a module, function or method name most likely exports as:
    ``nn.PixelShuffle`` and ``F.pixel_shuffle`` -> ``pixel_shuffle``."""
    name = e if isinstance(e, str) else str(getattr(e, "path", e)).rpartition(".")[2]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
