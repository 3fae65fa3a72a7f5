"""The cloud contract: everything neutral code may ask of a cloud, and the one registry that finds a cloud by name.

A cloud is a plugin, as Karpenter's providers are: `tritonfleet/clouds/<name>/cloud.py` defines `CLOUD`, an instance
of a `Cloud` subclass, and keeps everything it knows (facts with their sources, config rules, preflight, bill,
resource types) in that folder; its Pulumi side lives in `components/<name>/` and is reached only through
`Cloud.adapter`. Neutral code never names a cloud: it calls `cloud(config.cloud)` and asks.

The registry holds import strings, not modules, so a GCP plan never imports an AWS module (and never `pulumi_aws`).
A cloud's fields have no defaults and its hooks are abstract: a new cloud that forgets one fails when it is built,
not later in a plan.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tritonfleet.core.catalog import InstanceType
    from tritonfleet.core.config import GpuPool as PoolConfig
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.config.rules.context import CloudConfigRules
    from tritonfleet.core.exposure import ExposureFacts
    from tritonfleet.core.object_store import RepositoryUri, Store
    from tritonfleet.core.planned import Enforcement, GpuPool, PlatformLine, Watched
    from tritonfleet.core.preflight import PreflightReport
    from tritonfleet.core.startup import ImagePullPath

# cloud name -> the module that defines its CLOUD. The one place a cloud is registered.
REGISTRY: dict[str, str] = {
    "aws": "tritonfleet.clouds.aws.cloud",
    "gcp": "tritonfleet.clouds.gcp.cloud",
}


class PreflightError(Exception):
    """The cloud's APIs could not be asked (no credentials, no answer in time): nothing was concluded."""


