"""The QConfigMapping ACME's users quantize with (bcfg compat checks it against the spec)."""

from torch.ao.quantization import get_default_qconfig_mapping


def acme_qconfig_mapping():  # type: ignore[no-untyped-def]
    return get_default_qconfig_mapping("fbgemm")
