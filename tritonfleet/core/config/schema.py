"""The stack configuration schema (pydantic): every key, its type, default and the description users see.

Descriptions are the "allowed" text of schema problems and feed Pulumi.yaml and the README reference
(tritonfleet/core/reference.py), so they change only on purpose. Rules that span fields live in rules/.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel, to_snake
from pydantic_core import PydanticCustomError

from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.cloud import cloud_names
from tritonfleet.core.conventions import default_bucket_name
from tritonfleet.core.exposure import exposure_mode
from tritonfleet.core.model_names import MAX_VERSION, MODEL_NAME_PATTERN

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,19}$"
NAME_RULE = "lower-case letters, digits and '-', starting with a letter, at most 20 characters"

# Bounds of the systems the numbers end up in, so no value passes validation and then breaks the program or the cloud
# (maxReplicas 1e20 once passed; throughputPerReplica 1e308 ended in an OverflowError). Read 2026-12-05:
# - Kubernetes API integers are int32: a Deployment's replicas, an HPA's minReplicas/maxReplicas, a PDB's
#   maxUnavailable (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/horizontal-pod-autoscaler-v2/,
#   .../deployment-v1/); so are GKE's node pool counts (NodePoolAutoscaling maxNodeCount/totalMaxNodeCount,
#   https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools) and
#   Triton's max_batch_size (model_config.proto). Each cloud's node limits are in tritonfleet/clouds/<cloud>/facts.py.
# - A Kubernetes quantity (an HPA's target value: a replica's capacity times its target utilization) is at most
#   2^63-1 with three decimal places, a smaller fraction rounded up to 1m
#   (https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/).
# - Money is a JSON number to the policy pack and the plan document: integers up to 2^53-1 are the interoperable range
#   (RFC 8259 section 6, https://www.rfc-editor.org/rfc/rfc8259#section-6).
INT32_MAX = 2**31 - 1
QUANTITY_MIN, QUANTITY_MAX = 0.001, float(2**63 - 1)
USD_MAX = float(2**53 - 1)
# A latency with at most 9 digits before the point and 3 after (a quantity's precision): 1.5s, 50ms, 0.25ms.
LATENCY_PATTERN = r"^\d{1,9}(\.\d{1,3})?(ms|s)$"
# A folder prefix inside a bucket: segments of letters, digits, '.', '_' and '-', each ending in '/', none '.' or
# '..' (no climbing out of the deployment's folder) and none starting with '.'; an S3 key and a GCS object name are at
# most 1,024 bytes (https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html,
# https://cloud.google.com/storage/docs/objects#naming), the model's files come after the prefix.
MODEL_PREFIX_PATTERN = r"^([A-Za-z0-9_-][A-Za-z0-9._-]*/)*$"
MODEL_PREFIX_MAX = 512


class _Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, allow_inf_nan=False
    )  # .inf, .nan and 1e400 (YAML and JSON take them) are no count, load or budget


class SystemNodes(_Section):
    instance_type: str | None = Field(None, description="a non-GPU instance/machine type for system pods")
    count: int = Field(2, ge=1, le=20, description="an integer from 1 to 20")


class GkeRanges(_Section):
    nodes: str | None = Field(None, description="the node subnet's IPv4 CIDR (default 10.10.0.0/20)")
    pods: str | None = Field(None, description="the pods' secondary range (default 10.16.0.0/14)")
    services: str | None = Field(None, description="the services' secondary range (default 10.20.0.0/20)")
    control_plane: str | None = Field(None, description="the control plane's /28 (default 172.16.0.0/28)")


class Cluster(_Section):
    name: str | None = Field(None, pattern=r"^[a-z][a-z0-9-]{0,39}$", description="a cluster name (defaults to tf-<stack>)")
    kubernetes_version: str = Field(
        pins.KUBERNETES_VERSION, pattern=r"^1\.\d{2}$", description="a Kubernetes minor version such as 1.35 (AWS: one EKS supports today; GCP: one GKE "
        "supports today, past standard support only with releaseChannel EXTENDED)"
    )
    zones: list[str] = Field(default_factory=list, description="availability zones of the region (AWS: at least two)")
    existing_vpc_id: str | None = Field(
        None, pattern=r"^vpc-[0-9a-f]{8,17}$", description="an existing VPC id (vpc-...) to reuse (AWS), or unset"
    )
    existing_load_balancer_cidrs: list[str] = Field(
        default_factory=list,
        description="the IPv4 CIDRs of existingVpcId's subnets where load balancers live (tagged "
        "kubernetes.io/role/elb and kubernetes.io/role/internal-elb) and no node does: Triton's NetworkPolicies admit "
        "them as the load balancers' source, never the VPC CIDR, which holds every pod (AWS; required with existingVpcId)",
    )
    existing_private_subnets: dict[str, str] = Field(
        default_factory=dict,
        description="zone -> private subnet id (subnet-...) of existingVpcId, at least two zones "
        "(AWS; required with existingVpcId)",
    )
    proxy_only_subnet_cidr: str | None = Field(
        None,
        description="GCP: the IPv4 CIDR of the proxy-only subnet (purpose REGIONAL_MANAGED_PROXY) the stack creates in "
        "its VPC when a deployment uses exposure internal with loadBalancer application: /26 or larger (Google "
        "recommends /23), outside the node, pod, service and control-plane ranges. Default 10.10.16.0/23",
    )
    gke_ranges: GkeRanges | None = Field(
        None,
        description="GCP: the address plan of the VPC the stack creates, {nodes, pods, services, controlPlane}, each "
        "an IPv4 CIDR apart from the others, from the proxy-only subnet and from the networks that must reach the "
        "cluster (the defaults' 172.16.0.0/28 collides with many corporate networks); controlPlane a /28",
    )
    system_nodes: SystemNodes = Field(default_factory=SystemNodes, description="the non-GPU system node pool (an object)")
    control_plane_cidrs: list[str] | None = Field(
        None,
        description="who reaches the Kubernetes API's address from outside the cluster's network: [] private only, or "
        "IPv4 CIDRs (EKS public endpoint CIDRs, GKE master authorized networks on the IP endpoint). Default: EKS [] in "
        "prod, 0.0.0.0/0 otherwise; GKE [] (its DNS-based endpoint serves everyone, IAM-authenticated); 0.0.0.0/0 in "
        "prod needs acknowledgePublicControlPlane",
    )
    acknowledge_public_control_plane: bool = Field(
        False, description="true to allow controlPlaneCidrs 0.0.0.0/0 in prod (the API server reachable from anywhere)"
    )
    deploy_from: Literal["hosted-ci", "public-cidrs", "private-network"] = Field(
        "hosted-ci",
        description="where `pulumi up` runs from: hosted-ci (hosted CI runners, no fixed address; the default, as "
        ".github/workflows/deploy.yml runs), public-cidrs (the internet from deployerCidrs: an office, a runner with "
        "a static address) or private-network (inside the cluster's network or one connected to it, at "
        "deployerCidrs). The API endpoint the stack configures must admit it (docs/access.md)",
    )
    deployer_cidrs: list[str] = Field(
        default_factory=list,
        description="the IPv4 CIDRs the deployer connects from (required with deployFrom public-cidrs or "
        "private-network; AWS private-network: 443 on the cluster security group is opened to them)",
    )
    acknowledge_datapath_replacement: bool = Field(
        False,
        description="GCP: true to let a prod stack replace its GKE cluster to change the datapath to Dataplane V2 "
        "(tritonfleet diff refuses it otherwise); remove it after the update",
    )
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
        description="the EKS AMI release version of every node group, e.g. 1.35.7-20260903 for al2023 "
        "(default: the one pinned for the Kubernetes version); AWS only",
    )
    # GCP only (a Problem on AWS). None means the GCP default named in the description.
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] | None = Field(
        None,
        description="GCP: the GKE release channel, RAPID, REGULAR, STABLE or EXTENDED (extended support, billed "
        "extra; default REGULAR)",
    )
    gke_version: str | None = Field(
        None,
        pattern=r"^1\.\d{2}\.\d{1,3}-gke\.\d{1,12}$",
        description="GCP: a full GKE build of kubernetesVersion, e.g. 1.35.0-gke.1171000: the control plane's minimum "
        "version, and what the plan relies on for version-gated features (the 120 s spot shutdown window); a minor "
        "alone counts as its first build",
    )
    gpu_driver: Literal["gke-managed", "operator"] | None = Field(
        None,
        description="GCP: who installs the NVIDIA driver on GPU nodes: gke-managed (GKE's driver, LATEST on COS or DEFAULT "
        "on Ubuntu, and GKE's device plugin; no GPU Operator, NVIDIA's dcgm-exporter alone for metrics) or operator "
        "(NVIDIA's GKE paths: on COS Google's driver installer plus the GPU Operator with CDI, on UBUNTU_CONTAINERD "
        "the GPU Operator installs the driver too). Default gke-managed",
    )

    model_cache_image: str | None = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9.-]*(:[0-9]+)?(/[a-z0-9][a-z0-9._-]*)+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
        r"(@sha256:[a-f0-9]{64})?$",
        description="the node-local model cache's prefetch image, built from images/model-cache/Dockerfile and pushed "
        "to your registry: a repository (the tag pins.MODEL_CACHE_IMAGE_TAG is added) or a full reference with its "
        "tag or @sha256 digest (prod's policy wants the digest); needed when a deployment sets modelCache",
    )
    image_mirror: bool = Field(
        False,
        description="pull the Triton images from a registry in the stack's cloud and region: AWS an ECR repository the "
        "pinned images are copied into (the stack's tritonImageCopy output), GCP an Artifact Registry remote "
        "repository for nvcr.io with image streaming on COS GPU nodes (docs/serving.md \"Images\")",
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

    @property
    def gke_build(self) -> str:
        """The GKE version features are judged on: gkeVersion, else the minor (its first build, 1.35.0-gke.0)."""
        return self.gke_version or self.kubernetes_version




class AssumedPrice(_Section):
    """An explicit acknowledgement that a pool's price is not published, with the price the stack assumes instead."""

    usd_per_hour: float = Field(gt=0, le=USD_MAX, description="the assumed $ per node-hour, > 0 (never 0: unknown is not free)")
    note: str = Field(
        min_length=3, max_length=500, description="where the figure comes from and who accepted it, e.g. 'AWS quote Q-123, 2026-11, J. Doe'"
    )


