"""Typed stack configuration: the schema every floor reads, and one error listing every problem.

The Pulumi engine hands a program its config as strings keyed `<namespace>:<key>` (objects and arrays as JSON
text). `load_stack_config` turns that mapping into a `StackConfig` or raises `ConfigError` whose message lists
every problem with the key, the bad value, what is allowed and the `pulumi config set` command that fixes it.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel, to_snake

from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.conventions import (
    CONFIG_NAMESPACE,
    GKE_NO_DEVICE_PLUGIN_LABEL,
    RESERVED_LABEL_DOMAINS,
    is_reserved_label,
    resource_name,
)

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,19}$"
NAME_RULE = "lower-case letters, digits and '-', starting with a letter, at most 20 characters"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class SystemNodes(_Section):
    instance_type: str | None = Field(None, description="a non-GPU instance/machine type for system pods")
    count: int = Field(2, ge=1, le=20, description="an integer from 1 to 20")


class Cluster(_Section):
    name: str | None = Field(None, pattern=r"^[a-z][a-z0-9-]{0,39}$", description="a cluster name (defaults to tf-<stack>)")
    kubernetes_version: str = Field(
        pins.KUBERNETES_VERSION, pattern=r"^1\.\d{2}$", description="a Kubernetes minor version such as 1.33"
    )
    zones: list[str] = Field(default_factory=list, description="availability zones of the region (AWS: at least two)")
    existing_vpc_id: str | None = Field(
        None, pattern=r"^vpc-[0-9a-f]{8,17}$", description="an existing VPC id (vpc-...) to reuse (AWS), or unset"
    )
    existing_vpc_cidr: str | None = Field(
        None,
        description="the IPv4 CIDR of existingVpcId, e.g. 10.20.0.0/16: load balancers send from it, so Triton's "
        "NetworkPolicies admit it (AWS; required with existingVpcId)",
    )
    existing_private_subnets: dict[str, str] = Field(
        default_factory=dict,
        description="zone -> private subnet id (subnet-...) of existingVpcId, at least two zones "
        "(AWS; required with existingVpcId)",
    )
    system_nodes: SystemNodes = Field(default_factory=SystemNodes, description="the non-GPU system node pool (an object)")
    admin_principals: list[str] = Field(
        default_factory=list,
        description="IAM role or user ARNs given cluster admin through EKS access entries (AWS; on GKE grant "
        "roles/container.admin in the project's IAM)",
    )
    gpu_node_image: Literal["al2023", "bottlerocket", "COS_CONTAINERD", "UBUNTU_CONTAINERD"] | None = Field(
        None,
        description="the GPU node image. AWS: al2023 (EKS AL2023 NVIDIA AMI, default) or bottlerocket (Bottlerocket "
        "NVIDIA, ships its own device plugin). GCP: COS_CONTAINERD (default with gke-managed drivers) or "
        "UBUNTU_CONTAINERD (default with operator drivers)",
    )
    ami_release_version: str | None = Field(
        None,
        description="the EKS AMI release version of every node group, e.g. 1.33.5-20251120 for al2023 "
        "(default: the one pinned for the Kubernetes version); AWS only",
    )
    # GCP only (a Problem on AWS). None means the GCP default named in the description.
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] | None = Field(
        None, description="GCP: the GKE release channel, RAPID, REGULAR or STABLE (default REGULAR)"
    )
    gpu_driver: Literal["gke-managed", "operator"] | None = Field(
        None,
        description="GCP: who installs the NVIDIA driver on GPU nodes: gke-managed (GKE installs the LATEST driver and "
        "runs its device plugin; the GPU Operator adds no driver) or operator (the GPU Operator installs the driver "
        "and device plugin; needs gpuNodeImage UBUNTU_CONTAINERD). Default gke-managed",
    )

    @property
    def eks_gpu_node_image(self) -> str:
        """The AWS node image (a GKE value, reported as a Problem on AWS, falls back to the default here)."""
        return self.gpu_node_image if self.gpu_node_image in ("al2023", "bottlerocket") else "al2023"

    @property
    def gke_gpu_driver(self) -> str:
        return self.gpu_driver or "gke-managed"

    @property
    def gke_gpu_node_image(self) -> str:
        return self.gpu_node_image or ("UBUNTU_CONTAINERD" if self.gke_gpu_driver == "operator" else "COS_CONTAINERD")

    @property
    def gke_release_channel(self) -> str:
        return self.release_channel or "REGULAR"


# Cluster keys that only mean something on one cloud (config key -> field name).
GCP_ONLY_CLUSTER_KEYS = {"releaseChannel": "release_channel", "gpuDriver": "gpu_driver"}
AWS_ONLY_CLUSTER_KEYS = {
    "adminPrincipals": "admin_principals",
    "existingVpcCidr": "existing_vpc_cidr",
    "amiReleaseVersion": "ami_release_version",
    "existingPrivateSubnets": "existing_private_subnets",
    "existingVpcId": "existing_vpc_id",
}
NODE_IMAGES = {"aws": ("al2023", "bottlerocket"), "gcp": ("COS_CONTAINERD", "UBUNTU_CONTAINERD")}


class GpuPool(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    gpu: str = Field(description="a GPU from the catalog")
    instance_type: str | None = Field(None, description="an instance/machine type that carries the pool's GPU")
    min_nodes: int = Field(0, ge=0, description="an integer >= 0 and <= maxNodes")
    max_nodes: int = Field(ge=1, description="an integer >= 1")
    capacity: Literal["mixed", "capacity-block", "reservation", "flex-start"] = Field(
        "mixed", description="mixed (on-demand base + spot share), capacity-block, reservation or flex-start"
    )
    on_demand_base: int = Field(0, ge=0, description="on-demand nodes before any spot, 0..maxNodes (mixed pools only)")
    spot_share: float = Field(0.0, ge=0.0, le=1.0, description="share of nodes above the base that are spot, 0..1")
    reservation_id: str | None = Field(
        None, description="the capacity block / reservation id (capacity-block and reservation pools only)"
    )
    zones: list[str] = Field(
        default_factory=list,
        description="zones for this pool's nodes, a subset of the cluster's zones (default: all of them); an AWS "
        "capacity-block pool needs exactly its reservation's zone; on GCP e.g. the zone of its reservation or the "
        "zones that offer its machine type",
    )
    enabled: bool = Field(True, description="true or false (an opt-in pool is declared with false)")
    disk_gi: int = Field(200, ge=100, le=16384, description="root disk GiB, at least 100 (Triton images are large)")
    node_labels: dict[str, str] = Field(
        default_factory=dict,
        description="extra Kubernetes labels on the pool's nodes as key: value "
        "(no keys under kubernetes.io, k8s.io or tritonfleet.io)",
    )


class ModelBucket(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    bucket_name: str | None = Field(
        None,
        description="the bucket's own name (default tf-<stack>-<name>); S3 and GCS bucket names are global, so set a "
        "name of your organisation's when the default is taken",
    )
    noncurrent_version_days: int = Field(30, ge=1, le=3650, description="days to keep old object versions, 1..3650")
    kms_key_id: str | None = Field(None, description="a KMS key ARN (AWS) / Cloud KMS key name (GCP), or unset")


HOSTNAME_PATTERN = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,251}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$"
LABEL_KEY_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$"


class Tls(_Section):
    """Where the public endpoint's certificate comes from: exactly one of these."""

    certificate_arn: str | None = Field(
        None,
        pattern=r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/[A-Za-z0-9-]+$",
        description="AWS: an ACM certificate ARN (arn:aws:acm:REGION:ACCOUNT:certificate/ID) that covers the hostname",
    )
    pre_shared_cert: str | None = Field(
        None, pattern=DNS_LABEL_PATTERN, description="GCP: the name of a Compute Engine SSL certificate in the project"
    )
    secret_name: str | None = Field(
        None, pattern=DNS_SUBDOMAIN_PATTERN, description="GCP: an existing kubernetes.io/tls Secret in the deployment's namespace"
    )
    cert_manager_issuer: str | None = Field(
        None, pattern=DNS_SUBDOMAIN_PATTERN, description="GCP: a cert-manager ClusterIssuer that issues the certificate"
    )

    @property
    def sources(self) -> list[str]:
        """The camelCase names of the certificate sources that are set."""
        return [to_camel(name) for name in type(self).model_fields if getattr(self, name) is not None]

    def value_of(self, source: str) -> str | None:
        """The value of a source given by its camelCase name."""
        return getattr(self, to_snake(source))