@dataclass(frozen=True)
class Cloud(ABC):
    """One cloud's answers to what neutral code asks. Facts are fields (each from the cloud's sourced facts module);
    behaviour is a method that imports the cloud's own modules when called."""

    name: str  # the `cloud` config value
    package: str  # the cloud's pure package: tritonfleet.clouds.<name>
    adapter: str  # "module:Class" of its Pulumi adapter (components/<name>/cloud.py), imported only by the platform
    uri_scheme: str  # model repositories' URI scheme (s3, gs)
    provider_type: str  # its Pulumi provider resource's type token (pulumi:providers:<pkg>)
    gpu_taint_value: str  # the value of the shared GPU taint key that the cloud's GPU nodes carry
    spot_notice_seconds: int  # the warning a spot node gets before it is reclaimed
    spot_falls_back_to_on_demand: bool  # whether its autoscaler falls back from spot to on-demand by itself
    spot_share_enforced: bool  # whether a pool's spot share is enforced (not only preferred)
    node_capacity_type_label: str | None  # the node label telling spot from on-demand, where one exists
    preferred_spreads_add_nodes: bool  # whether a preferred topology spread makes the autoscaler add nodes
    hostname_spread_caps_new_nodes: bool  # whether a hostname spread caps how many pods a new node takes
    rollout_traffic_routers: Mapping[str, str]  # access mode -> what splits canary traffic there
    # ---- GPU facts ----
    # Whether its catalog rows must name their accelerator type (`accelerator`): GCP attaches GPUs to a node pool by
    # that name; an EC2 instance type carries its GPUs.
    machine_types_name_their_accelerator: bool
    # The CPU architectures its GPU node images and node setup are built for: a catalog type of another architecture
    # is refused by config validation, never planned with these images.
    gpu_node_architectures: tuple[str, ...]
    # The node directory the node-local model cache lives in (docs/serving.md "Node-local model cache"): on the local
    # NVMe the cloud's GPU nodes back their ephemeral storage with (instance store, local SSD).
    model_cache_host_path: str

    def module(self, name: str) -> ModuleType:
        """One of the cloud's own pure modules (tritonfleet/clouds/<name>/<module>.py), imported now."""
        return importlib.import_module(f"{self.package}.{name}")

    @property
    def facts(self) -> ModuleType:
        """The cloud's sourced facts (facts.py): what only this cloud's own code reads by name."""
        return self.module("facts")

    @property
    def rules(self) -> CloudConfigRules:
        """The cloud's config rules (config_rules.py)."""
        return self.module("config_rules")  # type: ignore[return-value]

    @property
    def bill(self) -> ModuleType:
        """What the cloud bills besides GPU nodes and how (bill.py, read by tritonfleet/core/bill.py)."""
        return self.module("bill")

    @abstractmethod
    def accelerator(self, instance_type: str) -> str | None:
        """The accelerator an instance or machine type carries (None: none), so system nodes refuse it."""

    @abstractmethod
    def type_facts_missing(self, itype: InstanceType) -> list[str]:
        """What the cloud's per-type fact tables (quota codes, zones, boot disks... in its facts module) lack for a
        catalog row of this cloud, one line each; empty when nothing is missing. The catalog test asks this of every
        row, so a new instance type cannot reach a plan with a fact read as 'unknown' or 0."""

    @abstractmethod
    def plan_notes(self, config: StackConfig, today: date) -> dict[str, Any]:
        """Notes the cloud adds to the offline plan (empty where it has none): the plan's text prints a note that is
        text as it is, and the structured notes it knows (tritonfleet/plan/text.py KNOWN_CLOUD_NOTES) in its words."""

    @abstractmethod
    def image_pull_path(self, config: StackConfig, pool: PoolConfig) -> ImagePullPath | None:
        """How a new node of the pool gets the Triton image faster than a whole pull (parallel pull, streaming...),
        for the startup budget's image step (tritonfleet/core/startup.py); None: a whole pull."""

    @abstractmethod
    def preflight(self, config: StackConfig, deadline_s: float) -> PreflightReport:
        """Ask the cloud's APIs whether the stack can run (zones, offerings, quotas...); PreflightError where they
        cannot be asked."""

    # ---- Planned resources: the cloud's resources as the offline plan, the diff and the policy pack see them. Data
    # and readers live in tritonfleet/clouds/<name>/resources.py; the shapes they return (GpuPool, Enforcement,
    # PlatformLine, Watched) in tritonfleet/core/planned.py. Every reader answers None for a resource type that is not
    # the cloud's, so neutral code asks each registered cloud in turn.
    protected_types: tuple[str, ...]  # types stateful-resource-require-protect protects by default
    replacement_watched: Mapping[str, Watched]  # type -> the inputs whose change replaces it or rolls its nodes
    replacement_explained: Mapping[tuple[str, str], str]  # (type, input) -> why changing it replaces, in words
    prod_acknowledgements: Mapping[tuple[str, str], str]  # (type, input) -> the config key prod needs to replace
    offline_calls: Mapping[str, Mapping[str, Any]]  # data-source token -> the offline plan's answer
    offline_absent_calls: Mapping[str, str]  # data-source token -> the not-found error the offline plan answers

    @abstractmethod
    def offline_outputs(self, resource_type: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
        """The outputs the offline plan gives one of the cloud's resources (its inputs plus what the cloud would
        compute, derived from the name only); None for a type not the cloud's."""

    @abstractmethod
    def gpu_pool(self, resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
        """The GPU pool a planned node group / node pool describes (engine properties); None when it is none."""

    @abstractmethod
    def floor_nodes(self, resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
        """(pool, nodes) a planned node pool resource declares it keeps up at the plan's floor; None where none."""

    @abstractmethod
    def cluster_enforcement(
        self, resource_type: str, name: str, props: Any, resources: Sequence[tuple[str, str, Any]]
    ) -> Enforcement | None:
        """Whether a planned cluster enforces NetworkPolicy (`resources`: the stack's (type, name, properties));
        None for a resource that is not one of the cloud's clusters."""

    @abstractmethod
    def platform_line(self, resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
        """The non-GPU bill line a planned resource proves (control plane, system nodes, NAT...); None where none."""

    @abstractmethod
    def deletion_protection_off(self, resource_type: str, name: str, props: Any) -> str | None:
        """Why a planned resource's own deletion protection (the cloud's, besides Pulumi's protect) is off, in
        words with its fix; None where it is on or the resource has none."""

    @abstractmethod
    def release_internal(self, kind: str, annotations: Mapping[str, str], class_name: str) -> bool | None:
        """Whether a Triton release's `service`, `ingress` or `gateway` (its planned chart values) stays on the cloud
        network by what this cloud's controllers read: True internal, False public, None when nothing this cloud's
        controllers act on says either (the policy pack counts an exposure internal only when a cloud says so and
        none says public)."""

    @abstractmethod
    def ingress_open_sources(self, annotations: Mapping[str, str], every_address: tuple[str, ...]) -> list[str]:
        """The client sources of a release's Ingress open to every address, as this cloud's controller reads them
        from its annotations (each with the annotation named); empty where it reads none."""

    # ---- Exposure and the object store: how Triton is exposed (asked by the Kubernetes layer's access matrix) and
    # the model bucket's store (core/object_store.py opens it by URI scheme) ----
    @abstractmethod
    def exposure_facts(self, load_balancer_cidrs: tuple[str, ...] | None = None) -> ExposureFacts:
        """How Triton is exposed on the cloud (core/exposure.py), its object store at the offline plan's addresses,
        for load balancers in `load_balancer_cidrs` (None: those of a stack on the network tritonfleet creates)."""

    @abstractmethod
    def load_balancer_cidrs(self) -> tuple[str, ...]:
        """Where a stack's load balancers live on the network tritonfleet creates, where they have subnets of their
        own that Triton's pods may reach (AWS: STS's interface endpoint answers there); empty where they have none."""

    @abstractmethod
    def object_store_cidrs(self) -> tuple[str, ...]:
        """Where Triton's pods reach the model bucket, as the offline plan answers."""

    @abstractmethod
    def object_store(self, uri: RepositoryUri) -> Store:
        """The store behind a model repository URI of this cloud's scheme (`uri_scheme`), its SDK imported now."""


def cloud_names() -> tuple[str, ...]:
    """The registered clouds, in registration order."""
    return tuple(REGISTRY)


def cloud(name: str) -> Cloud:
    """The registered cloud `name`, its module imported now."""
    if name not in REGISTRY:
        raise ValueError(f"unknown cloud {name!r}; known: {', '.join(REGISTRY)}")
    found = importlib.import_module(REGISTRY[name]).CLOUD
    if not isinstance(found, Cloud) or found.name != name:
        raise TypeError(f"{REGISTRY[name]}.CLOUD is not the Cloud named {name!r}")
    return found


@contextmanager
def registered(name: str, module: str) -> Iterator[None]:
    """Register a cloud for the duration of a block (a test-only cloud); the registry is restored after it."""
    if name in REGISTRY:
        raise ValueError(f"cloud {name!r} is already registered")
    REGISTRY[name] = module
    try:
        yield
    finally:
        del REGISTRY[name]