class GpuPool(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    gpu: str = Field(description="a GPU from the catalog")
    instance_type: str | None = Field(None, description="an instance/machine type that carries the pool's GPU")
    min_nodes: int = Field(0, ge=0, le=INT32_MAX, description="an integer >= 0 and <= maxNodes")
    max_nodes: int = Field(ge=1, le=INT32_MAX, description="an integer >= 1, within the cloud's node limit per pool")
    capacity: Literal["mixed", "capacity-block", "reservation", "flex-start"] = Field(
        "mixed", description="mixed (on-demand base + spot share), capacity-block, reservation or flex-start"
    )
    on_demand_base: int = Field(0, ge=0, le=INT32_MAX, description="on-demand nodes before any spot, 0..maxNodes (mixed pools only)")
    spot_share: float = Field(0.0, ge=0.0, le=1.0, description="share of nodes above the base that are spot, 0..1")
    on_demand_fallback: bool | None = Field(
        None,
        description="AWS mixed pools with spot: true (default) lets burst nodes launch on-demand when spot is "
        "unavailable; false keeps the pool spot only",
    )
    reservation_id: str | None = Field(
        None,
        description="the capacity block / reservation id (capacity-block and reservation pools only; on AWS a "
        "capacity reservation id cr-..., for reservation pools an On-Demand Capacity Reservation)",
    )
    zones: list[str] = Field(
        default_factory=list,
        description="zones for this pool's nodes, a subset of the cluster's zones (default: all of them); an AWS "
        "capacity-block pool needs exactly its reservation's zone; on GCP e.g. the zone of its reservation or the "
        "zones that offer its machine type",
    )
    enabled: bool = Field(True, description="true or false (an opt-in pool is declared with false)")
    assumed_price: AssumedPrice | None = Field(
        None,
        description="an acknowledged assumed $ per node-hour {usdPerHour, note} for the purchase options of this pool "
        "whose price the catalog does not know (required in prod for such a pool)",
    )
    disk_gi: int = Field(200, ge=100, le=16384, description="root disk GiB, at least 100 (Triton images are large)")
    parallel_image_pull: bool = Field(
        False,
        description="true: the pool's nodes pull images in parallel chunks (EKS: SOCI parallel pull, AMI releases "
        "from AL2023 v20250821 / Bottlerocket 1.46.0); GKE streams images with cluster.imageMirror instead",
    )
    node_labels: dict[str, str] = Field(
        default_factory=dict,
        description="extra Kubernetes labels on the pool's nodes as key: value "
        "(no keys under kubernetes.io, k8s.io or tritonfleet.io)",
    )
    fallback_pool: str | None = Field(
        None,
        description="GCP: another pool of the same instanceType whose nodes take this pool's pods when this pool has "
        "no capacity (e.g. a spot pool behind a reservation): the later priorities of this pool's compute class",
    )


    @property
    def assumed_usd_per_hour(self) -> float | None:
        return self.assumed_price.usd_per_hour if self.assumed_price else None


def physical_bucket_name(bucket: ModelBucket, stack: str, owner: str, region: str) -> str:
    """A bucket's name in the cloud: its bucketName, or the default (conventions.default_bucket_name)."""
    return bucket.bucket_name or default_bucket_name(stack, bucket.name, owner, region)


class ModelBucket(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    bucket_name: str | None = Field(
        None,
        description="the bucket's own name (default tf-<stack>-<name>-<awsAccountId or gcpProject>-<region>); S3 and "
        "GCS bucket names are global, so set one of your organisation's to keep an existing bucket or when the "
        "default is taken",
    )
    noncurrent_version_days: int = Field(30, ge=1, le=3650, description="days to keep old object versions, 1..3650")
    kms_key_id: str | None = Field(None, description="a KMS key ARN (AWS) / Cloud KMS key name (GCP), or unset")


HOSTNAME_PATTERN = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,251}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$"
LABEL_KEY_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)


