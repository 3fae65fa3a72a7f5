"""The GCP adapter: a VPC-native GKE cluster, GPU node pools, GCS buckets and Workload Identity, built through the
cloud-adapter contract (components/contract.py).

The config is read here, once, and each builder gets its slice. Decisions live in plain modules (node_pools.py,
drivers.py, identity.py, exposure.py); network.py, cluster.py, gpu_pools.py and workload_identity.py build them.
Those builders are functions, not components, so every GKE resource stays a direct child of this component and keeps
the URN it has in existing stacks. See docs/gcp.md.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.contract import (
    BucketRequest,
    CloudAdapter,
    ClusterFacts,
    IdentityRequest,
    ModelStore,
    TritonIdentity,
    shared_facts,
)
from components.gcp.bucket import ModelBucket, ModelBucketArgs
from components.gcp.cluster import GkeClusterArgs, create_cluster, create_node_account, kubeconfig
from components.gcp.drivers import gke_gpu_operator_values, gpu_driver_setup, gpu_operator_resource_quota
from components.gcp.exposure import gcp_exposure_facts
from components.gcp.gpu_pools import GpuNodePoolArgs, create_gpu_node_pool
from components.gcp.network import GkeNetworkArgs, create_network
from components.gcp.node_pools import SYSTEM_MACHINE_TYPE, gpu_node_pool_specs, system_pool_nodes_per_zone
from components.gcp.workload_identity import TritonIdentityArgs, create_triton_identity
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import resource_name
from tritonfleet.core.scheduling import pool_facts


class GcpCloud(CloudAdapter):
    """The GCP floor: GKE Standard with GPU node pools, GCS model buckets and Workload Identity."""

    cloud = "gcp"

    def build_cluster(self, name: str, config: StackConfig) -> None:
        provider = gcp.Provider(
            f"{name}-gcp", project=config.gcp_project, region=config.region, opts=pulumi.ResourceOptions(parent=self)
        )
        self._children = child = pulumi.ResourceOptions(parent=self, provider=provider)
        self._stack, self._project = config.stack, config.gcp_project

        node_account = create_node_account(
            name,
            account_id=resource_name(config.stack, "nodes"),
            display_name=f"GKE nodes of {config.cluster_name}",
            project=config.gcp_project,
            opts=child,
        )
        network = create_network(
            name, GkeNetworkArgs(stack=config.stack, region=config.region, protected=config.protected), opts=child
        )
        system = config.cluster.system_nodes
        self._cluster = cluster = create_cluster(
            name,
            GkeClusterArgs(
                cluster_name=config.cluster_name,
                project=config.gcp_project,
                region=config.region,
                zones=list(config.cluster.zones),
                release_channel=config.cluster.gke_release_channel,
                kubernetes_version=config.cluster.kubernetes_version,
                node_service_account=node_account.email,
                system_machine_type=system.instance_type or SYSTEM_MACHINE_TYPE,
                system_node_count=system.count,
                system_nodes_per_zone=system_pool_nodes_per_zone(config),
                protected=config.protected,
                labels=config.tags,
            ),
            network,
            opts=child,
        )

        self._pools = {}
        self._node_pool_names: dict[str, list[pulumi.Output[str]]] = {}
        for pool in config.enabled_pools:
            self._pools[pool.name] = pool_facts(config, pool)
            self._node_pool_names[pool.name] = [
                create_gpu_node_pool(
                    name,
                    GpuNodePoolArgs(
                        spec=spec,
                        cluster_name=cluster.name,
                        region=config.region,
                        node_service_account=node_account.email,
                        protected=config.protected,
                        labels=config.tags,
                    ),
                    opts=child,
                ).name
                for spec in gpu_node_pool_specs(config, pool)
            ]

        self._kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate).apply(
                lambda args: kubeconfig(args[0], args[1], args[2])
            )
        )
        self._k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=self._kubeconfig, opts=pulumi.ResourceOptions(parent=self))
        self._bucket_location = config.region.upper()

    def model_bucket(self, name: str, request: BucketRequest) -> ModelStore:
        bucket = ModelBucket(
            f"{name}-{request.name}",
            ModelBucketArgs(
                bucket_name=request.physical_name,
                location=self._bucket_location,
                noncurrent_version_days=request.noncurrent_version_days,
                kms_key_name=request.kms_key,
                protected=request.protected,
                labels=request.labels,
            ),
            opts=self._children,
        )
        return ModelStore(uri=bucket.uri, grant_target=bucket.name)

    def triton_identities(
        self, name: str, requests: list[IdentityRequest], stores: dict[str, ModelStore]
    ) -> dict[str, TritonIdentity]:
        return {
            request.deployment: create_triton_identity(
                name,
                TritonIdentityArgs(
                    request=request,
                    bucket_name=stores[request.bucket].grant_target,
                    stack=self._stack,
                    project=self._project,
                    cluster=self._cluster,
                ),
                opts=self._children,
            )
            for request in requests
        }

    def cluster_facts(
        self, name: str, config: StackConfig, stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]
    ) -> ClusterFacts:
        return ClusterFacts(
            cluster_name=self._cluster.name,
            provider=self._k8s_provider,
            kubeconfig=self._kubeconfig,
            pools=self._pools,
            **shared_facts(stores, identities),
            exposure=gcp_exposure_facts(),
            gpu_operator_values=gke_gpu_operator_values(gpu_driver_setup(config), config.cluster.kubernetes_version),
            gpu_operator_resource_quota=gpu_operator_resource_quota(config),
            exports={
                "gkeNodePools": self._node_pool_names,
                "tritonServiceAccounts": {deployment: identity.export for deployment, identity in identities.items()},
            },
        )
