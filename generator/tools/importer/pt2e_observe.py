"""What a PT2E quantizer does, observed on the probe zoo: the first step of ``bcfg import``
of a quantizer.

Every probe is exported (non-strict, and strict where asked) and annotated by the
quantizer; the annotations are read back as *matches*: an annotated node whose
activation inputs come from outside, followed by the nodes whose output it hands on
unobserved (conv -> relu: the conv's output spec is none, the relu's input is not
observed), up to the node that has the output spec. Each match records its ops, the
specs of its roles (activation input, weight, bias, output: live objects, so that the
spec's configs can be written from them) and its first node (so that conditions can be
tried on it). Nodes whose output shares its input's observer are *shared* matches. An op
that begins a match on some probes and is left float on others is a *conditional* op:
its nodes of both kinds are kept, for ``pt2e_spec`` to find the condition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...live.probe.annotations import KEY, canon_spec, op_name


@dataclass
class Match:
    ops: tuple[str, ...]
    kind: str  # chain or shared
    first: Any  # the first node (live)
    graph: str
    specs: dict[str, Any] = field(default_factory=dict)  # role -> live spec
    eager: bool = False  # shared: annotated though its input is not quantized
    after_io: bool = False  # shared: its first input is a model input the quantizer annotated
    form: tuple = ()  # shared: (first input's spec, the other inputs', the output's), see _form
    # chain: a binary op after the first whose other input is a node: "quantized" where that
    # input has a spec, "float" where not (scopes: operators says it with other:)
    other: str | None = None
    # chain: the spec of a conv's or linear's weight that is not a parameter (a model input),
    # which the quantizer reads by its position (ExecuTorch's scheme takes it as an activation)
    weight_input: Any = None
    # chain: an activation input is a tensor of no floating dtype (an add of int tensors),
    # which the quantizer annotated nonetheless
    nonfloat: bool = False

    def key(self, roles: tuple[str, ...] = ("input", "weight", "bias", "output")) -> tuple:
        """The config a chain match uses: its roles' specs as plain data."""
        return tuple((role, _spec_key(self.specs.get(role))) for role in roles)


def _spec_key(spec: Any) -> Any:
    c = canon_spec(spec)
    if isinstance(c, tuple) and c[0] == "derived":
        return ("derived",) + c[2:]  # which nodes it derives from is the role's, not the config's
    return c


@dataclass
class ModelIO:
    """A model input (``placeholder``) or the ``output`` node of a probe, as annotated:
    ``spec`` the placeholder's output spec or the spec of the output node's first float input
    (live), ``float`` whether it carries a float tensor (the output node: takes one),
    ``annotated`` whether it has an annotation at all, ``uniform`` whether the annotation is
    what one config gives such a node (the output node: every float input that spec, no other
    input a spec; a placeholder: no input specs), ``spec`` None where ``float`` is not."""

    kind: str  # "placeholder" or "output"
    graph: str
    float: bool
    annotated: bool
    spec: Any = None
    uniform: bool = True


def read_io(gm: Any, graph: str) -> list[ModelIO]:
    """The model's inputs and its output node on an annotated graph (``ModelIO``)."""
    out = []
    for node in gm.graph.nodes:
        if node.op not in ("placeholder", "output"):
            continue
        qa = node.meta.get(KEY)
        if node.op == "placeholder":
            floats = [node] if _float(node) else []
        else:
            floats = [a for a in flat_inputs(node) if _float(a)]
        seen = ModelIO(node.op, graph, bool(floats), qa is not None)
        if qa is not None:
            specs = qa.input_qspec_map
            if node.op == "placeholder":
                seen.spec, seen.uniform = qa.output_qspec, not specs
            else:
                seen.spec = specs.get(floats[0]) if floats else None
                keys = {_spec_key(specs.get(a)) for a in floats}
                seen.uniform = len(keys) <= 1 and set(specs) <= set(floats)
                seen.uniform &= qa.output_qspec is None
        out.append(seen)
    return out


