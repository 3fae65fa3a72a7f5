"""The toy cloud's `Cloud` (tritonfleet/core/cloud.py's contract): made-up facts, its own modules for the rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tests.toy_cloud import resources
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.cloud import Cloud
from tritonfleet.core.preflight import UNKNOWN, Finding, PreflightReport

if TYPE_CHECKING:
    from tritonfleet.core.catalog import InstanceType
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.planned import Enforcement, GpuPool, PlatformLine

SPOT_NOTICE_SECONDS = 30


@dataclass(frozen=True)
class Toy(Cloud):
    def accelerator(self, instance_type: str) -> str | None:
        entry = load_catalog().find(self.name, instance_type)
        return entry.gpu if entry else None

    def type_facts_missing(self, itype: InstanceType) -> list[str]:
        return []  # the toy keeps no per-type fact table besides its catalog rows

    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        return {"toy": f"a test-only cloud: nothing of {config.stack} is deployable"}

    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        finding = Finding("zones", config.region, UNKNOWN, "the toy cloud has no API to ask")
        return PreflightReport(config.stack, config.region, list(config.cluster.zones), [finding])

    def offline_outputs(self, resource_type: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
        return resources.offline_outputs(resource_type, name, inputs)

    def gpu_pool(self, resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
        return resources.gpu_pool(resource_type, props, urn, name)

    def floor_nodes(self, resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
        return resources.floor_nodes(resource_type, props, name)

    def cluster_enforcement(
        self, resource_type: str, name: str, props: Any, planned: Sequence[tuple[str, str, Any]]
    ) -> Enforcement | None:
        return resources.cluster_enforcement(resource_type, name, props, planned)

    def platform_line(self, resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
        return resources.platform_line(resource_type, props, name, urn, region)

    def deletion_protection_off(self, resource_type: str, name: str, props: Any) -> str | None:
        return resources.deletion_protection_off(resource_type, name, props)


CLOUD = Toy(
    name=resources.NAME,
    package="tests.toy_cloud",
    adapter="tests.toy_cloud.adapter:ToyCloud",
    uri_scheme="toy",
    provider_type=resources.PROVIDER,
    gpu_taint_value="present",
    spot_notice_seconds=SPOT_NOTICE_SECONDS,
    spot_falls_back_to_on_demand=False,
    spot_share_enforced=True,
    node_capacity_type_label=None,
    preferred_spreads_add_nodes=False,
    hostname_spread_caps_new_nodes=False,
    rollout_traffic_routers={},
    machine_types_name_their_accelerator=False,
    gpu_node_architectures=("x86_64",),
    protected_types=resources.PROTECTED,
    replacement_watched=resources.WATCHED,
    replacement_explained=resources.EXPLAINED,
    prod_acknowledgements=resources.PROD_ACKNOWLEDGEMENT,
    offline_calls=resources.OFFLINE_CALLS,
    offline_absent_calls=resources.ABSENT_CALLS,
)