class Access(_Section):
    exposure: Literal["cluster", "internal", "public"] = Field(
        "cluster",
        description="cluster (ClusterIP only), internal (a cloud-internal load balancer) or public (an ingress with TLS)",
    )
    hostname: str | None = Field(
        None,
        pattern=HOSTNAME_PATTERN,
        max_length=253,
        description="public only: the DNS name clients use, lower-case, such as llm.example.com",
    )
    tls: Tls | None = Field(None, description="public only: the certificate (an object with one source)")
    restrict_model_control: bool = Field(
        True,
        description="true (default): model-repository, model-config, shared-memory, trace and logging need the admin key",
    )
    restrict_inference: bool = Field(
        False, description="true: inference needs the inference key (required when exposure is public)"
    )
    client_namespaces: list[str] | None = Field(
        None,
        description="namespaces whose pods may call ports 8000/8001 (unset: the deployment's own namespace only)",
    )
    client_pod_labels: dict[str, str] = Field(
        default_factory=dict, description="labels a client pod must carry (with clientNamespaces: in those namespaces)"
    )
    client_cidrs: list[str] = Field(
        default_factory=list, description="internal/public only: extra source CIDRs allowed through the load balancer"
    )


class TritonDeployment(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    pool: str = Field(description="the name of a GPU pool of this stack")
    bucket: str | None = Field(None, description="the name of a model bucket of this stack (default: the first)")
    model_prefix: str = Field("", pattern=r"^([A-Za-z0-9._-]+/)*$", description="a folder prefix ending in '/', or ''")
    gpus_per_replica: int = Field(1, ge=1, le=8, description="GPUs per Triton pod, 1..GPUs per node")
    min_replicas: int = Field(1, ge=1, description="an integer >= 1 and <= maxReplicas")
    max_replicas: int = Field(1, ge=1, description="an integer >= minReplicas")
    image_tag: str = Field(
        pins.TRITON_IMAGE_TAG, pattern=r"^\d{2}\.\d{2}-[a-z0-9-]+$", description="a pinned NGC tag like 26.07-py3"
    )
    model_control_mode: Literal["none", "poll", "explicit"] = Field("none", description="none, poll or explicit")
    model_load_seconds: int = Field(600, ge=10, le=7200, description="worst-case model load time in seconds, 10..7200")
    throughput_per_replica: float | None = Field(None, gt=0, description="measured inferences/second per replica, > 0")
    namespace: str = Field("triton", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", description="a Kubernetes namespace name")
    access: Access = Field(default_factory=Access, description="who can reach the deployment and how (an object)")


class AlertReceiver(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    kind: Literal["webhook", "slack", "pagerduty"] = Field(description="webhook, slack or pagerduty")
    url: str | None = Field(
        None, min_length=1, description="webhook and slack: the URL alerts are posted to, set as a Pulumi secret"
    )
    routing_key: str | None = Field(
        None, min_length=1, description="pagerduty: the Events API v2 integration (routing) key, set as a Pulumi secret"
    )
    channel: str | None = Field(
        None, pattern=r"^#?[a-z0-9._-]{1,80}$", description="slack: a channel such as #gpu-alerts, or unset"
    )
    severities: list[Literal["critical", "warning", "info"]] = Field(
        ["critical", "warning"], min_length=1, description="the alert severities sent here: critical, warning and/or info"
    )


class Monitoring(_Section):
    enabled: bool = Field(True, description="true or false")
    retention_days: int = Field(15, ge=1, le=365, description="Prometheus retention in days, 1..365")
    storage_gi: int = Field(50, ge=10, le=10000, description="Prometheus volume GiB, 10..10000")
    storage_class: str | None = Field(
        None,
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        description="a StorageClass name for Prometheus' volume, or unset for the cluster default",
    )
    alert_receivers: list[AlertReceiver] = Field(
        default_factory=list, description="Alertmanager receivers (a list; none by default: alerts stay in Alertmanager's UI)"
    )


class Budget(_Section):
    monthly_usd: float = Field(ge=0, description="a monthly budget in USD, >= 0")
    warn_fraction: float = Field(0.8, gt=0, le=1, description="warn above this fraction of the budget, in (0, 1]")
    basis: Literal["floor", "ceiling"] = Field("ceiling", description="floor (minimum nodes) or ceiling (maximum nodes)")


class StackConfig(_Section):
    environment: Literal["dev", "staging", "prod"] = Field(description="dev, staging or prod")
    cloud: Literal["aws", "gcp"] = Field(description="aws or gcp")
    region: str = Field(pattern=r"^[a-z]+(-[a-z]+)+-?\d+$", description="a region such as us-east-1 or us-central1")
    gcp_project: str | None = Field(None, pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$", description="a GCP project id")
    cluster: Cluster = Field(default_factory=Cluster, description="cluster settings (an object)")
    gpu_pools: list[GpuPool] = Field(min_length=1, description="a list of GPU pools")
    model_buckets: list[ModelBucket] = Field(min_length=1, description="a list of model buckets")
    triton_deployments: list[TritonDeployment] = Field(default_factory=list, description="a list of Triton deployments")
    monitoring: Monitoring = Field(default_factory=Monitoring, description="monitoring settings (an object)")
    budget: Budget = Field(description="the monthly budget (an object with monthlyUsd)")
    gpu_limit: int = Field(ge=0, description="the most GPUs this stack may run at once, >= 0")
    protect: bool | None = Field(None, description="true or false (default: true in prod)")
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="cost-allocation tags (AWS) / labels (GCP) as key: value; on GCP lower-case letters, digits, '_' and "
        "'-', at most 63 characters, keys starting with a letter",
    )

    # Filled in by load_stack_config from the stack's name, not from a config key.
    stack: str = Field("", exclude=True)

    @property
    def protected(self) -> bool:
        return self.environment == "prod" if self.protect is None else self.protect

    @property
    def cluster_name(self) -> str:
        return self.cluster.name or f"tf-{self.stack}"

    def pool(self, name: str) -> GpuPool:
        return next(p for p in self.gpu_pools if p.name == name)

    def bucket_for(self, deployment: TritonDeployment) -> ModelBucket:
        name = deployment.bucket or self.model_buckets[0].name
        return next(b for b in self.model_buckets if b.name == name)

    def instance_type(self, pool: GpuPool) -> InstanceType:
        """The catalog entry of a validated pool (its explicit type, or the catalog default for its GPU)."""
        catalog = load_catalog()
        found = catalog.find(self.cloud, pool.instance_type) if pool.instance_type else catalog.default_type(self.cloud, pool.gpu)
        assert found is not None, "validated configs always resolve"
        return found

    @property
    def enabled_pools(self) -> list[GpuPool]:
        return [p for p in self.gpu_pools if p.enabled]


def aws_zones(region: str, cluster: Cluster) -> list[str]:
    """The zones an AWS stack uses: the configured ones, else those of the existing subnets, else <region>a and b."""
    return list(cluster.zones or cluster.existing_private_subnets or [f"{region}a", f"{region}b"])


def pool_zones(config: StackConfig, pool: GpuPool) -> list[str]:
    """The zones a pool's nodes may run in (AWS): the pool's own subset, else every zone of the cluster."""
    return list(pool.zones) or aws_zones(config.region, config.cluster)


# Every project config key, as written in Pulumi.yaml and the stack files.
CONFIG_KEYS = sorted(field.alias or name for name, field in StackConfig.model_fields.items() if name != "stack")


@dataclass(frozen=True)
class Problem:
    key: str  # path below the namespace, e.g. gpuPools[0].gpu
    value: Any
    allowed: str
    fix: str

    def render(self, index: int) -> str:
        shown = "(missing)" if self.value is _MISSING else json.dumps(self.value, default=str)
        return f"  {index}. {CONFIG_NAMESPACE}:{self.key} = {shown}\n     allowed: {self.allowed}\n     fix: {self.fix}"


class ConfigError(Exception):
    """A user's configuration mistake. Its message is the whole report; never show a traceback for it."""

    def __init__(self, stack: str, problems: list[Problem]):
        self.stack = stack
        self.problems = problems
        count = f"{len(problems)} configuration problem{'s' if len(problems) != 1 else ''}"
        body = "\n".join(p.render(i) for i, p in enumerate(problems, 1))
        super().__init__(f"stack '{stack}' has {count}:\n{body}")


_MISSING = object()


def _set_command(key: str, value: Any, stack: str) -> str:
    path = "--path " if ("." in key or "[" in key) else ""
    shown = value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, str) and (not value or re.search(r"[^A-Za-z0-9._:/-]", value)):
        shown = f"'{value}'"
    return f"pulumi config set {path}'{CONFIG_NAMESPACE}:{key}' {shown} --stack {stack}"


def _rm_command(key: str, stack: str) -> str:
    path = "--path " if ("." in key or "[" in key) else ""
    return f"pulumi config rm {path}'{CONFIG_NAMESPACE}:{key}' --stack {stack}"


def _key(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _field_for(loc: tuple[Any, ...]):
    """The pydantic FieldInfo a location points at, or None."""
    model: Any = StackConfig
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or not hasattr(model, "model_fields"):
            return None
        info = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if info is None:
            return None
        annotation = info.annotation
        args = getattr(annotation, "__args__", ())
        model = next((a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return info


def _lookup(data: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return data


def _from_pydantic(error: dict[str, Any], data: Mapping[str, Any], stack: str) -> Problem:
    loc = tuple(error["loc"])
    key = _key(loc)
    value = _lookup(data, loc)
    if error["type"] == "extra_forbidden":
        return Problem(key, value, "no such key here; see the configuration reference in the README", _rm_command(key, stack))
    info = _field_for(loc)
    allowed = info.description if info and info.description else error["msg"]
    if error["type"] not in ("missing",) and error["msg"] not in allowed:
        allowed = f"{allowed} ({error['msg'].lower()})"
    suggestion: Any = "<value>"
    if info is not None and error["type"] == "literal_error":
        suggestion = str(error["ctx"]["expected"]).split(" or ")[0].split(",")[0].strip("' ")
    elif info is not None and not info.is_required() and info.default is not None and not callable(info.default):
        suggestion = info.default
    return Problem(key, value, allowed, _set_command(key, suggestion, stack))


def _decode(raw: Mapping[str, Any], stack: str) -> tuple[dict[str, Any], list[Problem]]:
    """Pick this project's keys out of the engine's config and decode JSON text."""
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    known = set(CONFIG_KEYS)
    for full_key, value in sorted(raw.items()):
        namespace, _, key = full_key.partition(":")
        if namespace != CONFIG_NAMESPACE:
            continue
        if key not in known:
            problems.append(Problem(key, value, "one of " + ", ".join(sorted(known)), _rm_command(key, stack)))
            continue
        if isinstance(value, str) and value[:1] in "[{":
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                problems.append(Problem(key, value, f"valid YAML/JSON ({exc.msg})", _set_command(key, "<value>", stack)))
                continue
        data[key] = value
    return data, problems


def _validate_section(model: type[BaseModel], item: Any) -> Any:
    """The section as a model for cross-field checks, with its bad or unknown keys dropped; None if that fails.

    Dropped keys were already reported by the schema, so the remaining rules can still run on the rest.
    """
    if not isinstance(item, dict):
        return None
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
    try:
        return model.model_validate({k: v for k, v in item.items() if k not in bad})
    except ValidationError:
        return None


def _cross_field_problems(data: Mapping[str, Any], stack: str) -> list[Problem]:
    """Rules that span fields or need the catalog. Runs on whatever parts of the config parse on their own."""
    problems: list[Problem] = []
    catalog = load_catalog()
    cloud = data.get("cloud") if data.get("cloud") in ("aws", "gcp") else None

    def add(key: str, value: Any, allowed: str, suggestion: Any = "<value>") -> None:
        problems.append(Problem(key, value, allowed, _set_command(key, suggestion, stack)))

    def remove(key: str, value: Any, allowed: str) -> None:
        problems.append(Problem(key, value, allowed, _rm_command(key, stack)))

    if cloud == "gcp" and not data.get("gcpProject"):
        add("gcpProject", _MISSING, "the GCP project id that hosts the cluster (required when cloud is gcp)", "my-project-id")
    if cloud == "gcp" and isinstance(data.get("tags"), Mapping):
        _check_gcp_labels(data["tags"], stack, problems)
    region = data.get("region")
    cluster = _validate_section(Cluster, data.get("cluster", {}))
    if cloud == "aws" and cluster is not None and isinstance(region, str):
        _aws_cluster_problems(cluster, region, add)
    if cluster is not None and cloud is not None:
        other_cloud_keys = GCP_ONLY_CLUSTER_KEYS if cloud == "aws" else AWS_ONLY_CLUSTER_KEYS
        for key, field_name in other_cloud_keys.items():
            value = getattr(cluster, field_name)
            if value:
                other = "GKE" if cloud == "aws" else "AWS"
                problems.append(
                    Problem(f"cluster.{key}", value, f"unset: it applies to {other} only", _rm_command(f"cluster.{key}", stack))
                )
        if cluster.gpu_node_image is not None and cluster.gpu_node_image not in NODE_IMAGES[cloud]:
            add(
                "cluster.gpuNodeImage",
                cluster.gpu_node_image,
                f"on {cloud}: " + " or ".join(NODE_IMAGES[cloud]),
                NODE_IMAGES[cloud][0],
            )
    if cloud == "gcp" and cluster is not None:
        if isinstance(region, str):
            for i, zone in enumerate(cluster.zones):
                if not zone.startswith(f"{region}-"):
                    add(f"cluster.zones[{i}]", zone, f"a zone of {region}, such as {region}-a", f"{region}-{'abc'[i % 3]}")
        if cluster.gke_gpu_driver == "operator" and cluster.gke_gpu_node_image != "UBUNTU_CONTAINERD":
            add(
                "cluster.gpuNodeImage",
                cluster.gpu_node_image,
                "UBUNTU_CONTAINERD: the GPU Operator's driver container does not run on Container-Optimized OS. "
                "The two valid choices are gpuDriver gke-managed (any image; GKE installs the driver) or "
                "gpuDriver operator with gpuNodeImage UBUNTU_CONTAINERD",
                "UBUNTU_CONTAINERD",
            )
    stack_zones: list[str] = []
    if cluster is not None and isinstance(region, str):
        stack_zones = aws_zones(region, cluster) if cloud == "aws" else list(cluster.zones)

    raw_pools = data.get("gpuPools") if isinstance(data.get("gpuPools"), list) else []
    pools: dict[str, tuple[GpuPool, InstanceType | None]] = {}
    for i, raw_pool in enumerate(raw_pools):
        pool = _validate_section(GpuPool, raw_pool)
        if pool is None:
            continue
        at = f"gpuPools[{i}]"
        if pool.name in pools:
            add(f"{at}.name", pool.name, "a pool name not used by another pool", f"{pool.name}-2")
            continue
        if pool.min_nodes > pool.max_nodes:
            add(f"{at}.minNodes", pool.min_nodes, f"<= maxNodes ({pool.max_nodes})", pool.max_nodes)
        if pool.capacity == "mixed" and pool.on_demand_base > pool.max_nodes:
            add(f"{at}.onDemandBase", pool.on_demand_base, f"<= maxNodes ({pool.max_nodes})", pool.max_nodes)
        itype = _check_pool(pool, at, cloud, catalog, add, remove) if cloud else None
        _check_pool_labels(pool, at, cloud, cluster, stack, problems)
        _check_pool_zones(pool, at, cloud, region, stack_zones, add)
        pools[pool.name] = (pool, itype)

    bucket_names: list[str] = []
    for i, raw_bucket in enumerate(data.get("modelBuckets") if isinstance(data.get("modelBuckets"), list) else []):
        bucket = _validate_section(ModelBucket, raw_bucket)
        if bucket is None:
            continue
        if bucket.name in bucket_names:
            add(f"modelBuckets[{i}].name", bucket.name, "a bucket name not used by another bucket", f"{bucket.name}-2")
        bucket_names.append(bucket.name)
        _check_bucket(bucket, f"modelBuckets[{i}]", cloud, stack, add)

    seen: set[str] = set()
    raw_deployments = data.get("tritonDeployments") if isinstance(data.get("tritonDeployments"), list) else []
    for i, raw_deployment in enumerate(raw_deployments):
        deployment = _validate_section(TritonDeployment, raw_deployment)
        if deployment is None:
            continue
        at = f"tritonDeployments[{i}]"
        if deployment.name in seen:
            add(f"{at}.name", deployment.name, "a deployment name not used by another deployment", f"{deployment.name}-2")
        seen.add(deployment.name)
        if deployment.min_replicas > deployment.max_replicas:
            add(
                f"{at}.maxReplicas",
                deployment.max_replicas,
                f">= minReplicas ({deployment.min_replicas})",
                deployment.min_replicas,
            )
        if deployment.bucket is not None and bucket_names and deployment.bucket not in bucket_names:
            add(
                f"{at}.bucket", deployment.bucket, "one of the stack's model buckets: " + ", ".join(bucket_names), bucket_names[0]
            )
        raw_access = raw_deployment.get("access", {})
        access = _validate_section(Access, raw_access)
        if access is not None:
            given = set(raw_access) if isinstance(raw_access, dict) else set()
            _check_access(access, given, deployment.namespace, f"{at}.access", cloud, add, remove)
        if deployment.pool not in pools:
            names = ", ".join(pools) or "(no valid pools)"
            add(f"{at}.pool", deployment.pool, f"one of the stack's GPU pools: {names}", next(iter(pools), "<pool>"))
            continue
        pool, itype = pools[deployment.pool]
        if not pool.enabled:
            add(
                f"{at}.pool",
                deployment.pool,
                f"an enabled pool; pool '{pool.name}' is disabled",
                next((n for n, (p, _) in pools.items() if p.enabled), "<pool>"),
            )
        if itype is not None and deployment.gpus_per_replica > itype.gpu_count:
            add(
                f"{at}.gpusPerReplica",
                deployment.gpus_per_replica,
                f"at most {itype.gpu_count}: a replica must fit on one {itype.name} node of pool '{pool.name}'",
                itype.gpu_count,
            )
    return problems


GCP_LABEL_RULE = (
    "a GCP label (tags become resource labels on GCP): keys start with a lower-case letter, keys and values have at "
    "most 63 lower-case letters, digits, '_' or '-'"
)


def _gcp_label_text(text: str, key: bool) -> bool:
    """GCP's rule for a label key or value (lower-case letters, including international ones, digits, _ and -)."""
    if len(text) > 63 or (key and not (text and text[0].isalpha() and text[0] == text[0].lower())):
        return False
    return all(c.isdigit() or c in "_-" or (c.isalpha() and c == c.lower()) for c in text)


def _check_gcp_labels(tags: Mapping[Any, Any], stack: str, problems: list[Problem]) -> None:
    """GKE, node pools and buckets take the stack's tags as labels; the API rejects what AWS tags allow."""
    for key, value in tags.items():
        if not _gcp_label_text(str(key), key=True):
            problems.append(Problem(f"tags.{key}", value, f"{GCP_LABEL_RULE} (key {key!r})", _rm_command(f"tags.{key}", stack)))
        elif not _gcp_label_text(str(value), key=False):
            suggestion = re.sub(r"[^a-z0-9_-]", "-", str(value).lower())[:63]
            problems.append(Problem(f"tags.{key}", value, GCP_LABEL_RULE, _set_command(f"tags.{key}", suggestion, stack)))


def _check_pool_labels(pool: GpuPool, at: str, cloud, cluster: Cluster | None, stack: str, problems) -> None:
    """Node labels of a pool: reserved label keys, GKE's device-plugin switch."""
    for key in pool.node_labels:
        if is_reserved_label(key):
            problems.append(
                Problem(
                    f"{at}.nodeLabels",
                    pool.node_labels,
                    "label keys outside the domains "
                    + ", ".join(RESERVED_LABEL_DOMAINS)
                    + f" and their subdomains ({key} is reserved)",
                    _rm_command(f"{at}.nodeLabels.{key}", stack),
                )
            )
    if GKE_NO_DEVICE_PLUGIN_LABEL in pool.node_labels and cloud == "gcp":
        driver = cluster.gke_gpu_driver if cluster is not None else "gke-managed"
        if driver == "gke-managed":
            problems.append(
                Problem(
                    f"{at}.nodeLabels",
                    pool.node_labels,
                    f"no {GKE_NO_DEVICE_PLUGIN_LABEL} label while GKE installs the driver: it switches off GKE's device "
                    "plugin, so no pod can request nvidia.com/gpu. The two valid choices are gpuDriver gke-managed "
                    "without this label, or gpuDriver operator on UBUNTU_CONTAINERD (tritonfleet then sets the label itself)",
                    _rm_command(f"{at}.nodeLabels.{GKE_NO_DEVICE_PLUGIN_LABEL}", stack),
                )
            )


def _aws_cluster_problems(cluster: Cluster, region: str, add) -> None:
    """AWS rules for zones, an existing VPC, admin principals and the pinned node image."""
    from tritonfleet.core.regions import AWS_ZONE_COUNT

    for i, zone in enumerate(cluster.zones):
        if not re.fullmatch(rf"{re.escape(region)}[a-z]", zone):
            allowed = f"a zone of {region}: {region} followed by one letter, such as {region}a"
            add(f"cluster.zones[{i}]", zone, allowed, f"{region}{'abc'[i % 3]}")
        elif zone in cluster.zones[:i]:
            add(f"cluster.zones[{i}]", zone, "a zone not listed twice", f"{region}{'abc'[i % 3]}")
    if 0 < len(cluster.zones) < 2:
        add("cluster.zones", cluster.zones, "at least two zones (EKS needs subnets in two zones)", [f"{region}a", f"{region}b"])
    zone_count = AWS_ZONE_COUNT.get(region)
    if zone_count is not None and len(set(cluster.zones)) > zone_count:
        add(
            "cluster.zones",
            cluster.zones,
            f"at most {zone_count} zones: {region} has {zone_count} availability zones",
            cluster.zones[:zone_count],
        )
    if cluster.existing_vpc_id and cluster.existing_vpc_cidr is None:
        add("cluster.existingVpcCidr", _MISSING, "the IPv4 CIDR of existingVpcId (see `aws ec2 describe-vpcs`)", "10.0.0.0/16")
    if cluster.existing_vpc_cidr is not None:
        try:
            ipaddress.IPv4Network(cluster.existing_vpc_cidr)
        except ValueError:
            add(
                "cluster.existingVpcCidr",
                cluster.existing_vpc_cidr,
                "an IPv4 network in CIDR form, such as 10.0.0.0/16",
                "10.0.0.0/16",
            )
        if not cluster.existing_vpc_id:
            add("cluster.existingVpcId", _MISSING, "the VPC id the existingVpcCidr belongs to", "vpc-0123456789abcdef0")
    subnets = cluster.existing_private_subnets
    if cluster.existing_vpc_id and len(subnets) < 2:
        add(
            "cluster.existingPrivateSubnets",
            subnets,
            "a map of at least two zones to private subnet ids of existingVpcId (EKS needs subnets in two zones)",
            {f"{region}a": "subnet-0123456789abcdef0", f"{region}b": "subnet-0123456789abcdef1"},
        )
    if subnets and not cluster.existing_vpc_id:
        add("cluster.existingVpcId", _MISSING, "the VPC id the existingPrivateSubnets belong to", "vpc-0123456789abcdef0")
    for zone, subnet in subnets.items():
        if not re.fullmatch(rf"{re.escape(region)}[a-z]", zone):
            add(f"cluster.existingPrivateSubnets.{zone}", subnet, f"keys are zones of {region}, such as {region}a", subnet)
        if not re.fullmatch(r"subnet-[0-9a-f]{8,17}", subnet):
            example = "subnet-0123456789abcdef0"
            add(f"cluster.existingPrivateSubnets.{zone}", subnet, f"a subnet id such as {example}", example)
    if subnets and cluster.zones and set(subnets) != set(cluster.zones):
        allowed = "the zones of existingPrivateSubnets (or leave zones unset): " + ", ".join(subnets)
        add("cluster.zones", cluster.zones, allowed, list(subnets))
    for i, principal in enumerate(cluster.admin_principals):
        if not re.fullmatch(r"arn:aws(-[a-z]+)*:iam::\d{12}:(role|user)/[\w+=,.@/-]+", principal):
            allowed = "an IAM role or user ARN, arn:aws:iam::<12-digit account>:role/<name>"
            add(f"cluster.adminPrincipals[{i}]", principal, allowed, "arn:aws:iam::123456789012:role/platform-admin")
    release, image, version = cluster.ami_release_version, cluster.eks_gpu_node_image, cluster.kubernetes_version
    if release is None:
        if pins.eks_ami_release(image, version) is None:
            where = (
                f"`aws ssm get-parameter --name /aws/service/bottlerocket/aws-k8s-{version}-nvidia/x86_64/latest/image_version`"
                if image == "bottlerocket"
                else "the amazon-eks-ami releases page"
            )
            add(
                "cluster.amiReleaseVersion",
                _MISSING,
                f"an EKS {image} AMI release for Kubernetes {version} (none is pinned for it); see {where}",
            )
    elif not re.fullmatch(pins.EKS_AMI_RELEASE_PATTERN[image].format(k8s=re.escape(version)), release):
        example = pins.eks_ami_release(image, version) or "<release>"
        add(
            "cluster.amiReleaseVersion",
            release,
            f"a {image} release for Kubernetes {version}, like "
            + ("1.33.5-20251120 (<k8s version>.<patch>-<date>)" if image == "al2023" else "1.42.0-a1b2c3d4"),
            example,
        )


def _check_pool_zones(pool: GpuPool, at: str, cloud: str | None, region, stack_zones: list[str], add) -> None:
    for i, zone in enumerate(pool.zones):
        if stack_zones and zone not in stack_zones:
            add(f"{at}.zones[{i}]", zone, "one of the cluster's zones: " + ", ".join(stack_zones), stack_zones[0])
        elif not stack_zones and cloud == "gcp" and isinstance(region, str) and not zone.startswith(f"{region}-"):
            add(f"{at}.zones[{i}]", zone, f"a zone of {region}, such as {region}-b", f"{region}-b")
    if cloud == "aws" and pool.capacity == "capacity-block" and len(pool.zones) != 1:
        add(
            f"{at}.zones",
            pool.zones or _MISSING,
            "exactly one zone: the availability zone of the capacity block (its nodes can only launch there)",
            stack_zones[:1] or ["<zone>"],
        )


BUCKET_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$"  # what both S3 and GCS accept (no dots)
KMS_KEY_PATTERN = {
    "aws": r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/[A-Za-z0-9/_-]+$",
    "gcp": r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/locations/[a-z0-9-]+/keyRings/[A-Za-z0-9_-]+/cryptoKeys/[A-Za-z0-9_-]+$",
}
KMS_KEY_EXAMPLE = {
    "aws": "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "gcp": "projects/my-project/locations/us-central1/keyRings/models/cryptoKeys/models",
}


def physical_bucket_name(bucket: ModelBucket, stack: str) -> str:
    """The bucket's name in the cloud: its bucketName, or the deterministic tf-<stack>-<name>."""
    return bucket.bucket_name or resource_name(stack, bucket.name)


def _check_bucket(bucket: ModelBucket, at: str, cloud: str | None, stack: str, add) -> None:
    physical = physical_bucket_name(bucket, stack)
    if not re.match(BUCKET_NAME_PATTERN, physical) or "google" in physical:
        key, value, example = (f"{at}.bucketName", bucket.bucket_name, "acme-ml-models") if bucket.bucket_name else (f"{at}.name", bucket.name, "models")
        add(
            key,
            value,
            f"a name that makes the bucket name '{physical}' valid on S3 and GCS: 3..63 lower-case letters, digits and '-',"
            " without 'google'" + ("" if bucket.bucket_name else " (the stack name is part of it)"),
            example,
        )
    if cloud and bucket.kms_key_id and not re.match(KMS_KEY_PATTERN[cloud], bucket.kms_key_id):
        kind = "a KMS key or alias ARN" if cloud == "aws" else "a Cloud KMS key name"
        add(f"{at}.kmsKeyId", bucket.kms_key_id, f"{kind} such as {KMS_KEY_EXAMPLE[cloud]}, or unset", KMS_KEY_EXAMPLE[cloud])


TLS_SOURCES = {"aws": ("certificateArn",), "gcp": ("preSharedCert", "secretName", "certManagerIssuer")}
TLS_EXAMPLES = {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/<id>", "certManagerIssuer": "letsencrypt"}


def _check_access(access: Access, given: set[str], namespace: str, at: str, cloud: str | None, add, remove) -> None:
    """Exposure rules: public needs a hostname, TLS and keys; selectors must select someone; cloud-specific TLS.

    `given` holds the keys the user wrote: one the schema already refused is not reported again as missing.
    """
    public = access.exposure == "public"
    tls_sources = TLS_SOURCES.get(cloud or "", TLS_SOURCES["aws"] + TLS_SOURCES["gcp"])
    if public:
        if access.hostname is None and "hostname" not in given:
            add(
                f"{at}.hostname",
                _MISSING,
                "the DNS name of the public endpoint (required when exposure is public)",
                "llm.example.com",
            )
        if (access.tls is None and "tls" not in given) or (access.tls is not None and not access.tls.sources):
            source = tls_sources[-1]
            add(
                f"{at}.tls.{source}",
                _MISSING,
                "a certificate for the public endpoint (required when exposure is public): one of " + ", ".join(tls_sources),
                TLS_EXAMPLES.get(source, "<name>"),
            )
        if not access.restrict_inference:
            add(
                f"{at}.restrictInference",
                False,
                "true when exposure is public: clients must send the inference key (authentication)",
                True,
            )
        if not access.restrict_model_control:
            add(
                f"{at}.restrictModelControl",
                False,
                "true when exposure is public: anyone on the internet could load and unload models",
                True,
            )
    else:
        for key, value in (("hostname", access.hostname), ("tls", access.tls)):
            if value is not None:
                shown = value if isinstance(value, str) else value.model_dump(by_alias=True, exclude_none=True)
                remove(f"{at}.{key}", shown, f"only with exposure public (exposure is {access.exposure}); remove it")
        if access.client_cidrs and access.exposure == "cluster":
            remove(
                f"{at}.clientCidrs",
                access.client_cidrs,
                "only with exposure internal or public (in-cluster clients are selected by namespace and labels)",
            )
    if access.tls is not None:
        sources = access.tls.sources
        if len(sources) > 1:
            add(
                f"{at}.tls",
                access.tls.model_dump(by_alias=True, exclude_none=True),
                "exactly one certificate source, not " + " and ".join(sources),
                "<one source>",
            )
        for source in sources:
            if source not in tls_sources:
                remove(
                    f"{at}.tls.{source}",
                    access.tls.value_of(source),
                    f"a certificate source {cloud} supports: " + ", ".join(tls_sources),
                )
    if access.client_namespaces is not None:
        if not access.client_namespaces:
            add(
                f"{at}.clientNamespaces",
                [],
                f"at least one namespace: an empty list selects no client (unset it to allow '{namespace}' only)",
                [namespace],
            )
        for i, name in enumerate(access.client_namespaces):
            if not re.match(DNS_LABEL_PATTERN, name):
                add(f"{at}.clientNamespaces[{i}]", name, "a Kubernetes namespace name (lower-case DNS label)", namespace)
    for key, value in access.client_pod_labels.items():
        if not re.match(LABEL_KEY_PATTERN, key) or len(key) > 317:
            add(
                f"{at}.clientPodLabels",
                {key: value},
                "label keys like app or example.com/app: a key this malformed selects no pod",
                {"app": "frontend"},
            )
        elif not isinstance(value, str) or not re.match(LABEL_VALUE_PATTERN, value):
            add(
                f"{at}.clientPodLabels.{key}",
                value,
                "a label value (at most 63 letters, digits, '-', '_' or '.'): this one selects no pod",
                "frontend",
            )
    for i, cidr in enumerate(access.client_cidrs):
        try:
            ipaddress.ip_network(cidr, strict=True)
        except ValueError as exc:
            add(f"{at}.clientCidrs[{i}]", cidr, f"a CIDR such as 10.20.0.0/16 ({exc})", "10.0.0.0/16")


def _check_pool(pool: GpuPool, at: str, cloud: str, catalog, add, remove) -> InstanceType | None:
    if pool.gpu not in catalog.gpus:
        add(f"{at}.gpu", pool.gpu, f"a GPU offered on {cloud}: " + ", ".join(catalog.gpus_on(cloud)), catalog.gpus_on(cloud)[0])
        return None
    if pool.gpu not in catalog.gpus_on(cloud):
        alternatives = catalog.alternatives_for(cloud, pool.gpu) or catalog.gpus_on(cloud)
        add(
            f"{at}.gpu",
            pool.gpu,
            f"{pool.gpu} is not offered on {cloud}; nearest alternatives: " + ", ".join(alternatives),
            alternatives[0],
        )
        return None
    offered = [t.name for t in catalog.types_for(cloud, pool.gpu)]
    if pool.instance_type is None:
        itype = catalog.default_type(cloud, pool.gpu)
    else:
        itype = catalog.find(cloud, pool.instance_type)
        if itype is None or itype.gpu != pool.gpu:
            carries = f" (it carries {itype.gpu})" if itype else ""
            add(
                f"{at}.instanceType",
                pool.instance_type,
                f"a {cloud} type that carries {pool.gpu}{carries}: " + ", ".join(offered),
                offered[0],
            )
            return None
    assert itype is not None
    options = itype.purchase_options
    if pool.capacity == "mixed":
        wants_spot = pool.spot_share > 0 and pool.max_nodes > pool.on_demand_base
        wants_on_demand = pool.on_demand_base > 0 or pool.spot_share < 1
        if wants_spot and "spot" not in options:
            add(
                f"{at}.spotShare",
                pool.spot_share,
                f"0: {itype.name} is sold only as {', '.join(options)}; set capacity to one of those for this pool",
                0,
            )
        if wants_on_demand and "on-demand" not in options:
            suggestion = next(o for o in ("capacity-block", "reservation", "flex-start", "spot") if o in options)
            add(
                f"{at}.capacity",
                pool.capacity,
                f"{itype.name} has no on-demand capacity; it is sold as {', '.join(options)}",
                "mixed" if suggestion == "spot" else suggestion,
            )
    else:
        if pool.capacity not in options:
            add(f"{at}.capacity", pool.capacity, f"a purchase option of {itype.name}: " + ", ".join(options), "mixed")
        if pool.capacity == "capacity-block" and cloud != "aws":
            add(
                f"{at}.capacity",
                pool.capacity,
                "capacity-block is an AWS purchase option; on GCP use reservation or flex-start",
                "reservation",
            )
        if pool.capacity == "flex-start" and cloud != "gcp":
            add(
                f"{at}.capacity",
                pool.capacity,
                "flex-start is a GCP purchase option; on AWS use capacity-block",
                "capacity-block",
            )
        if pool.capacity in ("capacity-block", "reservation") and not pool.reservation_id:
            add(
                f"{at}.reservationId",
                _MISSING,
                f"the id of the {pool.capacity} to draw nodes from",
                "cr-0123456789abcdef0" if cloud == "aws" else "my-reservation",
            )
        if pool.spot_share > 0:
            add(f"{at}.spotShare", pool.spot_share, f"0: spot is not part of a {pool.capacity} pool", 0)
        if pool.on_demand_base > 0:
            remove(f"{at}.onDemandBase", pool.on_demand_base, f"unset: a {pool.capacity} pool has no on-demand base")
    # Keys the chosen purchase option does not use are refused rather than ignored.
    if pool.reservation_id and pool.capacity not in ("capacity-block", "reservation"):
        remove(
            f"{at}.reservationId",
            pool.reservation_id,
            f"unset: only capacity-block and reservation pools draw from a reservation (this pool is {pool.capacity})",
        )
    return itype


def load_stack_config(raw: Mapping[str, Any], stack: str, secret_keys: Collection[str] = ()) -> StackConfig:
    """Validate the engine's config mapping for one stack; raise ConfigError listing every problem.

    `secret_keys` are the full config keys the engine marks secret; values that must be secrets are checked against it.
    """
    data, problems = _decode(raw, stack)
    config: StackConfig | None = None
    try:
        config = StackConfig.model_validate(data)
    except ValidationError as exc:
        problems.extend(_from_pydantic(e, data, stack) for e in exc.errors())
    problems.extend(_cross_field_problems(data, stack))
    problems.extend(_receiver_problems(data, stack, secret_keys))
    if problems:
        raise ConfigError(stack, _dedupe(problems))
    assert config is not None
    return config.model_copy(update={"stack": stack})


_SECRET_FIELDS = {"webhook": "url", "slack": "url", "pagerduty": "routingKey"}
_NOT_SHOWN = "(not shown)"


def _receiver_problems(data: Mapping[str, Any], stack: str, secret_keys: Collection[str]) -> list[Problem]:
    """Alertmanager receivers: the right credential field per kind, unique names, and credentials only as Pulumi secrets."""
    monitoring = data.get("monitoring")
    raw_receivers = monitoring.get("alertReceivers") if isinstance(monitoring, dict) else None
    if not isinstance(raw_receivers, list):
        return []
    problems: list[Problem] = []
    is_secret = f"{CONFIG_NAMESPACE}:monitoring" in secret_keys
    names: set[str] = set()
    for i, raw_receiver in enumerate(raw_receivers):
        receiver = _validate_section(AlertReceiver, raw_receiver)
        if receiver is None:
            continue
        at = f"monitoring.alertReceivers[{i}]"
        if receiver.name in names:
            fix = _set_command(f"{at}.name", f"{receiver.name}-2", stack)
            problems.append(Problem(f"{at}.name", receiver.name, "a receiver name not used by another receiver", fix))
        names.add(receiver.name)
        needed = _SECRET_FIELDS[receiver.kind]
        given = {"url": receiver.url, "routingKey": receiver.routing_key}
        for field_name, value in given.items():
            key = f"{at}.{field_name}"
            secret_command = f"pulumi config set --secret --path '{CONFIG_NAMESPACE}:{key}' <value> --stack {stack}"
            if field_name == needed and value is None:
                allowed = f"required for a {receiver.kind} receiver, set as a Pulumi secret"
                problems.append(Problem(key, _MISSING, allowed, secret_command))
            elif field_name != needed and value is not None:
                allowed = f"not used by a {receiver.kind} receiver (it takes {needed})"
                problems.append(Problem(key, _NOT_SHOWN, allowed, _rm_command(key, stack)))
            elif value is not None and not is_secret:
                allowed = "a Pulumi secret (it is stored in clear text in the stack file)"
                problems.append(Problem(key, _NOT_SHOWN, allowed, secret_command))
        if receiver.channel is not None and receiver.kind != "slack":
            fix = _rm_command(f"{at}.channel", stack)
            problems.append(Problem(f"{at}.channel", receiver.channel, "only for slack receivers", fix))
    return problems


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.key, p.allowed) not in seen:
            seen.add((p.key, p.allowed))
            out.append(p)
    return out