def is_label_key(key: object) -> bool:
    """A Kubernetes label key: an optional DNS-subdomain prefix (at most 253 characters) and '/', then a name of at
    most 63 (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set)."""
    return isinstance(key, str) and bool(re.match(LABEL_KEY_PATTERN, key)) and len(key.rpartition("/")[0]) <= 253


class Tls(_Section):
    """Where the Application load balancer's certificate comes from: exactly one of these."""

    certificate_arn: str | None = Field(
        None,
        pattern=r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/[A-Za-z0-9-]+$",
        description="AWS: an ACM certificate ARN (arn:aws:acm:REGION:ACCOUNT:certificate/ID) that covers the hostname",
    )
    pre_shared_cert: str | None = Field(
        None,
        pattern=DNS_LABEL_PATTERN,
        description="GCP: the name of a Compute Engine SSL certificate in the project (a global one for public, a "
        "regional one in the stack's region for internal)",
    )
    secret_name: str | None = Field(
        None, pattern=DNS_SUBDOMAIN_PATTERN, description="GCP: an existing kubernetes.io/tls Secret in the deployment's namespace"
    )
    cert_manager_issuer: str | None = Field(
        None,
        pattern=DNS_SUBDOMAIN_PATTERN,
        description="GCP, public only: a cert-manager ClusterIssuer that issues the certificate",
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
    load_balancer: Literal["network", "application"] | None = Field(
        None,
        description="internal/public only: network (L4, balances gRPC per connection) or application (L7 with TLS, "
        "balances gRPC per request; needs hostname and tls). Default: network for internal, application for public "
        "(public takes application only)",
    )
    load_balancer_grpc: bool | None = Field(
        None,
        description="with an application load balancer: route Triton's gRPC through it as well as REST (true, the "
        "default; on GCP through a GKE Gateway, since a GKE Ingress speaks HTTP/2 to a backend only over TLS) or REST "
        "only (false; on GCP the GKE Ingress, required with tls.certManagerIssuer)",
    )
    hostname: str | None = Field(
        None,
        pattern=HOSTNAME_PATTERN,
        max_length=253,
        description="with an application load balancer (public, or internal with loadBalancer application): the DNS "
        "name clients use, lower-case, such as llm.example.com",
    )
    tls: Tls | None = Field(
        None,
        description="with an application load balancer (public, or internal with loadBalancer application): the "
        "certificate (an object with one source)",
    )
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
    acknowledge_open_internal_inference: bool = Field(
        False,
        description="true to allow clientCidrs 0.0.0.0/0 with unauthenticated inference (restrictInference false) on "
        "an internal endpoint in prod; the prod policy config must name the release in acknowledgeOpenInternalInference too",
    )

    @property
    def mode(self) -> str:
        """cluster, internal (network load balancer), internal-application or public (tritonfleet.core.exposure)."""
        return exposure_mode(self.exposure, self.load_balancer)


class TargetLoad(_Section):
    peak: float = Field(
        ge=QUANTITY_MIN, le=QUANTITY_MAX, description="the peak load the deployment must carry, >= 0.001 (in unit)"
    )
    average: float | None = Field(
        None, ge=QUANTITY_MIN, le=QUANTITY_MAX, description="the average load over a day, >= 0.001 and <= peak (in unit), or unset"
    )
    unit: Literal["requests/s", "inferences/s", "outputTokens/s"] = Field(
        "requests/s", description="requests/s, inferences/s, or outputTokens/s (an llm deployment)"
    )
    inferences_per_request: int = Field(
        1, ge=1, le=INT32_MAX, description="inferences (batch rows) per request, >= 1 (with unit requests/s)"
    )
    input_tokens: int | None = Field(
        None, ge=1, le=10_000_000, description="an llm deployment: mean prompt tokens of a request, 1..10000000"
    )
    output_tokens: int | None = Field(
        None, ge=1, le=10_000_000,
        description="an llm deployment: mean output tokens of a request, 1..10000000 (requests/s become tokens/s)",
    )

    def inferences_per_second(self, value: float) -> float:
        return value * self.inferences_per_request if self.unit == "requests/s" else value

    def output_tokens_per_second(self, value: float) -> float | None:
        """The load in output tokens/s: as stated, or requests/s times outputTokens; None without the length."""
        if self.unit == "outputTokens/s":
            return value
        if self.unit == "requests/s" and self.output_tokens is not None:
            return value * self.output_tokens
        return None


class LoadtestRef(_Section):
    path: str = Field(
        min_length=1,
        max_length=4096,
        pattern=r"^([A-Za-z0-9_-][A-Za-z0-9._-]*/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$",
        description="a `tritonfleet loadtest --json` result file, relative to the project and inside it (no '..', no "
        "leading '/')",
    )
    model: str = Field(
        min_length=1, max_length=128, description="the model the deployment serves, as the loadtest named it"
    )


TUNING_NAME = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
TUNING_VALUE = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:/+-]{1,256}$")] | int | bool


