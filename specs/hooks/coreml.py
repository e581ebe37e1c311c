"""What specs/coreml.bcfg says in Python: Core ML's annotation of its registry's patterns.

ExecuTorch's CoreMLQuantizer traces each pattern of its registry (an op, a batch norm, an
activation) to a graph at every ``annotate`` and matches it with torch's subgraph matcher,
once per config: the named modules' configs, the module types', then the global one for the
rest. ``CoreML`` matches the spec's chains (``self.rules``, in the registry's order) in the
graph as that matcher does (each op the argument 0 of the next, every op but the last used
only by the next; ``x + x`` is no match: one node is not two inputs of the pattern) and
annotates them as ExecuTorch's annotators do, with ExecuTorch's ``AnnotationConfig`` of each
config; then its pools and flatten, found by source as ExecuTorch finds them, sharing the
spec of an annotated input."""

from __future__ import annotations

from typing import Any

KEY = "quantization_annotation"
WEIGHTED = {"aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default", "aten.linear.default"}  # fmt: skip
FAMILIES = ("conv", "linear", "add", "mul", "matmul")
# Core ML's activation specs: fixed qparams' scheme for tanh and the sigmoids, affine for relus.
SCHEME = {"tanh": "symmetric", "sigmoid": "affine", "hardsigmoid": "affine"}
AFFINE = ("relu", "relu6")


def init(self: Any, config: Any) -> None:
    self._config = config


def _done(node: Any) -> bool:
    return KEY in node.meta and node.meta[KEY]._annotated


def _set(node: Any, inputs: Any = None, output: Any = None) -> None:
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    node.meta[KEY] = QuantizationAnnotation(input_qspec_map=inputs or {}, output_qspec=output, _annotated=True)  # fmt: skip


def _mark(nodes: Any) -> None:
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    for node in nodes:
        node.meta.setdefault(KEY, QuantizationAnnotation())._annotated = True


def _adjust(node: Any, q: Any) -> Any:
    """ExecuTorch's ``_adjust_activation_qspec``: an activation's output spec."""
    import torch
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    name = str(node.target).split(".")[1].rstrip("_")
    scheme = SCHEME.get(name)
    if name in AFFINE or (name == "hardtanh" and node.args[1] == 0 and node.args[2] == 6):
        scheme = "affine"
    if q is None or scheme is None:
        return q
    qscheme = getattr(torch, f"per_tensor_{scheme}")
    return QuantizationSpec(observer_or_fake_quant_ctr=q.observer_or_fake_quant_ctr, dtype=q.dtype, qscheme=qscheme)  # fmt: skip


def _found(rule: Any, last: Any) -> list | None:
    """The chain of ``rule`` ending at ``last``, as the subgraph matcher finds it, or None."""
    nodes = [last]
    for ops in rule.chain[-2::-1]:
        node = nodes[0].args[0] if nodes[0].args else None
        if not hasattr(node, "op") or node.op != "call_function" or node.target not in ops:
            return None
        if any(u is not nodes[0] for u in node.users):
            return None
        nodes.insert(0, node)
    return nodes


def _tensors(node: Any, n: int) -> list:
    """The node's first ``n`` arguments that are nodes; None if one node is two of them."""
    found = [a for a in node.args[:n] if hasattr(a, "op")]
    return found if len(set(found)) == len(found) else None  # type: ignore[return-value]


def _weighted(nodes: list, q: Any, keep: Any) -> bool:
    mod, output = nodes[0], nodes[-1] if len(nodes) > 1 else None
    inp, weight, bias = mod.args[0], mod.args[1], mod.args[2] if len(mod.args) > 2 else None
    part = [n for n in (mod, weight, bias) if n is not None]
    if _tensors(mod, 3) is None or any(_done(n) for n in part) or (keep and not all(map(keep, part))):  # fmt: skip
        return False
    inputs = {inp: inp.meta[KEY].output_qspec if _done(inp) else q and q.input_activation}
    inputs |= {weight: q and q.weight, **({bias: None} if bias is not None else {})}
    _set(mod, inputs, q and q.output_activation if output is None else None)
    if output is not None and not _done(output):
        _set(output, output=_adjust(output, q and q.output_activation))
    _mark(part)
    return True


def _binary(nodes: list, q: Any, keep: Any) -> bool:
    op, output = nodes[0], nodes[-1] if len(nodes) > 1 else None
    part = [n for n in (output, op) if n is not None]
    if _tensors(op, 2) is None or any(map(_done, part)) or (keep and not all(map(keep, part))):
        return False
    inputs = {a: q and q.input_activation for a in op.args[:2] if hasattr(a, "op")}
    _set(op, inputs, q and q.output_activation if output is None else None)
    if output is not None:
        _set(output, output=_adjust(output, q and q.output_activation))
    _mark(part)
    return True


