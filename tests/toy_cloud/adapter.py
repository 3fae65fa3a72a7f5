"""The toy cloud's Pulumi adapter (components/contract.py's CloudAdapter), built of plain component resources: no
provider SDK, nothing a cloud would create. Its Kubernetes provider reads a stand-in kubeconfig."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.contract import (
    BucketRequest,
    CloudAdapter,
    ClusterFacts,
    IdentityRequest,
    ImageMirror,
    ModelStore,
    TritonIdentity,
    shared_facts,
)
from tests.toy_cloud import bill, resources
from tests.toy_cloud.cloud import CLOUD, MIRROR
from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import gpu_taint
from tritonfleet.core.scheduling import PoolFacts, pool_facts

IDENTITY_ANNOTATION = "toy.example/identity"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: toy
  cluster: {server: "https://toy.invalid:6443", insecure-skip-tls-verify: true}
users:
- name: toy
  user: {token: toy-offline-token}
contexts:
- name: toy
  context: {cluster: toy, user: toy}
current-context: toy
"""


class ToyResource(pulumi.ComponentResource):
    """One toy cloud resource: a component whose inputs are `props` (what the planned-resource readers read)."""

    def __init__(self, type_token: str, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions):
        super().__init__(type_token, name, props, opts)
        self.register_outputs({})


class ToyBucket(ToyResource):
    """A model bucket: its URI for Triton, and its name for the identities' grants."""

    def __init__(self, name: str, request: BucketRequest, opts: pulumi.ResourceOptions):
        props = {
            "bucketName": request.physical_name, "versioning": True,
            "noncurrentVersionDays": request.noncurrent_version_days, "tags": request.labels,
        }
        super().__init__(resources.BUCKET, name, props, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=request.protected)))
        self.uri = pulumi.Output.from_input(f"{CLOUD.uri_scheme}://{request.physical_name}")
        self.grant_target = pulumi.Output.from_input(request.physical_name)


@dataclass(frozen=True)
class ToyFloor:
    children: pulumi.ResourceOptions
    k8s_provider: k8s.Provider
    pools: dict[str, PoolFacts]
    node_pools: dict[str, list[str]]  # pool -> its toy node pools' names


class ToyCloud(CloudAdapter[ToyFloor]):
    """The toy floor: a cluster, a system node pool and one node pool per GPU pool and purchase option."""

    cloud = resources.NAME

    def build_cluster(self, name: str, config: StackConfig) -> ToyFloor:
        child = pulumi.ResourceOptions(parent=self)
        ToyResource(resources.PROVIDER, f"{name}-toy", {"region": config.region}, child)
        cluster = config.cluster_name
        ToyResource(
            resources.CLUSTER,
            f"{name}-cluster",
            {
                "name": cluster, "region": config.region, "kubernetesVersion": config.cluster.kubernetes_version,
                "networkPolicyEnforced": True, "deletionProtection": config.protected, "tags": config.tags,
            },
            pulumi.ResourceOptions(parent=self, protect=config.protected),
        )
        system = config.cluster.system_nodes.count
        ToyResource(
            resources.NODE_POOL,
            f"{name}-system",
            resources.node_pool_props(
                cluster, "system", bill.system_instance_type(config), system, system, False, [], bill.SYSTEM_DISK_GI
            ),
            child,
        )
        node_pools: dict[str, list[str]] = {}
        for pool in config.enabled_pools:
            machine = config.instance_type(pool).name
            for option, nodes in split_capacity(pool).purchase.items():
                pool_name = f"{name}-{pool.name}-{option}"
                props = resources.node_pool_props(
                    cluster, pool.name, machine, nodes.min, nodes.max, option == "spot", [gpu_taint(config.cloud)],
                    pool.disk_gi,
                )
                ToyResource(resources.NODE_POOL, pool_name, props, child)
                node_pools.setdefault(pool.name, []).append(pool_name)
        provider = k8s.Provider(f"{name}-k8s", kubeconfig=KUBECONFIG, opts=child)
        pools = {pool.name: pool_facts(config, pool) for pool in config.enabled_pools}
        return ToyFloor(children=child, k8s_provider=provider, pools=pools, node_pools=node_pools)

    def bucket(self, name: str, floor: ToyFloor, request: BucketRequest) -> ToyBucket:
        return ToyBucket(name, request, floor.children)

    def triton_identities(
        self, name: str, floor: ToyFloor, requests: list[IdentityRequest], stores: dict[str, ModelStore]
    ) -> dict[str, TritonIdentity]:
        identities = {}
        for request in requests:
            props = {
                "namespace": request.namespace, "serviceAccount": request.service_account, "bucket": request.bucket,
                "prefix": request.model_prefix,
            }
            ToyResource(resources.IDENTITY, f"{name}-{request.deployment}-reader", props, floor.children)
            identity = f"{request.namespace}/{request.service_account}"
            identities[request.deployment] = TritonIdentity(annotations={IDENTITY_ANNOTATION: identity}, export=identity)
        return identities

    def cluster_facts(
        self, config: StackConfig, floor: ToyFloor, stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]
    ) -> ClusterFacts:
        return ClusterFacts(
            cluster_name=pulumi.Output.from_input(config.cluster_name),
            provider=floor.k8s_provider,
            kubeconfig=pulumi.Output.secret(KUBECONFIG),
            pools=floor.pools,
            **shared_facts(stores, identities),
            exposure=CLOUD.exposure_facts(),
            exports={"toyNodePools": floor.node_pools},
        )

    def image_mirror(self, name: str, config: StackConfig, floor: ToyFloor) -> ImageMirror:
        ToyResource(resources.REGISTRY, f"{name}-registry", {"region": config.region, "mirrors": "nvcr.io"}, floor.children)
        return ImageMirror(pulumi.Output.from_input(MIRROR), {"tritonImageMirror": MIRROR})