class TritonTuning(_Section):
    """Triton's server-wide tuning flags (tritonserver --help of the pinned release; docs/serving.md)."""

    backend_config: dict[TUNING_NAME, dict[TUNING_NAME, TUNING_VALUE]] = Field(
        default_factory=dict,
        description="--backend-config per backend: {backend: {setting: value}}, e.g. {python: {shm-default-byte-size: "
        "16777216}}",
    )
    cache_config: dict[TUNING_NAME, dict[TUNING_NAME, TUNING_VALUE]] = Field(
        default_factory=dict,
        description="--cache-config per cache: {cache: {setting: value}}, e.g. {local: {size: 268435456}} for the "
        "response cache",
    )
    pinned_memory_mib: int | None = Field(
        None, ge=0, le=1_048_576, description="--pinned-memory-pool-byte-size in MiB (Triton's default: 256), or unset"
    )
    cuda_memory_pool_mib: int | None = Field(
        None, ge=0, le=1_048_576, description="--cuda-memory-pool-byte-size per GPU of the replica, in MiB (Triton's "
        "default: 64), or unset",
    )
    rate_limit: Literal["off", "execution_count"] = Field(
        "off", description="--rate-limit: off, or execution_count (instances run by their rate_limiter resources)"
    )
    rate_limit_resources: dict[TUNING_NAME, Annotated[int, Field(ge=1, le=1_000_000)]] = Field(
        default_factory=dict, description="--rate-limit-resource: {resource: count} with rateLimit execution_count"
    )
    buffer_manager_threads: int | None = Field(
        None, ge=0, le=256, description="--buffer-manager-thread-count, 0..256, or unset (Triton's default: 0)"
    )
    shm_gi: int | None = Field(
        None, ge=1, le=1024, description="/dev/shm GiB (memory-backed); unset: 1 for a 1-GPU replica, 32 with more "
        "GPUs (NCCL), at most a quarter of the replica's memory",
    )


