"""The toy cloud's `Cloud` (tritonfleet/core/cloud.py's contract): made-up facts, its own modules for the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tests.toy_cloud import resources
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.cloud import Cloud
from tritonfleet.core.exposure import INTERNAL, EgressRule, ExposureFacts
from tritonfleet.core.preflight import UNKNOWN, Finding, PreflightReport

if TYPE_CHECKING:
    from tritonfleet.core.catalog import InstanceType
    from tritonfleet.core.config import GpuPool as PoolConfig
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.object_store import RepositoryUri, Store
    from tritonfleet.core.planned import Enforcement, GpuPool, PlatformLine
    from tritonfleet.core.startup import ImagePullPath

SPOT_NOTICE_SECONDS = 30
OBJECT_STORE_CIDRS = ("192.0.2.0/24",)  # where the toy's buckets answer (TEST-NET-1)
LOAD_BALANCER_CIDRS = ("198.51.100.0/24",)  # the toy load balancers' own subnet (TEST-NET-2)
INTERNAL_ANNOTATION = "toy.example/internal-load-balancer"
MIRROR = "registry.toy.invalid/nvidia/tritonserver"  # the toy registry's copy of the Triton image (cluster.imageMirror)


@dataclass(frozen=True)
class Toy(Cloud):
    def accelerator(self, instance_type: str) -> str | None:
        entry = load_catalog().find(self.name, instance_type)
        return entry.gpu if entry else None

    def type_facts_missing(self, itype: InstanceType) -> list[str]:
        return []  # the toy keeps no per-type fact table besides its catalog rows

    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        return {"toy": f"a test-only cloud: nothing of {config.stack} is deployable"}

    def image_pull_path(self, config: StackConfig, pool: PoolConfig) -> ImagePullPath | None:
        return None  # the toy cloud pulls whole images

    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        finding = Finding("zones", config.region, UNKNOWN, "the toy cloud has no API to ask")
        return PreflightReport(config.stack, config.region, list(config.cluster.zones), [finding])

    def exposure_facts(self, load_balancer_cidrs: tuple[str, ...] | None = None) -> ExposureFacts:
        """An internal load balancer by annotation, from its own subnet; Triton's pods reach only the object store."""
        sources = self.load_balancer_cidrs() if load_balancer_cidrs is None else load_balancer_cidrs
        return ExposureFacts(
            internal_service_annotations={INTERNAL_ANNOTATION: "true"},
            load_balancer_sources={INTERNAL: tuple(sources)},
            egress=tuple(EgressRule(cidr, 443) for cidr in self.object_store_cidrs()),
        )

    def load_balancer_cidrs(self) -> tuple[str, ...]:
        return LOAD_BALANCER_CIDRS

    def object_store_cidrs(self) -> tuple[str, ...]:
        return OBJECT_STORE_CIDRS

    def object_store(self, uri: RepositoryUri) -> Store:
        from tests.toy_cloud.storage import ToyStore

        return ToyStore(uri)

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

    def release_internal(self, kind: str, annotations: Mapping[str, str], class_name: str) -> bool | None:
        """The toy exposes a release only inside the cluster: its controllers read no annotation."""
        return None

    def ingress_open_sources(self, annotations: Mapping[str, str], every_address: tuple[str, ...]) -> list[str]:
        return []


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
    model_cache_host_path="/var/lib/toy/model-cache",
    protected_types=resources.PROTECTED,
    replacement_watched=resources.WATCHED,
    replacement_explained=resources.EXPLAINED,
    prod_acknowledgements=resources.PROD_ACKNOWLEDGEMENT,
    offline_calls=resources.OFFLINE_CALLS,
    offline_absent_calls=resources.ABSENT_CALLS,
)
