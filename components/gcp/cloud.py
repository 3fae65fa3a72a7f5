"""The GCP floor: turns a StackConfig into a GKE cluster, GPU node pools and GCS buckets, and hands up ClusterFacts.

Decisions (pool shapes, driver mode, operator values, identity names) live in plain modules next to this one:
node_pools.py, drivers.py, identity.py. This file only turns them into resources. See docs/gcp.md.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.facts import ClusterFacts
from components.gcp.bucket import ModelBucket, ModelBucketArgs
from components.gcp.drivers import gke_gpu_operator_values, gpu_driver_setup, gpu_operator_resource_quota
from components.gcp.exposure import gcp_exposure_facts
from components.gcp.identity import (
    TRITON_BUCKET_ROLES,
    WORKLOAD_IDENTITY_ANNOTATION,
    WORKLOAD_IDENTITY_USER,
    service_account_id,
    workload_identity_member,
)
from components.gcp.node_pools import (
    RESERVATION_KEY,
    SYSTEM_DISK_GB,
    SYSTEM_MACHINE_TYPE,
    GpuNodePoolSpec,
    gpu_node_pool_specs,
    system_pool_nodes_per_zone,
)
from tritonfleet.core.config import StackConfig, physical_bucket_name
from tritonfleet.core.conventions import resource_name, triton_service_account
from tritonfleet.core.scheduling import pool_facts

# Address plan of the VPC this stack creates (VPC-native: pods and services come from secondary ranges).
NODE_CIDR = "10.10.0.0/20"
POD_CIDR = "10.16.0.0/14"
SERVICE_CIDR = "10.20.0.0/20"
CONTROL_PLANE_CIDR = "172.16.0.0/28"
PODS_RANGE, SERVICES_RANGE = "pods", "services"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# The least-privilege role GKE documents for a custom node service account (logs, metrics, image pulls).
NODE_SERVICE_ACCOUNT_ROLE = "roles/container.defaultNodeServiceAccount"


def kubeconfig(name: str, endpoint: str, ca_data: str) -> str:
    """A kubeconfig that authenticates with gke-gcloud-auth-plugin (no static credentials)."""
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {name}\n  cluster:\n    server: https://{endpoint}\n    certificate-authority-data: {ca_data}\n"
        f"contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        f"current-context: {name}\n"
        f"users:\n- name: {name}\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: gke-gcloud-auth-plugin\n      provideClusterInfo: true\n"
    )


class GcpCloud(pulumi.ComponentResource):
    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:gcp:GcpCloud", name, None, opts)
        self._name = name
        self._config = config
        provider = gcp.Provider(
            f"{name}-gcp", project=config.gcp_project, region=config.region, opts=pulumi.ResourceOptions(parent=self)
        )
        self._child = pulumi.ResourceOptions(parent=self, provider=provider)
        self._protected = pulumi.ResourceOptions(parent=self, provider=provider, protect=config.protected)
        stack = config.stack

        self._node_account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            account_id=resource_name(stack, "nodes"),
            display_name=f"GKE nodes of {config.cluster_name}",
            project=config.gcp_project,
            opts=self._child,
        )
        gcp.projects.IAMMember(
            f"{name}-nodes-role",
            project=config.gcp_project,
            role=NODE_SERVICE_ACCOUNT_ROLE,
            member=self._node_account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=self._child,
        )
        cluster = self._cluster()

        self.node_pool_names: dict[str, list[pulumi.Output[str]]] = {}
        pools = {}
        for pool in config.enabled_pools:
            pools[pool.name] = pool_facts(config, pool)
            specs = gpu_node_pool_specs(config, pool)
            self.node_pool_names[pool.name] = [self._gpu_node_pool(cluster, spec).name for spec in specs]

        repositories = {}
        self.buckets: dict[str, ModelBucket] = {}
        for bucket in config.model_buckets:
            self.buckets[bucket.name] = ModelBucket(
                f"{name}-{bucket.name}",
                ModelBucketArgs(
                    bucket_name=physical_bucket_name(bucket, stack),
                    location=config.region.upper(),
                    noncurrent_version_days=bucket.noncurrent_version_days,
                    kms_key_name=bucket.kms_key_id,
                    protected=config.protected,
                    labels=config.tags,
                ),
                opts=pulumi.ResourceOptions(parent=self, provider=provider),
            )
            repositories[bucket.name] = self.buckets[bucket.name].uri

        annotations, bindings = self._triton_identities(cluster, self.buckets)

        kubeconfig_text = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate).apply(
                lambda args: kubeconfig(args[0], args[1], args[2])
            )
        )
        k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig_text, opts=pulumi.ResourceOptions(parent=self))
        driver = gpu_driver_setup(config)
        self.facts = ClusterFacts(
            provider=k8s_provider,
            kubeconfig=kubeconfig_text,
            pools=pools,
            model_repositories=repositories,
            service_account_annotations=annotations,
            exposure=gcp_exposure_facts(),
            gpu_operator_values=gke_gpu_operator_values(driver, config.cluster.kubernetes_version),
            gpu_operator_resource_quota=gpu_operator_resource_quota(config),
            exports={"gkeNodePools": self.node_pool_names, "tritonServiceAccounts": bindings},
        )
        self.cluster_name = cluster.name
        self.register_outputs(
            {"cluster_name": cluster.name, "node_pools": self.node_pool_names, "triton_service_accounts": bindings}
        )

    def _cluster(self) -> gcp.container.Cluster:
        """A VPC-native regional GKE Standard cluster with private nodes, Cloud NAT for image pulls, and a system pool."""
        name, config = self._name, self._config
        stack = config.stack
        network = gcp.compute.Network(
            f"{name}-vpc", name=resource_name(stack, "vpc"), auto_create_subnetworks=False, opts=self._protected
        )
        subnet = gcp.compute.Subnetwork(
            f"{name}-nodes-subnet",
            name=resource_name(stack, "nodes"),
            network=network.self_link,
            region=config.region,
            ip_cidr_range=NODE_CIDR,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=POD_CIDR),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICES_RANGE, ip_cidr_range=SERVICE_CIDR),
            ],
            opts=self._protected,
        )
        # Private nodes have no public address: NAT lets them pull nvcr.io images (Triton, GPU Operator).
        router = gcp.compute.Router(
            f"{name}-router",
            name=resource_name(stack, "router"),
            network=network.self_link,
            region=config.region,
            opts=self._child,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            name=resource_name(stack, "nat"),
            router=router.name,
            region=config.region,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            opts=self._child,
        )
        cluster = gcp.container.Cluster(
            f"{name}-gke",
            name=config.cluster_name,
            location=config.region,
            node_locations=config.cluster.zones or None,
            network=network.self_link,
            subnetwork=subnet.self_link,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=PODS_RANGE, services_secondary_range_name=SERVICES_RANGE
            ),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True, enable_private_endpoint=False, master_ipv4_cidr_block=CONTROL_PLANE_CIDR
            ),
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=config.cluster.gke_release_channel),
            min_master_version=config.cluster.kubernetes_version,
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{config.gcp_project}.svc.id.goog"
            ),
            enable_shielded_nodes=True,
            remove_default_node_pool=True,
            initial_node_count=1,
            resource_labels=config.tags,
            deletion_protection=config.protected,
            opts=self._protected,
        )
        system = config.cluster.system_nodes
        gcp.container.NodePool(
            f"{name}-system",
            name="system",
            cluster=cluster.name,
            location=config.region,
            node_locations=config.cluster.zones or None,
            initial_node_count=system_pool_nodes_per_zone(config),
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=system.count, total_max_node_count=system.count, location_policy="BALANCED"
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=system.instance_type or SYSTEM_MACHINE_TYPE,
                image_type="COS_CONTAINERD",
                disk_size_gb=SYSTEM_DISK_GB,
                service_account=self._node_account.email,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                resource_labels=config.tags,
            ),
            opts=pulumi.ResourceOptions.merge(self._protected, pulumi.ResourceOptions(delete_before_replace=True)),
        )
        return cluster

    def _gpu_node_pool(self, cluster: gcp.container.Cluster, spec: GpuNodePoolSpec) -> gcp.container.NodePool:
        config = self._config
        reservation = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type=spec.reservation_affinity,
            key=RESERVATION_KEY if spec.reservation else None,
            values=[spec.reservation] if spec.reservation else None,
        )
        return gcp.container.NodePool(
            f"{self._name}-{spec.name}",
            name=spec.name,
            cluster=cluster.name,
            location=config.region,
            node_locations=spec.zones or None,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=spec.autoscaling.total_min,
                total_max_node_count=spec.autoscaling.total_max,
                location_policy=spec.autoscaling.location_policy,
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=spec.auto_repair, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=spec.machine_type,
                image_type=spec.driver.image_type,
                disk_size_gb=spec.disk_size_gb,
                disk_type=spec.disk_type,
                spot=spec.spot,
                flex_start=spec.flex_start or None,
                reservation_affinity=reservation,
                labels=spec.labels,
                taints=[gcp.container.NodePoolNodeConfigTaintArgs(**spec.taint)],
                guest_accelerators=[
                    gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                        type=spec.accelerator,
                        count=spec.accelerator_count,
                        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                            gpu_driver_version=spec.driver.driver_version
                        ),
                    )
                ],
                gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
                service_account=self._node_account.email,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=spec.driver.secure_boot, enable_integrity_monitoring=True
                ),
                resource_labels=config.tags,
            ),
            # An explicit name cannot exist twice: a replacement must delete the old pool first.
            opts=pulumi.ResourceOptions.merge(self._protected, pulumi.ResourceOptions(delete_before_replace=True)),
        )

    def _triton_identities(self, cluster: gcp.container.Cluster, buckets: dict[str, ModelBucket]):
        """Per Triton deployment: a Google service account its Kubernetes ServiceAccount may impersonate, reading one bucket."""
        name, config = self._name, self._config
        annotations: dict[str, dict[str, pulumi.Input[str]]] = {}
        bindings: dict[str, dict[str, pulumi.Input]] = {}
        for deployment in config.triton_deployments:
            bucket = buckets[config.bucket_for(deployment).name]
            account = gcp.serviceaccount.Account(
                f"{name}-triton-{deployment.name}",
                account_id=service_account_id(config.stack, deployment.name),
                display_name=f"Triton {deployment.namespace}/{deployment.name}: reads {config.bucket_for(deployment).name}",
                project=config.gcp_project,
                opts=self._child,
            )
            kubernetes_member = workload_identity_member(
                config.gcp_project or "", deployment.namespace, triton_service_account(deployment.name)
            )
            grants = [
                gcp.serviceaccount.IAMMember(
                    f"{name}-triton-{deployment.name}-wi",
                    service_account_id=account.name,
                    role=WORKLOAD_IDENTITY_USER,
                    member=kubernetes_member,
                    # The <project>.svc.id.goog pool exists only once a cluster with Workload Identity does.
                    opts=pulumi.ResourceOptions.merge(self._child, pulumi.ResourceOptions(depends_on=[cluster])),
                )
            ]
            google_member = account.email.apply(lambda email: f"serviceAccount:{email}")
            for role in TRITON_BUCKET_ROLES:
                grants.append(
                    gcp.storage.BucketIAMMember(
                        f"{name}-triton-{deployment.name}-{role.rsplit('.', 1)[-1]}",
                        bucket=bucket.name,
                        role=role,
                        member=google_member,
                        opts=self._child,
                    )
                )
            # The annotation resolves only once every grant exists, so Triton (which takes it) never starts with an
            # identity that cannot yet impersonate the account or read the bucket.
            annotations[deployment.name] = {
                WORKLOAD_IDENTITY_ANNOTATION: pulumi.Output.all(account.email, *(g.id for g in grants)).apply(
                    lambda args: args[0]
                )
            }
            bindings[deployment.name] = {
                "kubernetesServiceAccount": f"{deployment.namespace}/{triton_service_account(deployment.name)}",
                "googleServiceAccount": account.email,
                "bucket": bucket.name,
                "roles": list(TRITON_BUCKET_ROLES),
            }
        return annotations, bindings