LLM_BACKENDS = ("tensorrtllm", "vllm")
PRECISIONS = ("fp16", "bf16", "fp8", "int8", "int4", "fp4")
Precision = Literal["fp16", "bf16", "fp8", "int8", "int4", "fp4"]


class LlmArchitecture(_Section):
    """A model's architecture facts, as its config.json states them (the facts table's rows have the same keys)."""

    parameters_b: float = Field(gt=0, le=10000, description="parameters in billions (every expert of a mixture)")
    layers: int = Field(ge=1, le=1000, description="transformer layers (num_hidden_layers), 1..1000")
    attention_heads: int = Field(ge=1, le=1024, description="query heads (num_attention_heads), 1..1024")
    kv_heads: int = Field(ge=1, le=1024, description="key/value heads (num_key_value_heads), 1..1024")
    head_size: int = Field(ge=1, le=1024, description="size of one attention head (hidden size / heads), 1..1024")
    hidden_size: int = Field(ge=1, le=65536, description="hidden size (hidden_size), 1..65536")
    max_context: int = Field(ge=1, le=10_000_000, description="the longest context in tokens (max_position_embeddings)")


class Llm(_Section):
    """A large language model served by Triton's TensorRT-LLM or vLLM backend (docs/serving.md "LLM deployments")."""

    backend: Literal["tensorrtllm", "vllm"] = Field(description="tensorrtllm or vllm: the Triton backend and its image")
    layout: Literal["llmapi", "engine"] | None = Field(
        None, description="tensorrtllm only: llmapi (TensorRT-LLM's LLM API model, the default) or engine (the "
        "deprecated TensorRT-engine ensemble); it sets the metrics the HPA reads and what models validate accepts",
    )
    model: str | None = Field(
        None, min_length=1, max_length=100,
        description="a model of tritonfleet's facts table (tritonfleet/core/llm_facts.yaml), such as Llama-3.1-8B; "
        "or set architecture",
    )
    architecture: LlmArchitecture | None = Field(
        None, description="the model's facts inline, for a model the table lacks (an object; instead of model)"
    )
    precision: Precision = Field(description="weights' precision: fp16, bf16, fp8, int8, int4 or fp4")
    kv_cache_precision: Literal["fp16", "bf16", "fp8"] | None = Field(
        None, description="the KV cache's precision: fp16, bf16 or fp8 (default: 16-bit, as both backends do)"
    )
    max_context: int = Field(
        ge=1, le=10_000_000, description="tokens per sequence, prompt and output together, at most the model's context"
    )
    max_sequences: int = Field(ge=1, le=100_000, description="sequences one replica serves at once, 1..100000")
    ttft_target: str = Field(
        "2s", pattern=LATENCY_PATTERN,
        description="the p95 time to first token with its unit (ms or s); above it for 10 minutes, an alert fires",
    )
    itl_target: str | None = Field(
        None, pattern=LATENCY_PATTERN,
        description="the inter-token latency target (time between output tokens) with its unit, such as 50ms, or unset",
    )
    openai_frontend: bool = Field(
        False, description="true: serve /v1/chat/completions, /v1/completions and /v1/models on port 9000 through "
        "Triton's OpenAI-compatible frontend (vllm only), behind the inference key",
    )
    tokenizer: str | None = Field(
        None, min_length=1, max_length=1000,
        description="with openaiFrontend: the tokenizer for chat templates, a directory in the pod (or a Hugging "
        "Face ID); unset: /v1/chat/completions is refused, /v1/completions works",
    )


DURATION_PATTERN = r"^\d{1,5}(s|m|h)$"  # Argo Rollouts' duration strings: 90s, 5m, 1h


def duration_seconds(text: str) -> int:
    """A validated duration ('90s', '5m', '1h') in seconds."""
    return int(text[:-1]) * {"s": 1, "m": 60, "h": 3600}[text[-1]]


class RolloutAnalysis(_Section):
    """What a canary must show, compared with the stable version over the same interval (docs/serving.md)."""

    max_error_ratio: float = Field(
        0.01, gt=0, lt=1, description="the most failed/all inferences the canary may show, in (0, 1); default 0.01"
    )
    max_latency_ratio: float = Field(
        1.2, ge=1, le=10, description="the canary's mean request latency over an interval at most this times the stable "
        "version's over the same interval, 1..10"
    )
    max_queue_time: str | None = Field(
        None, pattern=LATENCY_PATTERN,
        description="the canary's mean queue wait per inference at most this, with its unit (default: the "
        "deployment's queueTimeTarget; none: not judged)",
    )
    max_ttft_ratio: float | None = Field(
        None, ge=1, le=10,
        description="LLM deployments: the canary's p95 time to first token at most this times the stable's, 1..10 "
        "(default 1.2 for an llm deployment)",
    )
    min_requests: int = Field(
        50, ge=1, le=1_000_000,
        description="inferences the canary must serve in an interval before it is judged; fewer is inconclusive "
        "(the rollout pauses, never promotes), 1..1000000",
    )