def _float(node: Any) -> bool:
    """Whether ``node`` is a tensor of a floating dtype (as the composable scheme asks)."""
    val = node.meta.get("val")
    return getattr(val, "dtype", None) is not None and val.dtype.is_floating_point


@dataclass
class Observations:
    matches: list[Match] = field(default_factory=list)
    unannotated: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)  # op: (graph, node)
    failures: list[tuple[str, str]] = field(default_factory=list)  # graph, why
    graphs: int = 0
    transformed: list[str] = field(default_factory=list)  # graphs transform_for_annotation changed
    io: list[ModelIO] = field(default_factory=list)  # the model inputs and output nodes


WEIGHTED = {"aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
            "aten.conv_transpose1d.default", "aten.conv_transpose2d.input",
            "aten.linear.default", "aten.conv1d.padding", "aten.conv2d.padding"}  # fmt: skip


def _param(node: Any) -> bool:
    return node.op == "get_attr"


def roles(node: Any) -> dict[Any, str]:
    """The role of each input node of ``node``: weight, bias or input (an activation)."""
    out = {}
    for i, arg in enumerate(node.args):
        for a in arg if isinstance(arg, (list, tuple)) else [arg]:
            if not hasattr(a, "op"):
                continue
            if op_name(node) in WEIGHTED and i in (1, 2) and _param(a):
                out[a] = "weight" if i == 1 else "bias"
            else:
                out.setdefault(a, "input")
    return out


def _nonfloat(node: Any) -> bool:
    """Whether ``node`` is a tensor of no floating dtype."""
    val = node.meta.get("val")
    return getattr(val, "dtype", None) is not None and not val.dtype.is_floating_point


def _is_shared(spec: Any) -> bool:
    return type(spec).__name__ == "SharedQuantizationSpec"


def flat_inputs(node: Any) -> list[Any]:
    """A node's input nodes in argument order, lists (cat's) flattened."""
    out: list[Any] = []
    for arg in node.args:
        for a in arg if isinstance(arg, (list, tuple)) else [arg]:
            if hasattr(a, "op") and a not in out:
                out.append(a)
    return out


def _form(node: Any, inputs: list[Any], qa: Any) -> tuple:
    """How a shared op's specs refer to its inputs: for the first input, for the others
    (None if it has one), for the output, each ``act`` (a spec of its own), ``node0`` (shares
    the first input's output), ``edge0`` (shares the first input's edge into the node),
    ``none`` or ``other`` (anything else: not reproduced)."""

    def kind(spec: Any) -> str:
        if spec is None:
            return "none"
        if not _is_shared(spec):
            return "act"
        ref = spec.edge_or_node
        if ref is inputs[0]:
            return "node0"
        if isinstance(ref, tuple) and ref[0] is inputs[0] and ref[1] is node:
            return "edge0"
        return "other"

    if not inputs:
        return ()
    specs = qa.input_qspec_map
    rest = {kind(specs.get(a)) for a in inputs[1:]}
    other = None if not rest else (rest.pop() if len(rest) == 1 else "other")
    return (kind(specs.get(inputs[0])), other, kind(qa.output_qspec))


def _splits(node: Any, qa: Any) -> bool:
    """A node of no tensor output (chunk, split: a list) whose users' outputs share the edge
    into it: a shared op, as the clusters of ExecuTorch's composable quantizers share it."""
    if qa.output_qspec is not None or _float(node):
        return False
    for user in node.users:
        spec = getattr(user.meta.get(KEY), "output_qspec", None)
        ref = getattr(spec, "edge_or_node", None) if _is_shared(spec) else None
        if isinstance(ref, tuple) and ref[1] is node:
            return True
    return False


