"""Google Cloud as a tritonfleet cloud: GKE with compute classes, GCS buckets, Workload Identity (core/cloud.py's contract)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tritonfleet.clouds.gcp import facts
from tritonfleet.clouds.gcp import resources as gcp_resources
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
class Gcp(Cloud):
    def accelerator(self, instance_type: str) -> str | None:
        from tritonfleet.clouds.gcp.accelerators import accelerator

        return accelerator(instance_type)

    def type_facts_missing(self, itype: InstanceType) -> list[str]:
        """A boot disk type, a row in every region of MACHINE_TYPE_ZONES (None: not known offline), and the GPU
        quota metric of every quota kind its purchase options draw on (facts.py)."""
        kinds = sorted({facts.QUOTA_KIND_BY_OPTION[o] for o in itype.purchase_options if o in facts.QUOTA_KIND_BY_OPTION})
        return [
            *([] if itype.name in facts.BOOT_DISK_TYPES else [f"BOOT_DISK_TYPES: no row for {itype.name}"]),
            *(
                f"MACHINE_TYPE_ZONES[{region!r}]: no row for {itype.name}"
                for region, types in facts.MACHINE_TYPE_ZONES.items()
                if itype.name not in types
            ),
            *(
                f"GPU_QUOTA_METRICS: no {kind} metric for {itype.gpu}"
                for kind in kinds
                if kind not in facts.GPU_QUOTA_METRICS.get(itype.gpu, {})
            ),
        ]

    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        from tritonfleet.clouds.gcp.plan_notes import plan_notes

        return plan_notes(config, today)

    def image_pull_path(self, config: StackConfig, pool: PoolConfig) -> ImagePullPath | None:
        from tritonfleet.clouds.gcp.image_mirror import image_pull_path

        return image_pull_path(config)

    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        from tritonfleet.clouds.gcp.preflight import preflight

        return preflight(config, deadline_s)

    # ---- Planned resources: resources.py's readers ----
    def offline_outputs(self, resource_type: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
        return gcp_resources.offline_outputs(resource_type, name, inputs)

    def gpu_pool(self, resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
        return gcp_resources.gpu_pool(resource_type, props, urn, name)

    def floor_nodes(self, resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
        return gcp_resources.floor_nodes(resource_type, props, name)

    def cluster_enforcement(
        self, resource_type: str, name: str, props: Any, resources: Sequence[tuple[str, str, Any]]
    ) -> Enforcement | None:
        return gcp_resources.cluster_enforcement(resource_type, name, props, resources)

    def platform_line(self, resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
        return gcp_resources.platform_line(resource_type, props, name, urn, region)

    def deletion_protection_off(self, resource_type: str, name: str, props: Any) -> str | None:
        return gcp_resources.deletion_protection_off(resource_type, name, props)

    def release_internal(self, kind: str, annotations: Mapping[str, str], class_name: str) -> bool | None:
        return gcp_resources.release_internal(kind, annotations, class_name)

    def ingress_open_sources(self, annotations: Mapping[str, str], every_address: tuple[str, ...]) -> list[str]:
        return gcp_resources.ingress_open_sources(annotations, every_address)

    # ---- Exposure and the object store ----
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
    provider_type=gcp_resources.PROVIDER,
    gpu_taint_value=facts.GPU_TAINT_VALUE,
    spot_notice_seconds=facts.SPOT_NOTICE_SECONDS,
    spot_falls_back_to_on_demand=facts.SPOT_FALLS_BACK_TO_ON_DEMAND,
    spot_share_enforced=facts.SPOT_SHARE_ENFORCED,
    node_capacity_type_label=facts.NODE_CAPACITY_TYPE_LABEL,
    preferred_spreads_add_nodes=facts.PREFERRED_SPREADS_ADD_NODES,
    hostname_spread_caps_new_nodes=facts.HOSTNAME_SPREAD_CAPS_NEW_NODES,
    rollout_traffic_routers=facts.ROLLOUT_TRAFFIC_ROUTERS,
    # planned resources
    protected_types=gcp_resources.PROTECTED,
    replacement_watched=gcp_resources.WATCHED,
    replacement_explained=gcp_resources.EXPLAINED,
    prod_acknowledgements=gcp_resources.PROD_ACKNOWLEDGEMENT,
    offline_calls=gcp_resources.OFFLINE_CALLS,
    offline_absent_calls=gcp_resources.ABSENT_CALLS,
    # GPU facts
    machine_types_name_their_accelerator=facts.MACHINE_TYPES_NAME_THEIR_ACCELERATOR,
    gpu_node_architectures=facts.GPU_NODE_ARCHITECTURES,
    model_cache_host_path=facts.MODEL_CACHE_HOST_PATH,
)
