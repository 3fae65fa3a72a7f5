"""Google Cloud as a tritonfleet cloud: GKE with compute classes, GCS buckets, Workload Identity (core/cloud.py's contract)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tritonfleet.clouds.gcp import facts
from tritonfleet.core.cloud import Cloud

if TYPE_CHECKING:
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.exposure import ExposureFacts
    from tritonfleet.core.object_store import RepositoryUri, Store
    from tritonfleet.core.preflight import PreflightReport


@dataclass(frozen=True)
class Gcp(Cloud):
    def accelerator(self, instance_type: str) -> str | None:
        from tritonfleet.clouds.gcp.accelerators import accelerator

        return accelerator(instance_type)

    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        from tritonfleet.clouds.gcp.plan_notes import plan_notes

        return plan_notes(config, today)

    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        from tritonfleet.clouds.gcp.preflight import preflight

        return preflight(config, deadline_s)

    # --- cloud-pure (issue #35 point 1): exposure and the object store ---
    def exposure_facts(self, load_balancer_cidrs: tuple[str, ...] | None = None) -> ExposureFacts:
        """GKE's load balancers have no subnets of their own: `load_balancer_cidrs` changes nothing here."""
        from tritonfleet.clouds.gcp.exposure import gcp_exposure_facts

        return gcp_exposure_facts()

    def load_balancer_cidrs(self) -> tuple[str, ...]:
        return ()

    def object_store_cidrs(self) -> tuple[str, ...]:
        return (facts.PRIVATE_GOOGLE_APIS_CIDR,)

    def object_store(self, uri: RepositoryUri) -> Store:
        from tritonfleet.clouds.gcp.storage import GcsStore

        return GcsStore(uri)


CLOUD = Gcp(
    name="gcp",
    package="tritonfleet.clouds.gcp",
    adapter="components.gcp.cloud:GcpCloud",
    uri_scheme="gs",
    provider_type="pulumi:providers:gcp",
    gpu_taint_value=facts.GPU_TAINT_VALUE,
    spot_notice_seconds=facts.SPOT_NOTICE_SECONDS,
    spot_falls_back_to_on_demand=facts.SPOT_FALLS_BACK_TO_ON_DEMAND,
    spot_share_enforced=facts.SPOT_SHARE_ENFORCED,
    node_capacity_type_label=facts.NODE_CAPACITY_TYPE_LABEL,
    preferred_spreads_add_nodes=facts.PREFERRED_SPREADS_ADD_NODES,
    hostname_spread_caps_new_nodes=facts.HOSTNAME_SPREAD_CAPS_NEW_NODES,
    rollout_traffic_routers=facts.ROLLOUT_TRAFFIC_ROUTERS,
)
