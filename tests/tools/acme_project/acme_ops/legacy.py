"""The BackendConfig ACME wrote by hand before its spec (bcfg import reads it)."""

import torch
from torch import nn
from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig, DTypeConfig

from .fused import LinearGELU
from .fusers import fuse_linear_gelu


def get_acme_backend_config() -> BackendConfig:
    int8 = DTypeConfig(torch.quint8, torch.quint8, torch.qint8, torch.float)
    return BackendConfig("acme_legacy").set_backend_pattern_configs(
        [
            BackendPatternConfig((nn.Linear, nn.GELU))
            .set_dtype_configs([int8])
            .set_fuser_method(fuse_linear_gelu)
            .set_fused_module(LinearGELU),
            BackendPatternConfig(LinearGELU)
            .set_dtype_configs([int8])
            .set_root_module(nn.Linear)
            .set_reference_quantized_module(torch.ao.nn.quantized.reference.Linear),
        ]
    )
