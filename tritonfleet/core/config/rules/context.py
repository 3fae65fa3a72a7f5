"""What every cross-field rule works with: the decoded config, the stack, its cloud's rules, and where problems go.

`CloudConfigRules` is the contract a cloud's rules module (tritonfleet/clouds/<cloud>/config_rules.py) fulfils; the
loader finds that module through the registry in tritonfleet/clouds, by cloud name, when it validates a stack.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from tritonfleet.core.catalog import Catalog
from tritonfleet.core.config.problems import Problem, nearest, rm_command, secret_set_command, set_command
from tritonfleet.core.config.schema import Cluster, GpuPool, ModelBucket
from tritonfleet.core.exposure import DeployPath


class CloudConfigRules(Protocol):
    """The rules and facts one cloud adds to the neutral ones. Each check reports through `ctx` and returns nothing."""

    CLOUD_ONLY_CLUSTER_KEYS: Mapping[str, str]  # cluster keys that mean something on this cloud only -> field name
    SERVICE_NAME: str  # how a refusal names this cloud's service ("applies to GKE only")
    REGIONS: tuple[str, ...]  # the cloud's regions (from its facts module)
    NODE_IMAGES: tuple[str, ...]  # values of cluster.gpuNodeImage on this cloud, the default first
    TLS_SOURCES: tuple[str, ...]  # access.tls sources (camelCase) this cloud supports, the suggested one last
    TLS_EXAMPLES: Mapping[str, str]  # an example value per TLS source, where one helps
    INGRESS_CLIENT_CIDRS: str  # how an Application load balancer's Ingress limits client networks ("" where it cannot)
    # TLS sources this cloud's Application load balancer cannot take while it carries gRPC (source -> why)
    APPLICATION_LB_GRPC_TLS_REFUSALS: Mapping[str, str]
    RESERVATION_EXAMPLE: str  # an example reservationId
    POOL_FALLBACK: bool  # whether a pool's pods may fall back to another pool (gpuPools[].fallbackPool)
    BUCKET_OWNER_KEY: str  # the config key naming the account or project default bucket names carry
    BUCKET_OWNER_FIELD: str  # its StackConfig field
    BUCKET_OWNER_EXAMPLE: str  # an example value of it

    def stack_zones(self, region: str, cluster: Cluster) -> list[str]: ...

    def check_stack(self, ctx: RuleContext) -> None: ...

    def check_cluster(self, ctx: RuleContext, cluster: Cluster) -> None: ...

    def check_purchase_option(self, ctx: RuleContext, pool: GpuPool, at: str) -> None: ...

    def check_mixed_pool(self, ctx: RuleContext, pool: GpuPool, at: str) -> None: ...

    def check_pool_labels(self, ctx: RuleContext, pool: GpuPool, at: str) -> None: ...

    def check_pool_zones(self, ctx: RuleContext, pool: GpuPool, at: str) -> None: ...

    def check_pool_image_pull(self, ctx: RuleContext, pool: GpuPool, at: str) -> None: ...

    def check_bucket(self, ctx: RuleContext, bucket: ModelBucket, at: str) -> None: ...

    def deploy_path(self, cluster: Cluster, environment: str) -> DeployPath:
        """How `cluster.deployFrom` reaches the API endpoint this cloud's cluster would have."""
        ...

    def pool_node_limit(self, ctx: RuleContext, zones: list[str]) -> tuple[int, str]:
        """The most nodes the cloud runs in a pool in `zones` (empty: the stack's), and why (for the message)."""
        ...

    def cluster_node_limit(self) -> tuple[int, str]:
        """The most nodes the cloud runs in one cluster, and why."""
        ...

    def node_local_ssd_gi(self, instance_type: str, region: str | None) -> int | None:
        """GiB of local SSD that back a node's ephemeral storage on this type in `region` (None when the region is
        wrong); None: the boot disk does."""
        ...


@dataclass
class RuleContext:
    data: Mapping[str, Any]  # the decoded config, as the user wrote it (it may not pass the schema)
    stack: str
    catalog: Catalog
    cloud: str | None = None  # None when the cloud key itself is wrong
    rules: CloudConfigRules | None = None  # the cloud's rules module
    region: str | None = None
    cluster: Cluster | None = None  # None when the cluster section does not parse
    stack_zones: list[str] = field(default_factory=list)  # the zones the cluster uses, when known
    problems: list[Problem] = field(default_factory=list)

    def add(self, key: str, value: Any, allowed: str, suggestion: Any = "<value>") -> None:
        """A problem fixed by setting `key` to `suggestion`."""
        self.problems.append(Problem(key, value, allowed, set_command(key, suggestion, self.stack)))

    def set_secret(self, key: str, value: Any, allowed: str) -> None:
        """A problem fixed by setting `key` as a Pulumi secret."""
        self.problems.append(Problem(key, value, allowed, secret_set_command(key, self.stack)))

    def remove(self, key: str, value: Any, allowed: str, fix_key: str | None = None) -> None:
        """A problem fixed by removing `fix_key` (default: `key`)."""
        self.problems.append(Problem(key, value, allowed, rm_command(fix_key or key, self.stack)))

    def new_name(self, name: str, seen: Collection[str], at: str, noun: str) -> bool:
        """Whether an item's `name` is new in its list (`seen`: the names before it); a repeat is a problem."""
        if name in seen:
            self.add(f"{at}.name", name, f"a {noun} name not used by another {noun}", f"{name}-2")
            return False
        return True


def with_meant_keys(model: type[BaseModel], item: dict[str, Any]) -> dict[str, Any]:
    """`item` with each misspelt key under the key it most likely meant (the schema reported the typo already), so a
    typo (maxNode) does not hide the section's other problems behind a missing required key."""
    keys = {field.alias or name for name, field in model.model_fields.items()}
    out = dict(item)
    for key in item:
        meant = nearest(key, keys) if key not in keys else None
        if meant is not None and meant not in out:
            out[meant] = out.pop(key)
    return out


def validate_section(model: type[BaseModel], item: Any) -> Any:
    """The section as a model for cross-field checks, with its bad or unknown keys dropped; None if that fails.

    Dropped keys were already reported by the schema, so the remaining rules can still run on the rest.
    """
    if not isinstance(item, dict):
        return None
    item = with_meant_keys(model, item)
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
    try:
        return model.model_validate({k: v for k, v in item.items() if k not in bad})
    except ValidationError:
        return None


def listed(data: Mapping[str, Any], key: str) -> list[Any]:
    """The list at `key`, or [] when it is absent or not a list (the schema reports that)."""
    value = data.get(key)
    return value if isinstance(value, list) else []
