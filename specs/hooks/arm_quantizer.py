"""What is Arm's own in ExecuTorch's Arm front classes, which specs/arm_tosa.bcfg's
``classes:`` exports from the generated module (``TOSAQuantizer``,
``EthosUQuantizer``, ``VgfQuantizer``: their constructors, ``compile_spec`` below
their init), as ExecuTorch 1.5.1 builds them by default (its composable
implementation). The spec gives them the rest: ExecuTorch's configuration
methods and their config check (``api: composable``, ``config_type``), the
affine output of a fused relu (``output_qscheme: affine``) and the device check
(``validate: one_device``). What stays ExecuTorch's: its quantization configs
(whose accessors say each op's specs), its pass manager (the graph rewrites
before annotation), VGF's config wrapping and its driver for control-flow
submodules. The deprecated per-op implementation
(``use_composable_quantizer=False``) is not reproduced."""

from __future__ import annotations

import operator
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported where it is used: bcfg resolves this module without it
    from torch.fx import GraphModule


# ExecuTorch's, taken when this module is imported, before a test swaps its classes; not
# tried without its Arm dependencies (tosa-tools), as where bcfg generates.
et = SUBMODULES = None
if find_spec("tosa_serializer") is not None:
    from executorch.backends.arm.quantizer import arm_quantizer as et

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
    """Mixed in before the generated class (whose api: composable gives it ExecuTorch's
    configuration methods, config_type their check, validate: one_device validate)."""

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

    # ExecuTorch's driver: prepare, calibrate, convert, cond and while submodules too.
    _quantize_with_submodules = SUBMODULES

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        """Arm's rewrites, on the ops the stages quantize only: annotate, mark the rest
        not to be rewritten, run Arm's pass manager (leaky relu by table), drop the marks."""
        from executorch.backends.arm._passes import ArmPassManager

        model = self.annotate(model)
        self.api.keep_unmarked(model)  # the runtime's hooks API (api.py)
        with et._prefer_table_for_quantized_leaky_relu(self.compile_spec):
            model = ArmPassManager(self.compile_spec).transform_for_annotation_pipeline(model)
        self.api.forget_marks(model)
        return model


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
