"""AWS as a tritonfleet cloud: EKS with Karpenter, S3 model buckets, IRSA (tritonfleet/core/cloud.py's contract)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tritonfleet.clouds.aws import facts
from tritonfleet.core.cloud import Cloud

if TYPE_CHECKING:
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.exposure import ExposureFacts
    from tritonfleet.core.object_store import RepositoryUri, Store
    from tritonfleet.core.preflight import PreflightReport


@dataclass(frozen=True)
class Aws(Cloud):
    def accelerator(self, instance_type: str) -> str | None:
        from tritonfleet.clouds.aws.accelerators import accelerator

        return accelerator(instance_type)

    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        from tritonfleet.clouds.aws.plan_notes import plan_notes

        return plan_notes(config, today)

    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        from tritonfleet.clouds.aws.preflight import preflight

        return preflight(config, deadline_s)

    # --- cloud-pure (issue #35 point 1): exposure and the object store ---
    def exposure_facts(self, load_balancer_cidrs: tuple[str, ...] | None = None) -> ExposureFacts:
        from tritonfleet.clouds.aws.exposure import PLANNED_S3_CIDRS, aws_exposure_facts

        cidrs = self.load_balancer_cidrs() if load_balancer_cidrs is None else load_balancer_cidrs
        return aws_exposure_facts(cidrs, PLANNED_S3_CIDRS)

    def load_balancer_cidrs(self) -> tuple[str, ...]:
        from tritonfleet.clouds.aws.exposure import PLANNED_LOAD_BALANCER_CIDRS

        return PLANNED_LOAD_BALANCER_CIDRS

    def object_store_cidrs(self) -> tuple[str, ...]:
        from tritonfleet.clouds.aws.exposure import PLANNED_S3_CIDRS

        return PLANNED_S3_CIDRS

    def object_store(self, uri: RepositoryUri) -> Store:
        from tritonfleet.clouds.aws.storage import S3Store

        return S3Store(uri)


CLOUD = Aws(
    name="aws",
    package="tritonfleet.clouds.aws",
    adapter="components.aws.cloud:AwsCloud",
    uri_scheme="s3",
    provider_type="pulumi:providers:aws",
    gpu_taint_value=facts.GPU_TAINT_VALUE,
    spot_notice_seconds=facts.SPOT_NOTICE_SECONDS,
    spot_falls_back_to_on_demand=facts.SPOT_FALLS_BACK_TO_ON_DEMAND,
    spot_share_enforced=facts.SPOT_SHARE_ENFORCED,
    node_capacity_type_label=facts.NODE_CAPACITY_TYPE_LABEL,
    preferred_spreads_add_nodes=facts.PREFERRED_SPREADS_ADD_NODES,
    hostname_spread_caps_new_nodes=facts.HOSTNAME_SPREAD_CAPS_NEW_NODES,
    rollout_traffic_routers=facts.ROLLOUT_TRAFFIC_ROUTERS,
)
