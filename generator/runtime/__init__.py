"""bcfg's PT2E runtime: what every quantizer module bcfg generates runs on.

bcfg copies this package, module for module, beside the quantizers it
generates (``generated/_bcfg_pt2e/``), so that a generated package needs
torch and torchao at run time, never bcfg. Nothing in the compiler imports
it. A generated quantizer is data: a table of ``Rule``s, one per pattern of
its spec, over a ``SpecQuantizer`` subclass that matches them on the exported
ATen graph and writes torchao's annotations.

One concern a module (ARCHITECTURE.md, "The PT2E runtime", has the table):
``model`` (``Reason``, ``Decline``, ``Match``, ``Context``: what every part
imports), ``api`` (the hooks API), ``values`` (the data generated tables hold),
``graph`` (facts about nodes, the graph index), ``matcher`` (where a rule
matches), ``conditions`` (checks, skip predicates, ``when:`` conditions),
``annotate``, ``scopes`` (which config annotates which nodes), ``validate``,
``transforms``, ``report`` (the opt-in report, the instance's recorder),
``match_report`` (the composable and pairs bases' explanation of their
matches), ``versions`` (the torchao releases it is verified with), ``finders``,
and the bases a spec's ``scopes:`` names, each with its scheme in its module
docstring: ``quantizer`` (``SpecQuantizer``, modules), ``operators``
(``OperatorScopedQuantizer``, torchao's inductor quantizers), ``composable``
(``ComposableSpecQuantizer``, ExecuTorch's Cortex-M and Arm), ``pairs``
(``PairsQuantizer``, ExecuTorch's Cadence).

How a rule is matched and annotated (README, "PT2E quantizers"):

* ``chain``: ops in forward order, each the first argument of the next, every
  op but the last with no other user. The first op's tensor arguments get the
  input activation spec, except those at the ``weight`` and ``bias``
  positions, which get the weight and bias specs (on the rule's
  ``weight_axis``, if it has one); the last op gets the output spec (a
  fixed-qparams spec where the spec fixes the output's qparams).
* ``propagate``: after every rule, an op whose producer (first argument) has
  an output spec and that is not annotated yet shares that spec, input and
  output.
* ``shared``: a ``propagate`` op that is also annotated in rule order, even
  when its input is not quantized: a list input (cat) gives its first element
  (with ``qparams="quantized"``: its first element that comes from a quantized
  op, through shared ops, if any) the input spec and shares it with the rest
  and the output; a single input
  shares its producer's output spec if the producer is quantized, else gets
  the input spec; the output shares the input's.
* ``hook``: a named Python function annotates the pattern.

A quantizer whose ``outputs`` is ``"consumers"`` gives the last op of a chain
no output spec (unless the spec fixes its qparams): its output is observed
only where a quantized consumer's input spec asks for it, so an output no
quantized op reads stays float. Shared-observer ops then follow quantized
patterns instead of output specs: after each scope's rules, in graph order,
an op whose tensor inputs all come from quantized patterns (a hook's count
when it gives them an output spec) gets the input spec on its first input,
shared with its other inputs and its output, and counts as a quantized
pattern itself. A ``shared`` op's first input always gets the input spec.

A match is skipped when a node of it is already annotated (with
``reused_weight="decline"``, its weight or bias too: an earlier match of the
same module, or of a tied weight, took it), when its scope
does not accept it, when an activation input is not a float32 tensor, or when
a skip predicate of the rule holds for an activation input (or, for a
predicate of the first op such as ``depthwise``, for the match's first op).
``set_filter_function(fn)`` narrows every scope to matches whose ops ``fn``
accepts.
"""

from .versions import load

load()
