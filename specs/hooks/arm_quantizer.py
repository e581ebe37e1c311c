"""What is Arm's own in ExecuTorch's Arm front classes, which specs/arm_tosa.bcfg's
``classes:`` exports from the generated module (``TOSAQuantizer``,
``EthosUQuantizer``, ``VgfQuantizer``: their constructors, ``compile_spec`` below
their init): the mixins ``TOSAFront`` and ``VgfFront``, as ExecuTorch 1.5.1 builds
the classes by default (its composable implementation): ``set_global``, ``set_module_type``,
``set_module_name``, ``set_io``, ``add_quantizer``, ``set_node_finder``,
``set_node_target``, ``set_node_name``, each a stage ahead of those set before
it, the global one last, then the shared ops. What stays ExecuTorch's: its
quantization configs (whose accessors say each op's specs), its node finders
(the objects ``set_node_finder`` takes), its pass manager (the graph rewrites
before annotation) and its driver for control-flow submodules. The deprecated
per-op implementation (``use_composable_quantizer=False``) is not reproduced."""

from __future__ import annotations

import operator
import sys
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported where it is used: bcfg resolves this module without it
    from torch.fx import GraphModule
    from torchao.quantization.pt2e.quantizer import Quantizer


# ExecuTorch's, taken when this module is imported, before a test swaps its classes; not
# tried without its Arm dependencies (tosa-tools), as where bcfg generates.
et = finders = SUBMODULES = None
if find_spec("tosa_serializer") is not None:
    from executorch.backends.arm.quantizer import arm_quantizer as et
    from executorch.backends.cortex_m.quantizer import node_finders as finders

    SUBMODULES = et.TOSAQuantizer._quantize_with_submodules


def compile_spec(self: Any, compile_spec_or_tosa_spec: Any, use_composable_quantizer: bool) -> None:
    """The classes' init: the compile spec, from a TOSA specification or a compile spec."""
    from executorch.backends.arm.common.arm_compile_spec import ArmCompileSpec
    from executorch.backends.arm.tosa import TosaSpecification

    self.use_composable_quantizer = use_composable_quantizer
    spec = compile_spec_or_tosa_spec
    if isinstance(spec, TosaSpecification):
        from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec

        spec = TosaCompileSpec(spec)
    elif not isinstance(spec, ArmCompileSpec):
        raise TypeError(
            "TOSAQuantizer constructor expects a TosaSpecification or compile_spec list, "
            f"got {type(spec)}"
        )
    self.compile_spec, self.tosa_spec = spec, spec.tosa_spec


