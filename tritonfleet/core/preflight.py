"""What a cloud's capacity preflight reports (tritonfleet/clouds/<cloud>/preflight.py): findings with a status each.

A check the cloud's API cannot answer is `unknown` with the reason, never `ok`; a `blocker` fails `tritonfleet
preflight` (exit 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tritonfleet.core.config.problems import both_ways, set_command

if TYPE_CHECKING:
    from tritonfleet.core.config import StackConfig

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


BUCKET_FREE = "free: `pulumi up` creates it"


def bucket_name_findings(config: StackConfig, probe: Callable[[str, str], tuple[str, str]]) -> list[Finding]:
    """A finding for each model bucket's global name: `probe(name, fix)` asks the cloud and returns the status and
    detail; `fix` is the command that gives the bucket another name (modelBuckets[i].bucketName)."""
    findings = []
    for i, bucket in enumerate(config.model_buckets):
        name = config.physical_bucket_name(bucket)
        status, detail = probe(name, both_ways(set_command(f"modelBuckets[{i}].bucketName", "<name>", config.stack)))
        findings.append(Finding("bucket", f"bucket {bucket.name}: {name}", status, detail))
    return findings