def read_matches(gm: Any, graph: str) -> tuple[list[Match], list[Any]]:
    """The matches of an annotated graph, and the call nodes left unannotated."""
    matches: list[Match] = []
    unannotated = []
    inside: set[Any] = set()
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        qa = node.meta.get(KEY)
        if qa is None or not (qa.input_qspec_map or qa.output_qspec):
            if node not in inside:
                unannotated.append(node)
            continue
        if node in inside:
            continue
        specs = qa.input_qspec_map
        r = roles(node)
        if (_is_shared(qa.output_qspec) or _splits(node, qa)) and all(
            _is_shared(s) or r.get(a) == "input" for a, s in specs.items()
        ):
            inputs = flat_inputs(node)
            quantized = bool(inputs) and KEY in inputs[0].meta
            first_spec = next(iter(specs.values()), None)
            m = Match((op_name(node),), "shared", node, graph, eager=not quantized)
            m.after_io = quantized and inputs[0].op == "placeholder"
            m.form = _form(node, inputs, qa)
            if first_spec is not None and not _is_shared(first_spec):
                m.specs["input"] = first_spec
            matches.append(m)
            continue
        m = Match((op_name(node),), "chain", node, graph)
        for a, s in specs.items():
            role = r.get(a, "input")
            m.specs.setdefault(role, s)
        w = node.args[1] if op_name(node) in WEIGHTED and len(node.args) > 1 else None
        if hasattr(w, "op") and not _param(w) and w in specs:
            m.weight_input = specs[w]
            if not any(role == "weight" for role in r.values()):
                m.specs["weight"] = specs[w]  # its config is the conv's, weight by position
        m.nonfloat = any(r.get(a, "input") == "input" and _nonfloat(a) for a in specs)
        last = node
        out = qa.output_qspec
        while out is None and len(last.users) == 1:
            (user,) = last.users
            uq = user.meta.get(KEY)
            if uq is None or last in uq.input_qspec_map or user.op != "call_function":
                break
            inside.add(user)
            rest = [a for a in flat_inputs(user) if a is not last]
            if rest:
                m.other = "quantized" if any(a in uq.input_qspec_map for a in rest) else "float"
            m.ops += (op_name(user),)
            last, out = user, uq.output_qspec
        m.specs["output"] = out
        matches.append(m)
    return matches, unannotated


def _shape_of(gm: Any) -> list[tuple[str, str, int]]:
    """What a transform may change: each node's op, target and number of arguments."""
    return [(n.op, str(n.target), len(n.args)) for n in gm.graph.nodes]


def observe(quantizer: Any, graphs: list[Any], modes: tuple[bool, ...], seconds: float,
            progress: Any = lambda s: None) -> Observations:  # fmt: skip
    """Annotate every graph (``engine.Graph``) in every export mode; read the matches."""
    import copy

    import torch

    from ...live.probe.zoo import export_model
    from ...live.targets import NOT_THE_USERS
    from ..compare.engine import call_users

    obs = Observations()
    for g in graphs:
        for strict in modes:
            label = f"{g.name} ({'strict' if strict else 'non-strict'})"
            progress(f"probing {label}")
            try:
                torch.manual_seed(0)
                model, inputs = g.build()
                model.train(g.train)
                gm = export_model(model, inputs, strict, g.dynamic)
            except NOT_THE_USERS:
                raise
            except BaseException:  # noqa: BLE001  (a probe torch cannot export: not observed)
                continue
            obs.graphs += 1

            def run(gm: Any = gm, label: str = label) -> Any:
                before = _shape_of(gm)
                model = quantizer.transform_for_annotation(copy.deepcopy(gm))
                if _shape_of(model) != before:
                    obs.transformed.append(label)
                return quantizer.annotate(model)

            model, error = call_users(run, seconds)
            if error is not None:
                obs.failures.append((label, error))
                continue
            matches, left = read_matches(model, label)
            obs.matches.extend(matches)
            obs.io.extend(read_io(model, label))
            for node in left:
                obs.unannotated.setdefault(op_name(node), []).append((label, node))
    return obs
