"""What a cloud's capacity preflight reports (tritonfleet/clouds/<cloud>/preflight.py): findings with a status each.

A check the cloud's API cannot answer is `unknown` with the reason, never `ok`; a `blocker` fails `tritonfleet
preflight` (exit 1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OK, BLOCKER, WARNING, UNKNOWN = "ok", "blocker", "warning", "unknown"

# The whole preflight's deadline: each API call has its own timeouts too (tritonfleet/clouds/<cloud>/preflight.py);
# tritonfleet's choice, ample for the few dozen read calls a stack needs.
PREFLIGHT_DEADLINE_S = 300


@dataclass(frozen=True)
class Finding:
    check: str  # zones, offering, quota, spot-price, s3-endpoint, reservation
    subject: str
    status: str  # ok, blocker, warning, unknown
    detail: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class PreflightReport:
    stack: str
    region: str
    zones: list[str]
    findings: list[Finding]

    @property
    def blockers(self) -> list[Finding]:
        return [f for f in self.findings if f.status == BLOCKER]

    def document(self) -> dict[str, Any]:
        counts = {status: sum(1 for f in self.findings if f.status == status) for status in (OK, WARNING, UNKNOWN, BLOCKER)}
        return {
            "stack": self.stack,
            "region": self.region,
            "zones": self.zones,
            "summary": counts,
            "findings": [asdict(f) for f in self.findings],
        }