class Rollout(_Section):
    """How a change of the served versions (modelVersions, imageTag) reaches traffic: steps judged by Argo Rollouts."""

    steps: list[Annotated[int, Field(ge=1, le=100)]] = Field(
        [10, 25, 50, 100], min_length=1, max_length=20,
        description="the canary's traffic weights in percent, increasing, ending at 100, such as [10, 25, 50, 100]",
    )
    interval: str = Field(
        "5m", pattern=DURATION_PATTERN,
        description="how long each step runs and is judged, such as 5m; at least two scrape intervals (60s)",
    )
    analysis: RolloutAnalysis = Field(
        default_factory=RolloutAnalysis, description="the canary's thresholds against the stable version (an object)"
    )



class StartupMeasured(_Section):
    """Seconds each step of a replica's start took when measured (kubectl get events / the pod's conditions); a
    measured step replaces the plan's estimate of it (docs/serving.md "Startup budget")."""

    node_seconds: int | None = Field(None, ge=0, le=86400, description="a new GPU node's launch to Ready, seconds")
    image_pull_seconds: int | None = Field(None, ge=0, le=86400, description="the Triton image's pull, seconds")
    model_fetch_seconds: int | None = Field(
        None, ge=0, le=86400, description="the model repository's copy from the bucket to the node, seconds"
    )
    load_seconds: int | None = Field(None, ge=0, le=86400, description="Triton loading the models, seconds")
    warmup_seconds: int | None = Field(None, ge=0, le=86400, description="the warm-up requests, seconds")


class Startup(_Section):
    """What a new replica's start is measured against and what it took (docs/serving.md "Startup budget")."""

    measured: StartupMeasured = Field(
        default_factory=StartupMeasured,
        description="measured seconds per step {nodeSeconds, imagePullSeconds, modelFetchSeconds, loadSeconds, "
        "warmupSeconds} (an object); each replaces the plan's estimate",
    )
    image_gb: float | None = Field(
        None, gt=0, le=1000, description="GB the Triton image takes once pulled, for an image whose size tritonfleet "
        "does not know (default: the pinned image's published size)"
    )
    spike_ramp_seconds: int | None = Field(
        None, ge=1, le=86400,
        description="seconds a load spike takes from its start to its peak: maxReplicas must be serving by then",
    )


class ScaleToZero(_Section):
    """KEDA scales the deployment to zero replicas when it has had no request for idleMinutes and back to
    minReplicas on the first request, which waits for the cold start (docs/serving.md "Idle capacity to zero")."""

    idle_minutes: int = Field(
        30, ge=5, le=1440, description="minutes without a request before every replica stops, 5..1440"
    )
    accepted_first_request_seconds: int | None = Field(
        None, ge=1, le=86400,
        description="the wait you accept for the first request after idle, in seconds: at least the cold start "
        "the plan shows (required in prod)",
    )


