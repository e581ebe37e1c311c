"""What ``bcfg compat`` finds: one ``Verdict`` per pattern config or per model node.

Plain data, no torch: the analysis in ``live.compat`` produces it, the command
in ``tools.compat`` prints it as a table, markdown or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Status(StrEnum):
    """Whether a pattern (or node) will be quantized as the mapping asks, and if not, why."""

    HONOURED = "honoured"  # its QConfig fits one of the pattern's dtype configs
    FUSED = "fused"  # a fusion pattern: the fused module's pattern config decides
    SWAPPED = "swapped for QAT"  # QAT swaps the module for its QAT class, whose config decides
    SKIPPED = "skipped by the mapping"  # the mapping gives it the QConfig None: deliberate
    NOT_A_TENSOR_OP = "no Tensor inputs"  # x.size(): FX never observes it
    REJECTED = "QConfig not supported"  # no dtype config fits the QConfig
    NO_DTYPE_CONFIGS = "no dtype configs"  # the pattern has none: torch never quantizes it
    FLOAT_AT_CONVERT = "kept float by convert"  # prepare observes it, convert leaves it float
    NO_QAT_MODULE = "no QAT module"  # QAT trains its weights without fake quantization
    NO_PATTERN = "no pattern"  # no pattern config of the backend matches it
    # No pattern, but between quantized ops: convert_fx's lowering runs it on quantized tensors
    QUANTIZED_AT_CONVERT = "quantized by convert"
    IN_PATTERN = "pattern not quantized"  # inside a pattern whose output node decides otherwise
    FAILS = "prepare_fx fails"  # torch raises: the mapping cannot be used as it is


# Statuses that count as honoured, and skips that are not the mapping's fault
# or are what it asked for: neither makes `bcfg compat` exit 1.
HONOURED = frozenset({Status.HONOURED, Status.FUSED, Status.SWAPPED, Status.QUANTIZED_AT_CONVERT})
DELIBERATE = frozenset({Status.SKIPPED, Status.NOT_A_TENSOR_OP})


@dataclass(frozen=True)
class Failure:
    """One reason a dtype config does not fit, in torch's terms.

    ``field`` is what failed (``input dtype``, ``is_dynamic``, ``weight
    quant_min/quant_max``, ``output scale_min``, ``input fixed qparams``, ...);
    ``message`` says how (``qint8; the backend wants quint8``). A ``dtype``
    failure (dtype or ``is_dynamic``) weighs more than a constraint when the
    closest dtype config is chosen.
    """

    field: str
    message: str
    dtype: bool = False

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(frozen=True)
class Closest:
    """The dtype config a rejected QConfig came closest to fitting, and what failed."""

    index: int  # in the pattern config's dtype configs, from 0
    count: int  # how many the pattern config has
    text: str  # the dtype config as a spec writes it
    failures: tuple[Failure, ...]


@dataclass(frozen=True)
class Verdict:
    """The verdict on one pattern config (``node`` None) or one node of a model.

    ``config`` is the index of the pattern config in the backend (the one
    matched, for a node); ``source`` names the mapping entry the QConfig came
    from (``global``, ``object_type[nn.Linear]``, ...); ``fits`` is the index
    of the dtype config that fits; ``suggestion`` a QConfig that would fit,
    checked by the same rules; ``overrides`` the mapping entries that may
    give single nodes another QConfig (known only with a model).
    """

    pattern: str | None
    status: Status
    reason: str
    node: str | None = None
    op: str | None = None  # a node's FX op and target: "call_module conv"
    config: int | None = None
    source: str | None = None
    qconfig: str | None = None
    fits: int | None = None
    closest: Closest | None = None
    suggestion: str | None = None
    overrides: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def honoured(self) -> bool:
        return self.status in HONOURED

    @property
    def deliberate(self) -> bool:
        return self.status in DELIBERATE


@dataclass(frozen=True)
class CompatResult:
    """Everything ``bcfg compat`` found for one backend and mapping (and model).

    ``error`` is set when ``prepare_fx`` itself raises on the model: torch's
    own message, in one line.
    """

    backend: str
    qat: bool
    verdicts: tuple[Verdict, ...]
    model: bool = False
    error: str | None = None

    @property
    def skipped(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.honoured]

    @property
    def honoured(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.honoured]

    @property
    def not_honoured(self) -> list[Verdict]:
        """The skips a user should look at: neither honoured nor deliberate."""
        return [v for v in self.verdicts if not v.honoured and not v.deliberate]
