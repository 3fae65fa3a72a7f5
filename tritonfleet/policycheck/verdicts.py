"""A policy verdict as both runners report it, and how the engine's enums read."""

from __future__ import annotations

from dataclasses import asdict, dataclass

LEVEL_NAMES = {0: "advisory", 1: "mandatory", 2: "disabled", 3: "remediate"}
LEVEL_NUMBERS = {name: number for number, name in LEVEL_NAMES.items()}
SEVERITY_NAMES = {0: "", 1: "low", 2: "medium", 3: "high", 4: "critical"}
PREVIEW_PREFIX = "cannot run during preview: "


@dataclass(frozen=True, order=True)
class Verdict:
    policy: str
    enforcement: str  # advisory or mandatory (remediate is reported as mandatory, as the engine does)
    severity: str  # low, medium, high, critical, or '' when the policy sets none
    urn: str  # the resource's URN; '' for a stack-wide finding
    message: str  # the policy's own message (the engine prefixes the policy description; that is stripped)

    @property
    def blocking(self) -> bool:
        return self.enforcement == "mandatory"

    def document(self) -> dict[str, str]:
        return asdict(self)


def ordered(verdicts: list[Verdict]) -> list[Verdict]:
    """Blocking first, then by policy, resource and message: a deterministic order for output and plan documents."""
    return sorted(set(verdicts), key=lambda v: (not v.blocking, v.policy, v.urn, v.message, v.severity))
