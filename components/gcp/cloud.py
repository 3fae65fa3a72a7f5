"""The GCP adapter: a VPC-native GKE cluster, GPU node pools, GCS buckets and Workload Identity, built through the
cloud-adapter contract (components/contract.py).

The config is read here, once, and each builder gets its slice. Decisions live in plain modules (node_pools.py,
drivers.py, identity.py, exposure.py); network.py, cluster.py, gpu_pools.py and workload_identity.py build them.
Those builders are functions, not components, so every GKE resource stays a direct child of this component and keeps
the URN it has in existing stacks. See docs/gcp.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
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
from components.gcp.bucket import ModelBucket
from components.gcp.cluster import (
    GkeClusterArgs,
    create_cluster,
    create_node_account,
    dns_endpoint,
    enable_project_apis,
    kubeconfig,
    provider_kubeconfig,
)
from components.gcp.compute_classes import create_compute_class
from components.gcp.gpu_pools import GpuNodePoolArgs, create_gpu_node_pool
from components.gcp.network import GkeNetworkArgs, create_network
from components.gcp.workload_identity import TritonIdentityArgs, create_triton_identity
from tritonfleet.clouds.gcp.compute_classes import compute_class_specs, gke_pool_facts
from tritonfleet.clouds.gcp.config_rules import node_account_id
from tritonfleet.clouds.gcp.drivers import (
    cos_driver_installer,
    gke_gpu_operator_values,
    gpu_driver_setup,
    gpu_operator_resource_quota,
)
from tritonfleet.clouds.gcp.exposure import gcp_exposure_facts, gke_ip_endpoint_access, needs_gateway_api, proxy_only_ports
from tritonfleet.clouds.gcp.image_mirror import streams
from tritonfleet.clouds.gcp.layout import needs_proxy_only_subnet, planned_ranges, proxy_only_cidr
from tritonfleet.clouds.gcp.maintenance import maintenance_for
from tritonfleet.clouds.gcp.monitoring import gcp_monitoring_facts
from tritonfleet.clouds.gcp.node_pools import SYSTEM_MACHINE_TYPE, gpu_node_pool_specs, system_pool_layout
from tritonfleet.core.config import StackConfig
from tritonfleet.core.scheduling import PoolFacts


@dataclass(frozen=True)
class GkeFloor:
    """What the GCP adapter's later steps need from its cluster."""

    children: pulumi.ResourceOptions  # parent: the adapter; provider: the stack project's GCP provider
    cluster: gcp.container.Cluster
    k8s_provider: k8s.Provider
    kubeconfig: pulumi.Output[str]  # secret
    pools: dict[str, PoolFacts]
    node_pool_names: dict[str, list[pulumi.Output[str]]]  # pool -> its GKE node pools' names
    compute_classes: list[pulumi.CustomResource]  # one per head pool; Triton releases wait for them
    project: str | None
    bucket_location: str
    node_account_email: pulumi.Output[str]  # the nodes' service account: what pulls images  # the region, as GCS spells a regional location