class TOSAFront:
    """Mixed in before the generated class (which has add_stage, set_global_stage,
    add_quantizer, annotate)."""

    # Shared like the spec's shared_observer ops: ops the table also quantizes (when no
    # stage saw them), and call targets no rule can name.
    @property
    def shared_targets(self) -> tuple:
        import torch

        aten, higher = torch.ops.aten, torch.ops.higher_order
        return (
            aten.minimum.default, aten.maximum.default, aten.eq.Tensor, aten.eq.Scalar,
            aten.ne.Tensor, aten.ne.Scalar, aten.ge.Tensor, aten.ge.Scalar, aten.gt.Tensor,
            aten.gt.Scalar, aten.le.Tensor, aten.le.Scalar, aten.lt.Tensor, aten.lt.Scalar,
            operator.getitem, higher.while_loop, higher.cond,
        )  # fmt: skip

    needs_stage = False

    # ExecuTorch's driver: prepare, calibrate, convert, cond and while submodules too.
    _quantize_with_submodules = SUBMODULES

    def accepts(self, rule: Any, nodes: list, config: Any) -> bool:
        """A relu fused into conv or linear needs an affine output (ReluFusedPatternCheck)."""
        import torch

        fused = {
            getattr(torch.ops.aten, f).default for f in ("relu", "relu_", "hardtanh", "hardtanh_")
        }
        if len(nodes) < 2 or nodes[-1].target not in fused or config is None:
            return True
        spec = config.get_output_act_qspec(nodes[-1])
        symmetric = (torch.per_tensor_symmetric, torch.per_channel_symmetric)
        return spec is not None and spec.qscheme not in symmetric

    # Configuration, each returning self; a config is checked as ExecuTorch checks it.
    def _config(self, config: Any, what: str = "value") -> Any:
        if config is not None and not isinstance(config, et.QuantizationConfig):
            raise TypeError(
                f"{what} must be QuantizationConfig or None, got {type(config).__name__}."
            )
        return config

    def set_global(self, quantization_config: Any) -> Any:
        self.set_global_stage(quantization_config)
        return self

    @property
    def global_config(self) -> Any:
        return None if self.global_stage is None else self.global_stage.config

    @global_config.setter
    def global_config(self, value: Any) -> None:
        self.set_global(self._config(value, "global_config value"))

    def set_node_finder(self, quantization_config: Any, node_finder: Any) -> Any:
        self.add_stage(quantization_config, finder=node_finder, first=True)
        return self

    def set_node_target(self, node_target: Any, quantization_config: Any) -> Any:
        return self.set_node_finder(quantization_config, finders.NodeTargetNodeFinder(node_target))

    def set_node_name(self, node_name: str, quantization_config: Any) -> Any:
        return self.set_node_finder(quantization_config, finders.NodeNameNodeFinder(node_name))

    def set_module_type(self, module_type: Any, quantization_config: Any) -> Any:
        finder = finders.ModuleTypeNodeFinder(module_type)
        return self.set_node_finder(quantization_config, finder)

    def set_module_name(self, module_name: str, quantization_config: Any) -> Any:
        finder = finders.ModuleNameNodeFinder(module_name)
        return self.set_node_finder(quantization_config, finder)

    def set_io(self, quantization_config: Any) -> Any:
        self.set_node_finder(quantization_config, finders.InputNodeFinder())
        return self.set_node_finder(quantization_config, finders.OutputNodeFinder())

    def _clear(self, *kinds: str) -> None:
        types = tuple(getattr(finders, k) for k in kinds)
        self.stages = [s for s in self.stages if not isinstance(getattr(s, "finder", None), types)]

    def _replace(self, kinds: tuple[str, ...], value: Any, setter: Any, keys: Any) -> None:
        name = "module_type_config" if keys is callable else "module_name_config"
        if not isinstance(value, dict):
            raise TypeError(f"{name} must be a dict, got {type(value).__name__}.")
        for key, config in value.items():
            if not keys(key):
                want = "callable" if keys is callable else "str"
                raise TypeError(f"{name} keys must be {want}, got {type(key).__name__}.")
            self._config(config, f"{name} values")
        self._clear(*kinds)
        for key, config in value.items():
            setter(key, config)

    def _unreadable(self, name: str) -> Any:
        raise NotImplementedError(f"Composable quantizer does not allow accessing {name}.")

    io_config = property(
        lambda self: self._unreadable("io_config"),
        lambda self, v: (
            self._clear("InputNodeFinder", "OutputNodeFinder"),
            self.set_io(self._config(v, "io_config value")),
        ),
    )
    module_type_config = property(
        lambda self: self._unreadable("module_type_config"),
        lambda self, v: self._replace(("ModuleTypeNodeFinder",), v, self.set_module_type, callable),
    )
    module_name_config = property(
        lambda self: self._unreadable("module_name_config"),
        lambda self, v: self._replace(
            ("ModuleNameNodeFinder",), v, self.set_module_name, lambda k: isinstance(k, str)
        ),
    )

    def add_quantizer(self, quantizer: Quantizer) -> Any:
        super().add_quantizer(quantizer)
        return self

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        """Arm's rewrites, on the ops the stages quantize only: annotate, mark the rest
        not to be rewritten, run Arm's pass manager (leaky relu by table), drop the marks."""
        from executorch.backends.arm._passes import ArmPassManager

        base = next(k for k in type(self).__mro__ if k.__name__ == "ComposableSpecQuantizer")
        rt = sys.modules[base.__module__]  # the generated module's runtime: its meta keys
        model = self.annotate(model)
        for node in model.graph.nodes:
            node.meta.setdefault(rt.NO_TFA, True)
        with et._prefer_table_for_quantized_leaky_relu(self.compile_spec):
            model = ArmPassManager(self.compile_spec).transform_for_annotation_pipeline(model)
        for node in model.graph.nodes:
            for key in (rt.KEY, rt.INFO, rt.NO_TFA, rt.MATCHED):
                node.meta.pop(key, None)
        return model

    def validate(self, model: GraphModule) -> None:
        """Each op's tensor inputs on one device."""
        for node in model.graph.nodes:
            if node.op != "call_function":
                continue
            devices: set[str] = set()
            for arg in node.all_input_nodes:
                val = arg.meta.get("val")
                for t in val if isinstance(val, (tuple, list)) else [] if val is None else [val]:
                    devices.add(str(getattr(t, "device", f"Could not get device from {t}")))
                if len(devices) > 1:
                    raise ValueError(
                        f"Quantizer detected operator {node.name} with different device inputs: "
                        f"{devices}."
                    )


class VgfFront:
    """Mixed in before TOSAQuantizer for VGF: each config wrapped as a VGF config (snorm)."""

    def set_global(self, quantization_config: Any) -> Any:
        return super().set_global(et._wrap_vgf_quantization_config(quantization_config))

    def set_module_type(self, module_type: Any, quantization_config: Any) -> Any:
        config = et._wrap_vgf_quantization_config(quantization_config)
        return super().set_module_type(module_type, config)

    def set_module_name(self, module_name: str, quantization_config: Any) -> Any:
        config = et._wrap_vgf_quantization_config(quantization_config)
        return super().set_module_name(module_name, config)

    def set_io(self, quantization_config: Any) -> Any:
        return super().set_io(et._wrap_vgf_quantization_config(quantization_config))