class TritonDeployment(_Section):
    name: str = Field(pattern=NAME_PATTERN, description=NAME_RULE)
    pool: str = Field(description="the name of a GPU pool of this stack")
    bucket: str | None = Field(None, description="the name of a model bucket of this stack (default: the first)")
    model_prefix: str = Field(
        "",
        pattern=MODEL_PREFIX_PATTERN,
        max_length=MODEL_PREFIX_MAX,
        description="a folder prefix ending in '/', or '': folders of letters, digits, '.', '_' and '-', none starting "
        "with '.' (no '..'), at most 512 characters",
    )
    gpus_per_replica: int = Field(1, ge=1, le=8, description="GPUs per Triton pod, 1..GPUs per node")
    min_replicas: int = Field(1, ge=1, le=INT32_MAX, description="an integer >= 1 and <= maxReplicas")
    max_replicas: int = Field(1, ge=1, le=INT32_MAX, description="an integer >= minReplicas")
    image_tag: str = Field(
        pins.TRITON_IMAGE_TAG, pattern=r"^\d{2}\.\d{2}-[a-z0-9-]+$", description="a pinned NGC tag like 26.07-py3"
    )
    model_control_mode: Literal["none", "poll", "explicit"] = Field("none", description="none, poll or explicit")
    model_load_seconds: int = Field(600, ge=10, le=7200, description="worst-case model load time in seconds, 10..7200")
    throughput_per_replica: float | None = Field(
        None,
        ge=QUANTITY_MIN,
        le=QUANTITY_MAX,
        description="inferences/second one replica carries within the latency target (stated), >= 0.001",
    )
    loadtest_result: LoadtestRef | None = Field(
        None,
        description="the measured per-replica capacity: {path, model} of a `tritonfleet loadtest` result (used before "
        "throughputPerReplica by sizing and the HPA)",
    )
    client_models: list[Annotated[str, Field(pattern=MODEL_NAME_PATTERN)]] = Field(
        default_factory=list,
        description="the models clients call (an ensemble by its own name, not its steps): the HPA counts only their "
        "inferences; empty: loadtestResult's model, else every model of the pod",
    )
    target_load: TargetLoad | None = Field(
        None, description="the load to size for: {peak, average, unit, inferencesPerRequest} (an object)"
    )
    latency_target: str | None = Field(
        None, pattern=LATENCY_PATTERN, description="the p99 latency target with a unit, such as 50ms or 1.5s"
    )
    target_utilization: float = Field(
        0.8,
        gt=0,
        le=0.9,
        description="share of throughputPerReplica (an llm: of maxSequences and of its KV cache) the HPA fills before "
        "adding a replica, in (0, 0.9] (above 0.9 a "
        "saturated replica reads within the HPA's 10 % tolerance and it stops scaling up)",
    )
    queue_time_target: str | None = Field(
        None,
        pattern=LATENCY_PATTERN,
        examples=["20ms"],
        description="the HPA's latency guard: mean queue wait per request with its unit, ms or s, such as 20ms or 0.5s",
    )
    namespace: str = Field(
        "triton",
        pattern=DNS_LABEL_PATTERN,
        description="a Kubernetes namespace name (at most 63 characters) of its own: not default, kube-* or one the "
        "platform runs (monitoring, gpu-operator, tritonfleet-capacity, tritonfleet-model-cache)",
    )
    access: Access = Field(default_factory=Access, description="who can reach the deployment and how (an object)")
    required_models: list[Annotated[str, Field(pattern=MODEL_NAME_PATTERN)]] = Field(
        default_factory=list,
        description="models a replica must serve to be ready (a list of model names); empty: every model of the "
        "repository. A model outside the list that fails to load leaves the replica serving the others",
    )
    load_models: list[Annotated[str, Field(pattern=MODEL_NAME_PATTERN)]] = Field(
        default_factory=list,
        description="explicit mode: the models every replica loads at start (a list of model names); empty: all",
    )
    repository_gi: int = Field(
        20, ge=1, le=10000, description="GiB the model repository takes on a node's disk (Triton copies it there), 1..10000"
    )
    model_cache: bool = Field(
        False,
        description="true: each published version is fetched once per node into the node-local model cache (a "
        "prefetch DaemonSet on the pool's NVMe, minNodes and warm capacity included) and every replica on the node "
        "reads it, falling back to the bucket when the node's copy is not complete; needs instance store or local SSD",
    )
    model_load_threads: int | None = Field(
        None, ge=1, le=64, description="models Triton loads in parallel, 1..64, or unset for Triton's default (4)"
    )
    startup: Startup = Field(
        default_factory=Startup,
        description="the startup budget's inputs: {measured, imageGb, spikeRampSeconds} (an object)",
    )
    log_verbose: int = Field(0, ge=0, le=3, description="Triton's --log-verbose level, 0 (off)..3")
    log_format: Literal["default", "ISO8601"] = Field("default", description="Triton's --log-format: default or ISO8601")
    tuning: TritonTuning = Field(
        default_factory=TritonTuning, description="Triton's tuning flags and /dev/shm size (an object)"
    )
    llm: Llm | None = Field(
        None,
        description="a large language model this deployment serves: {backend, model or architecture, precision, "
        "maxContext, maxSequences} (an object); its memory per GPU is checked and gpusPerReplica chosen",
    )
    max_unavailable: int | None = Field(
        None,
        ge=1,
        le=INT32_MAX,
        description="replicas a node drain may stop at once (PodDisruptionBudget), >= 1 and < minReplicas when "
        "minReplicas > 1; unset: a quarter of minReplicas, at least 1",
    )
    model_versions: dict[Annotated[str, Field(pattern=MODEL_NAME_PATTERN)], Annotated[int, Field(ge=0, le=MAX_VERSION)]] = Field(
        default_factory=dict,
        description="the version each model serves, model: version (a Triton version folder: 0, 1, 2, ...); changing one is a "
        "rollout. Empty: every version the repository's version policy loads",
    )
    scale_to_zero: ScaleToZero | None = Field(
        None,
        description="scale to zero replicas when idle and back on the first request (KEDA): {idleMinutes, "
        "acceptedFirstRequestSeconds} (an object); unset: minReplicas always run",
    )
    rollout: Rollout | None = Field(
        None,
        description="a canary rollout for changes of modelVersions or imageTag: {steps, interval, analysis} "
        "(an object); unset: a change replaces every replica at once",
    )
    # The measured capacity, set from loadtestResult by tritonfleet.plan.sizing.with_measured_capacities (a file read
    # in the project, not a config key).
    _measured_capacity: float | None = PrivateAttr(None)

    @property
    def capacity_per_replica(self) -> float | None:
        """Inferences/s one replica carries: measured (loadtestResult) where known, else throughputPerReplica."""
        return self._measured_capacity if self._measured_capacity is not None else self.throughput_per_replica

    @property
    def counted_models(self) -> list[str]:
        """The models whose inferences the HPA counts (empty: every model of the pod)."""
        if self.client_models:
            return list(self.client_models)
        return [self.loadtest_result.model] if self.loadtest_result else []


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
        max_length=253,  # a DNS subdomain name, as Kubernetes object names are
        description="a StorageClass name for Prometheus' volume, or unset for the cluster default",
    )
    alert_receivers: list[AlertReceiver] = Field(
        default_factory=list, description="Alertmanager receivers (a list; none by default: alerts stay in Alertmanager's UI)"
    )
    dead_mans_switch_url: str | None = Field(
        None,
        min_length=1,
        description="a dead-man's-switch URL (healthchecks.io, Dead Man's Snitch, ...) the Watchdog heartbeat calls every "
        "minute, set as a Pulumi secret; the service pages when the calls stop",
    )


