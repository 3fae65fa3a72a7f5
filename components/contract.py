"""The cloud-adapter contract: what every cloud floor builds, and the cloud-neutral facts it hands up.

A cloud adapter is a `CloudAdapter` subclass in `components/<cloud>/cloud.py`, registered by cloud name in
`components/platform.py`. Its constructor (written once, below) builds every cloud the same way:

1. `build_cluster`: the cloud's own floor (network, cluster, GPU capacity, cluster add-ons);
2. `model_bucket`: one private model bucket per `BucketRequest` (sliced from the config once, here), named and
   parented the same way for every cloud; the cloud gives its bucket component (`bucket`);
3. `triton_identities`: one keyless read identity per `IdentityRequest` (one per Triton deployment, sliced here);
4. `cluster_facts`: the `ClusterFacts` the Kubernetes layer reads. Nothing above this contract says aws or gcp.

`build_cluster` returns the adapter's own "floor" object (a dataclass of the cluster, its Kubernetes provider, ...);
the later steps receive it, so nothing passes between them through hidden state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core.cluster_monitoring import ClusterMonitoringFacts
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import (
    MODEL_CACHE_NAMESPACE,
    model_cache_identity,
    model_cache_service_account,
    triton_service_account,
)
from tritonfleet.core.exposure import ExposureFacts
from tritonfleet.core.scheduling import PoolFacts


@dataclass(frozen=True)
class BucketRequest:
    """One model bucket, as every cloud needs it."""

    name: str  # the configured name: the key of ClusterFacts.model_repositories
    physical_name: str  # the bucket's name in the cloud (global): bucketName or tf-<stack>-<name>-<owner>-<region>
    noncurrent_version_days: int  # how long replaced or deleted model files stay restorable
    kms_key: str | None  # customer-managed key (KMS key ARN on AWS, Cloud KMS key name on GCP); None: cloud default
    protected: bool  # protect and retain on delete (prod)
    labels: dict[str, str]  # the stack's tags


@dataclass(frozen=True)
class IdentityRequest:
    """Read access for one Triton deployment: its Kubernetes ServiceAccount may read one bucket (prefix), nothing else."""

    deployment: str  # the deployment's name: the key of ClusterFacts.service_account_annotations
    namespace: str  # namespace of the ServiceAccount
    service_account: str  # the ServiceAccount Triton runs as (conventions.triton_service_account)
    bucket: str  # the configured name of the bucket it reads
    model_prefix: str  # the folder of the bucket its models live under ("" for the whole bucket)
    kms_key: str | None  # the bucket's customer-managed key, which reading must be allowed to use


@dataclass(frozen=True)
class ModelStore:
    """A model bucket the adapter built: its URI for Triton and the handle its grants name."""

    uri: pulumi.Output[str]  # s3://bucket, gs://bucket
    grant_target: pulumi.Output[str]  # what an IAM grant on the bucket names (the ARN on AWS, the name on GCP)


@dataclass(frozen=True)
class TritonIdentity:
    """The identity of one Triton deployment: the annotations its ServiceAccount carries, and what to export."""

    annotations: dict[str, pulumi.Input[str]]
    export: pulumi.Input[Any]  # this deployment's entry in the adapter's identity stack output


@dataclass
class ClusterFacts:
    """What the Kubernetes layer may rely on. Each field states who fills it and what the consumer must do with it.

    cluster_name: the cluster's name in the cloud (exported as clusterName).
    pools: configured GPU pool name -> its scheduling target, as the adapter builds it (node selector, every taint
        of the nodes it reaches, GPUs per node, spot notice and the pods' share of it). The consumer selects and
        tolerates exactly these; GKE's selector is the pool's compute class, which may reach a fallback pool too.
    model_repositories: configured bucket name -> s3://bucket or gs://bucket.
    service_account_annotations: deployment name -> annotations for that Triton deployment's Kubernetes
        ServiceAccount. The cloud adapter grants read on the deployment's bucket (and nothing else) to the
        ServiceAccount named `conventions.triton_service_account(deployment.name)` in namespace `<deployment.namespace>`; the Kubernetes layer
        must run Triton under that ServiceAccount and put these annotations on it (IRSA role ARN on AWS,
        the principal's name on GKE, whose direct Workload Identity principal needs no annotation). No keys or credential files are involved. The adapter makes each
        annotation resolve only after its grants exist, so a release that takes it waits for them.
    gpu_operator_values: Helm values the GPU Operator release must merge over its own (driver/toolkit mode, host
        paths, toolkit env). They follow from how the adapter built the GPU nodes, so the consumer must not override
        these keys.
    gpu_operator_resource_quota: when not None, the `spec` of a ResourceQuota the Kubernetes layer must create in the
        GPU Operator's namespace BEFORE the release (GKE admits pods with the system-node-critical /
        system-cluster-critical priority classes outside kube-system only under such a quota; without it every
        operator pod is rejected and the release times out). The consumer adds metadata (name, namespace).
    exports: stack outputs the adapter wants users to see (pool names, identity bindings), exported as given.
    exposure: how the cloud's load balancers expose a Service (annotations, ingress class, traffic sources).
    triton_image_repository: where the Triton releases pull the Triton image from instead of nvcr.io (the cloud's
        mirror, cluster.imageMirror; the tag stays the pinned one); None: nvcr.io itself.
    triton_depends_on: resources every Triton release must wait for (AWS: the Load Balancer Controller, whose webhook
        admits the Services and Ingresses that `exposure` annotates; GKE: the compute classes its pods select).
    """

    cluster_name: pulumi.Output[str]
    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]
    model_repositories: dict[str, pulumi.Output[str]]
    service_account_annotations: dict[str, dict[str, pulumi.Input[str]]] = field(default_factory=dict)
    # extra container environment for Triton (AWS_DEFAULT_REGION on AWS)
    triton_env: dict[str, str] = field(default_factory=dict)
    gpu_operator_values: dict[str, Any] = field(default_factory=dict)
    gpu_operator_resource_quota: dict[str, Any] | None = None
    exports: dict[str, pulumi.Input[Any]] = field(default_factory=dict)
    exposure: ExposureFacts = field(default_factory=ExposureFacts)
    # what the managed cluster hides from an in-cluster Prometheus, and where its logs go
    monitoring: ClusterMonitoringFacts = field(default_factory=ClusterMonitoringFacts)
    triton_depends_on: list[pulumi.Resource] = field(default_factory=list)
    triton_image_repository: pulumi.Input[str] | None = None


def bucket_requests(config: StackConfig) -> list[BucketRequest]:
    """Every configured model bucket, in config order."""
    return [
        BucketRequest(
            name=bucket.name,
            physical_name=config.physical_bucket_name(bucket),
            noncurrent_version_days=bucket.noncurrent_version_days,
            kms_key=bucket.kms_key_id,
            protected=config.protected,
            labels=config.tags,
        )
        for bucket in config.model_buckets
    ]


def identity_requests(config: StackConfig) -> list[IdentityRequest]:
    """One read identity per Triton deployment, for the bucket it serves from; and one for the prefetch DaemonSet of
    each deployment with the node-local model cache (modelCache), which reads the same prefix (key
    `conventions.model_cache_identity(name)`)."""
    requests = []
    for deployment in config.triton_deployments:
        bucket = config.bucket_for(deployment)
        readers = [(deployment.name, deployment.namespace, triton_service_account(deployment.name))]
        if deployment.model_cache:
            readers.append((model_cache_identity(deployment.name), MODEL_CACHE_NAMESPACE,
                            model_cache_service_account(deployment.name)))  # fmt: skip
        requests += [
            IdentityRequest(
                deployment=key,
                namespace=namespace,
                service_account=account,
                bucket=bucket.name,
                model_prefix=deployment.model_prefix,
                kms_key=bucket.kms_key_id,
            )
            for key, namespace, account in readers
        ]
    return requests


def after_grants(value: pulumi.Input[str], grants: list[pulumi.CustomResource]) -> pulumi.Output[str]:
    """`value`, resolving only once every grant exists: Triton, which takes it, never starts without its access."""
    return pulumi.Output.all(value, *(grant.id for grant in grants)).apply(lambda args: args[0])


class AdapterFloor(Protocol):
    """What the contract reads of every adapter's floor."""

    children: pulumi.ResourceOptions  # parent: the adapter; provider: the cloud's provider of the stack


class BucketComponent(Protocol):
    """A cloud's model bucket component (components/<cloud>/bucket.py), as the contract reads it."""

    uri: pulumi.Output[str]
    grant_target: pulumi.Output[str]


Floor = TypeVar("Floor", bound=AdapterFloor)


@dataclass(frozen=True)
class ImageMirror:
    """The cloud's registry mirror of the Triton images (cluster.imageMirror): the image repository the releases
    pull from, and the stack outputs that say how it is filled."""

    image_repository: pulumi.Output[str]
    exports: dict[str, pulumi.Input[Any]] = field(default_factory=dict)


class CloudAdapter(pulumi.ComponentResource, ABC, Generic[Floor]):
    """A cloud floor: its cluster, then buckets and Triton identities built the same way for every cloud."""

    cloud: ClassVar[str]
    """The `cloud` config value this adapter serves; its type token is `tritonfleet:<cloud>:<ClassName>`."""

    facts: ClusterFacts
    """What the Kubernetes layer reads (set once the constructor returns)."""

    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"tritonfleet:{self.cloud}:{type(self).__name__}", name, None, opts)
        floor = self.build_cluster(name, config)
        stores = {request.name: self.model_bucket(name, floor, request) for request in bucket_requests(config)}
        identities = self.triton_identities(name, floor, identity_requests(config), stores)
        facts = self.cluster_facts(config, floor, stores, identities)
        if config.cluster.image_mirror:
            mirror = self.image_mirror(name, config, floor)
            facts = replace(facts, triton_image_repository=mirror.image_repository, exports={**facts.exports, **mirror.exports})
        self.facts = facts
        self.register_outputs(
            {
                "cluster_name": self.facts.cluster_name,
                "model_repositories": self.facts.model_repositories,
                **self.facts.exports,
            }
        )

    @abstractmethod
    def build_cluster(self, name: str, config: StackConfig) -> Floor:
        """The cloud's network, cluster, GPU capacity and cluster add-ons, as children of this component; returns
        what the later steps need (the cluster, its Kubernetes provider, config slices)."""

    def model_bucket(self, name: str, floor: Floor, request: BucketRequest) -> ModelStore:
        """One private, versioned model bucket, `<name>-<bucket>`, a child of this adapter with the cloud's provider;
        the store it gives is its URI and what the identities' grants name."""
        bucket = self.bucket(f"{name}-{request.name}", floor, request)
        return ModelStore(uri=bucket.uri, grant_target=bucket.grant_target)

    @abstractmethod
    def bucket(self, name: str, floor: Floor, request: BucketRequest) -> BucketComponent:
        """The cloud's model bucket component `name` for one request, a child of this adapter (`floor.children`)."""

    @abstractmethod
    def triton_identities(
        self, name: str, floor: Floor, requests: list[IdentityRequest], stores: dict[str, ModelStore]
    ) -> dict[str, TritonIdentity]:
        """Per request (deployment name -> identity): read on `stores[request.bucket]` for that ServiceAccount only."""

    @abstractmethod
    def cluster_facts(
        self, config: StackConfig, floor: Floor, stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]
    ) -> ClusterFacts:
        """The facts for the Kubernetes layer; `shared_facts(stores, identities)` fills the fields all clouds share."""

    @abstractmethod
    def image_mirror(self, name: str, config: StackConfig, floor: Floor) -> ImageMirror:
        """The registry in the stack's cloud and region the Triton images are pulled from (cluster.imageMirror on)."""


def shared_facts(stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]) -> dict[str, Any]:
    """The ClusterFacts fields every adapter fills the same way from its buckets and identities."""
    return {
        "model_repositories": {name: store.uri for name, store in stores.items()},
        "service_account_annotations": {name: identity.annotations for name, identity in identities.items()},
    }