def _sources() -> list:
    """Core ML's pools and flatten by source (module, function), in its registry's order."""
    import torch

    nn, F, C = torch.nn, torch.nn.functional, torch._C._nn
    maxes = [[getattr(m, f"{n}{d}d") for m, n in ((nn, "MaxPool"), (F, "max_pool"), (torch, "max_pool"))] for d in (1, 2, 3)]  # fmt: skip
    adaptive = [[getattr(nn, f"AdaptiveAvgPool{d}d"), getattr(F, f"adaptive_avg_pool{d}d")] for d in (1, 2, 3)]  # fmt: skip
    adaptive[0].append(torch.adaptive_avg_pool1d)
    avg = [[nn.AvgPool1d, F.avg_pool1d, torch.avg_pool1d, torch.mean], [nn.AvgPool2d, F.avg_pool2d, C.avg_pool2d], [nn.AvgPool3d, F.avg_pool3d, C.avg_pool3d]]  # fmt: skip
    return [*maxes, *adaptive, *avg, [nn.Flatten, torch.flatten]]


def _shared(model: Any, q: Any, keep: Any) -> None:
    """The pools and flatten: torch's source partitions of each of Core ML's groups in its
    order (one partitioning of them all: a group's keep their order in it)."""
    from torch.fx.passes.utils.source_matcher_utils import get_source_partitions
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    groups = _sources()
    found = get_source_partitions(model.graph, [s for g in groups for s in g], keep)
    for group in groups:
        for partitions in [p for src, p in found.items() if src in group]:
            for p in partitions:
                out, op = p.output_nodes[0], p.nodes[0]
                inp = op.args[0]
                if _done(out) or _done(op) or not _done(inp) or inp.meta[KEY].output_qspec is None:
                    continue
                if q is None or q.input_activation is None or q.output_activation is None:
                    continue
                shared = SharedQuantizationSpec(inp)
                _set(op, {inp: shared})
                _set(out, output=shared)


def _from(module_types: list) -> Any:
    """ExecuTorch's filter of a node made by an object of one of ``module_types``."""

    def keep(n: Any) -> bool:
        stack = [t for _, t in n.meta.get("nn_module_stack", {}).values()]
        return any(t in stack + [t for _, t in n.meta.get("source_fn_stack", [])] for t in module_types)  # fmt: skip

    return keep


def _named(names: list) -> Any:
    def keep(n: Any) -> bool:
        found = [p.removeprefix("L['self'].") for p, _ in n.meta.get("nn_module_stack", {}).values()]  # fmt: skip
        return any(name in found for name in names)

    return keep


def _registry(rule: Any) -> tuple:
    """Where ExecuTorch's registry tries ``rule``: by op (conv, linear, add, mul, matmul),
    then with an activation, with a batch norm and one, with a batch norm, alone (bcfg's
    order is longest chain first, the spec's among chains of one length)."""
    first, chain = str(rule.chain[0][0]).split(".")[1], [str(ops[0]) for ops in rule.chain]
    kind = {1: 3, 3: 1}.get(len(chain), 2 if "batch_norm" in chain[-1] else 0)
    return next(i for i, f in enumerate(FAMILIES) if first.startswith(f)), kind


class CoreML:
    """ExecuTorch's CoreMLQuantizer(config): coremltools' LinearQuantizerConfig."""

    def annotate(self, model: Any) -> Any:
        from executorch.backends.apple.coreml.quantizer._annotation_config import AnnotationConfig

        if model.graph.eliminate_dead_code():  # ExecuTorch's, before each pattern
            model.recompile()
        by_target: dict = {}
        for node in model.graph.nodes:
            by_target.setdefault(node.target, []).append(node)
        c = self._config
        names, types = list(c.module_name_configs), list(c.module_type_configs)
        passes = [(cfg, _named([n])) for n, cfg in c.module_name_configs.items()]
        passes += [(cfg, _from([t])) for t, cfg in c.module_type_configs.items()]
        rest_n, rest_t = _named(names), _from(types)
        passes.append((c.global_config, lambda n: not (rest_t(n) or rest_n(n))))
        rules, rec = sorted(self.rules, key=_registry), self.reporter  # report(): the matches
        rec and rec.start()
        for cfg, keep in passes:
            q = AnnotationConfig.from_quantization_config(cfg)
            for rule in rules:
                for last in [n for op in rule.chain[-1] for n in by_target.get(op, ())]:
                    nodes = _found(rule, last)
                    annotate = _weighted if nodes and str(nodes[0].target) in WEIGHTED else _binary
                    if nodes is not None and annotate(nodes, q, keep) and rec:
                        rec.matched(rule, nodes)
            _shared(model, q, keep)
        if rec:  # the matches (its configs are no scopes of bcfg's)
            rec.scopes = []
            self.last_report = rec.finish(model, self)
        return model

    def validate(self, model: Any) -> None:
        pass