class Usage(_Section):
    """What the bill's usage-driven lines assume (traffic, NAT processing, log ingestion): the plan prints each
    assumption beside its line; replace the defaults with what the stack measures."""

    inferences_per_second: float | None = Field(
        None, ge=0, le=QUANTITY_MAX, description="the stack's average inferences/s for the traffic lines, >= 0, or unset "
        "for the sum of the deployments' targetLoad (average, else peak)"
    )
    request_bytes: int = Field(16384, ge=0, le=INT32_MAX, description="bytes one inference's request carries, >= 0")
    response_bytes: int = Field(16384, ge=0, le=INT32_MAX, description="bytes one inference's response carries, >= 0")
    cross_zone_share: float | None = Field(
        None, ge=0, le=1, description="share of inference traffic that crosses zones, 0..1, or unset for (zones - 1) / "
        "zones (clients and replicas spread evenly)"
    )
    nat_gb_per_month: float = Field(
        100, ge=0, le=QUANTITY_MAX, description="GB a month through NAT (image pulls, updates, outside APIs), >= 0"
    )
    log_gb_per_month: float = Field(
        50, ge=0, le=QUANTITY_MAX, description="GB of logs a month into the cloud's log service, >= 0"
    )


class Budget(_Section):
    monthly_usd: float = Field(ge=0, le=USD_MAX, description="a monthly budget in USD, >= 0")
    warn_fraction: float = Field(0.8, gt=0, le=1, description="warn above this fraction of the budget, in (0, 1]")
    basis: Literal["floor", "ceiling"] = Field("ceiling", description="floor (minimum nodes) or ceiling (maximum nodes)")


class Sizing(_Section):
    headroom: float = Field(
        0.25, ge=0, lt=1, description="share of each replica's capacity kept free at peak, 0 <= headroom < 1"
    )
    idle_gpu_warn_fraction: float = Field(
        0.5, gt=0, le=1, description="warn when more than this share of a pool's paid GPUs is idle, in (0, 1]"
    )


def _registered_cloud(name: str) -> str:
    """A cloud of the registry (tritonfleet/core/cloud.py), refused as pydantic refuses a Literal outside its values."""
    if name not in cloud_names():
        expected = " or ".join(f"'{n}'" for n in cloud_names())
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return name


class StackConfig(_Section):
    environment: Literal["dev", "staging", "prod"] = Field(description="dev, staging or prod")
    cloud: Annotated[str, AfterValidator(_registered_cloud)] = Field(description=" or ".join(cloud_names()))
    region: str = Field(pattern=r"^[a-z]+(-[a-z]+)+-?\d+$", description="a region such as us-east-1 or us-central1")
    gcp_project: str | None = Field(None, pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$", description="a GCP project id")
    aws_account_id: str | None = Field(
        None,
        pattern=r"^\d{12}$",
        description="AWS: the 12-digit account the stack deploys into; the AWS provider refuses any other, and default "
        "bucket names carry it (required unless every model bucket sets bucketName)",
    )
    cluster: Cluster = Field(default_factory=Cluster, description="cluster settings (an object)")
    gpu_pools: list[GpuPool] = Field(min_length=1, description="a list of GPU pools")
    model_buckets: list[ModelBucket] = Field(min_length=1, description="a list of model buckets")
    triton_deployments: list[TritonDeployment] = Field(default_factory=list, description="a list of Triton deployments")
    monitoring: Monitoring = Field(default_factory=Monitoring, description="monitoring settings (an object)")
    budget: Budget = Field(description="the monthly budget (an object with monthlyUsd)")
    usage: Usage = Field(
        default_factory=Usage, description="what the bill's traffic, NAT and log lines assume (an object)"
    )
    sizing: Sizing = Field(default_factory=Sizing, description="sizing settings: headroom, idleGpuWarnFraction (an object)")
    gpu_limit: int = Field(ge=0, le=INT32_MAX, description="the most GPUs this stack may run at once, >= 0")
    protect: bool | None = Field(None, description="true or false (default: true in prod)")
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="cost-allocation tags (AWS) / labels (GCP) as key: value; on GCP lower-case letters, digits, '_' and "
        "'-', at most 63 characters, keys starting with a letter",
    )

    # Filled in by load_stack_config from the stack's name, not from a config key.
    stack: str = Field("", exclude=True)
    # Filled in by load_stack_config: the cloud's account or project (its rules' BUCKET_OWNER_FIELD), for bucket names.
    bucket_owner: str = Field("", exclude=True)

    @property
    def protected(self) -> bool:
        return self.environment == "prod" if self.protect is None else self.protect

    @property
    def cluster_name(self) -> str:
        return self.cluster.name or f"tf-{self.stack}"

    def pool(self, name: str) -> GpuPool:
        return next(p for p in self.gpu_pools if p.name == name)

    def physical_bucket_name(self, bucket: ModelBucket) -> str:
        """The bucket's name in the cloud: its bucketName, or the default (conventions.default_bucket_name)."""
        return physical_bucket_name(bucket, self.stack, self.bucket_owner, self.region)

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


# Every project config key, as written in Pulumi.yaml and the stack files.
CONFIG_KEYS = sorted(field.alias or name for name, field in StackConfig.model_fields.items() if not field.exclude)


def latency_ms(text: str) -> float:
    """A validated latency target ('50ms', '1.5s') in milliseconds."""
    return float(text[:-2]) if text.endswith("ms") else float(text[:-1]) * 1000
