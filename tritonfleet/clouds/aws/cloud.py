"""AWS as a tritonfleet cloud: EKS with Karpenter, S3 model buckets, IRSA (tritonfleet/core/cloud.py's contract)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tritonfleet.clouds.aws import facts
from tritonfleet.clouds.aws import resources as aws_resources
from tritonfleet.core.cloud import Cloud

if TYPE_CHECKING:
    from tritonfleet.core.catalog import InstanceType
    from tritonfleet.core.config import GpuPool as PoolConfig
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.exposure import ExposureFacts
    from tritonfleet.core.object_store import RepositoryUri, Store
    from tritonfleet.core.planned import Enforcement, GpuPool, PlatformLine
    from tritonfleet.core.preflight import PreflightReport
    from tritonfleet.core.startup import ImagePullPath


@dataclass(frozen=True)
class Aws(Cloud):
    def accelerator(self, instance_type: str) -> str | None:
        from tritonfleet.clouds.aws.accelerators import accelerator

        return accelerator(instance_type)

    def type_facts_missing(self, itype: InstanceType) -> list[str]:
        """Every market the type is sold in needs its family's vCPU quota (facts.EC2_VCPU_QUOTAS)."""
        return [
            f"EC2_VCPU_QUOTAS: no {market} vCPU quota for {itype.name}'s family"
            for market in facts.quota_markets(itype.purchase_options)
            if facts.vcpu_quota(itype.name, market) is None
        ]

    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        from tritonfleet.clouds.aws.plan_notes import plan_notes

        return plan_notes(config, today)

    def image_pull_path(self, config: StackConfig, pool: PoolConfig) -> ImagePullPath | None:
        from tritonfleet.clouds.aws.node_pools import image_pull_path

        return image_pull_path(pool)

    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        from tritonfleet.clouds.aws.preflight import preflight

        return preflight(config, deadline_s)

    # ---- Planned resources: resources.py's readers ----
    def offline_outputs(self, resource_type: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
        return aws_resources.offline_outputs(resource_type, name, inputs)

    def gpu_pool(self, resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
        return aws_resources.gpu_pool(resource_type, props, urn, name)

    def floor_nodes(self, resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
        return aws_resources.floor_nodes(resource_type, props, name)

    def cluster_enforcement(
        self, resource_type: str, name: str, props: Any, resources: Sequence[tuple[str, str, Any]]
    ) -> Enforcement | None:
        return aws_resources.cluster_enforcement(resource_type, name, props, resources)

    def platform_line(self, resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
        return aws_resources.platform_line(resource_type, props, name, urn, region)

    def deletion_protection_off(self, resource_type: str, name: str, props: Any) -> str | None:
        return aws_resources.deletion_protection_off(resource_type, name, props)

    def release_internal(self, kind: str, annotations: Mapping[str, str], class_name: str) -> bool | None:
        return aws_resources.release_internal(kind, annotations, class_name)

    def ingress_open_sources(self, annotations: Mapping[str, str], every_address: tuple[str, ...]) -> list[str]:
        return aws_resources.ingress_open_sources(annotations, every_address)

    # ---- Exposure and the object store ----
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
    provider_type=aws_resources.PROVIDER,
    gpu_taint_value=facts.GPU_TAINT_VALUE,
    spot_notice_seconds=facts.SPOT_NOTICE_SECONDS,
    spot_falls_back_to_on_demand=facts.SPOT_FALLS_BACK_TO_ON_DEMAND,
    spot_share_enforced=facts.SPOT_SHARE_ENFORCED,
    node_capacity_type_label=facts.NODE_CAPACITY_TYPE_LABEL,
    preferred_spreads_add_nodes=facts.PREFERRED_SPREADS_ADD_NODES,
    hostname_spread_caps_new_nodes=facts.HOSTNAME_SPREAD_CAPS_NEW_NODES,
    rollout_traffic_routers=facts.ROLLOUT_TRAFFIC_ROUTERS,
    # planned resources
    protected_types=aws_resources.PROTECTED,
    replacement_watched=aws_resources.WATCHED,
    replacement_explained=aws_resources.EXPLAINED,
    prod_acknowledgements=aws_resources.PROD_ACKNOWLEDGEMENT,
    offline_calls=aws_resources.OFFLINE_CALLS,
    offline_absent_calls=aws_resources.ABSENT_CALLS,
    # GPU facts
    machine_types_name_their_accelerator=facts.MACHINE_TYPES_NAME_THEIR_ACCELERATOR,
    gpu_node_architectures=facts.GPU_NODE_ARCHITECTURES,
    model_cache_host_path=facts.MODEL_CACHE_HOST_PATH,
)