class GcpCloud(CloudAdapter[GkeFloor]):
    """The GCP floor: GKE Standard with GPU node pools, GCS model buckets and Workload Identity."""

    cloud = "gcp"

    def build_cluster(self, name: str, config: StackConfig) -> GkeFloor:
        provider = gcp.Provider(
            f"{name}-gcp", project=config.gcp_project, region=config.region, opts=pulumi.ResourceOptions(parent=self)
        )
        apis = enable_project_apis(
            name,
            config.gcp_project,
            uses_kms=any(b.kms_key_id for b in config.model_buckets),
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        # Everything else waits for the project's APIs.
        child = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=apis)

        node_account, node_account_binding = create_node_account(
            name,
            account_id=node_account_id(config.cluster_name),
            display_name=f"GKE nodes of {config.cluster_name}",
            project=config.gcp_project,
            opts=child,
        )
        ranges = planned_ranges(config.cluster.gke_ranges)
        network = create_network(
            name,
            GkeNetworkArgs(
                stack=config.stack,
                region=config.region,
                protected=config.protected,
                proxy_only_cidr=proxy_only_cidr(config) if needs_proxy_only_subnet(config) else None,
                proxy_only_ports=proxy_only_ports(config.triton_deployments),
                ranges=ranges,
            ),
            opts=child,
        )
        system = config.cluster.system_nodes
        system_layout = system_pool_layout(config)
        cluster = create_cluster(
            name,
            GkeClusterArgs(
                cluster_name=config.cluster_name,
                project=config.gcp_project,
                region=config.region,
                zones=list(config.cluster.zones),
                release_channel=config.cluster.gke_release_channel,
                kubernetes_version=config.cluster.gke_build,
                node_service_account=node_account.email,
                system_machine_type=system.instance_type or SYSTEM_MACHINE_TYPE,
                system_node_count=system_layout.total,
                system_nodes_per_zone=system_layout.nodes_per_zone,
                system_zones=system_layout.zones,
                node_account_binding=node_account_binding,
                maintenance=maintenance_for(config.environment),
                protected=config.protected,
                labels=config.tags,
                control_plane=gke_ip_endpoint_access(config.cluster.control_plane_cidrs, config.environment),
                control_plane_cidr=ranges["control-plane"],
                gateway_api=needs_gateway_api(config.triton_deployments),
            ),
            network,
            opts=child,
        )

        pools = {}
        node_pools: dict[str, list[gcp.container.NodePool]] = {}
        for pool in config.enabled_pools:
            pools[pool.name] = gke_pool_facts(config, pool)
            node_pools[pool.name] = [
                create_gpu_node_pool(
                    name,
                    GpuNodePoolArgs(
                        spec=spec,
                        cluster_name=cluster.name,
                        region=config.region,
                        node_service_account=node_account.email,
                        protected=config.protected,
                        labels=config.tags,
                        after=[node_account_binding],
                        image_streaming=config.cluster.image_mirror and streams(spec.driver.image_type),
                    ),
                    opts=child,
                )
                for spec in gpu_node_pool_specs(config, pool)
            ]

        endpoint = dns_endpoint(cluster)
        kubeconfig_text = pulumi.Output.secret(pulumi.Output.all(cluster.name, endpoint).apply(lambda a: kubeconfig(*a)))
        # The deployer's own token (docs/access.md: nothing for the CI runner to install, valid about an hour).
        token = gcp.organizations.get_client_config_output(opts=pulumi.InvokeOptions(parent=self, provider=provider))
        k8s_provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=pulumi.Output.secret(
                pulumi.Output.all(cluster.name, endpoint, token.access_token).apply(lambda a: provider_kubeconfig(*a))
            ),
            # Replaced (with every Kubernetes object) only when the cluster is, not when its endpoint or token moves.
            cluster_identifier=cluster.id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        by_gke_name = {
            spec.name: node_pool
            for pool in config.enabled_pools
            for spec, node_pool in zip(gpu_node_pool_specs(config, pool), node_pools[pool.name], strict=True)
        }
        compute_classes = [
            create_compute_class(
                name,
                spec,
                pulumi.ResourceOptions(
                    parent=self, provider=k8s_provider, depends_on=[by_gke_name[n] for n in spec.node_pools]
                ),
            )
            for spec in compute_class_specs(config)
        ]
        if gpu_driver_setup(config).installer == "google-installer":
            installer = cos_driver_installer()
            k8s.apps.v1.DaemonSet(
                f"{name}-nvidia-driver-installer",
                metadata=installer["metadata"],
                spec=installer["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider),
            )
        return GkeFloor(
            children=child,
            cluster=cluster,
            k8s_provider=k8s_provider,
            kubeconfig=kubeconfig_text,
            pools=pools,
            node_pool_names={pool: [node_pool.name for node_pool in group] for pool, group in node_pools.items()},
            compute_classes=compute_classes,
            project=config.gcp_project,
            bucket_location=config.region.upper(),
            node_account_email=node_account.email,
        )

    def bucket(self, name: str, floor: GkeFloor, request: BucketRequest) -> ModelBucket:
        return ModelBucket(name, request, floor.bucket_location, opts=floor.children)

    def triton_identities(
        self, name: str, floor: GkeFloor, requests: list[IdentityRequest], stores: dict[str, ModelStore]
    ) -> dict[str, TritonIdentity]:
        project = gcp.organizations.get_project_output(
            project_id=floor.project, opts=pulumi.InvokeOptions(parent=self, provider=floor.children.provider)
        )
        return {
            request.deployment: create_triton_identity(
                name,
                TritonIdentityArgs(
                    request=request,
                    bucket_name=stores[request.bucket].grant_target,
                    project=floor.project,
                    project_number=project.number,
                    cluster=floor.cluster,
                ),
                opts=floor.children,
            )
            for request in requests
        }

    def image_mirror(self, name: str, config: StackConfig, floor: GkeFloor) -> ImageMirror:
        from components.gcp.image_mirror import create_image_mirror

        repository, image = create_image_mirror(
            name, floor.project, config.region, config.tags, floor.node_account_email, floor.children
        )
        return ImageMirror(image, {"tritonImageMirror": image})

    def cluster_facts(
        self, config: StackConfig, floor: GkeFloor, stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]
    ) -> ClusterFacts:
        return ClusterFacts(
            cluster_name=floor.cluster.name,
            provider=floor.k8s_provider,
            kubeconfig=floor.kubeconfig,
            pools=floor.pools,
            **shared_facts(stores, identities),
            exposure=gcp_exposure_facts(proxy_only_cidr(config)),
            monitoring=gcp_monitoring_facts(),
            gpu_operator_values=gke_gpu_operator_values(gpu_driver_setup(config), config.cluster.kubernetes_version),
            gpu_operator_resource_quota=gpu_operator_resource_quota(config),
            triton_depends_on=list(floor.compute_classes),
            exports={
                "gkeNodePools": floor.node_pool_names,
                "tritonServiceAccounts": {deployment: identity.export for deployment, identity in identities.items()},
            },
        )
