"""The GKE cluster: a regional Standard cluster with private nodes and Workload Identity, its node service account,
and a small system node pool. Builders are functions whose resources are children of the GCP adapter."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from components.gcp.network import GkeNetwork
from tritonfleet.clouds.gcp.exposure import gke_control_plane_access
from tritonfleet.clouds.gcp.facts import (
    ADVANCED_DATAPATH,
    GKE_AUTH_PLUGIN,
    GKE_GATEWAY_API_CHANNEL,
    GKE_MONITORING_COMPONENTS,
    project_apis,
)
from tritonfleet.clouds.gcp.layout import CONTROL_PLANE_CIDR, PODS_RANGE, SERVICES_RANGE
from tritonfleet.clouds.gcp.maintenance import Maintenance
from tritonfleet.clouds.gcp.node_pools import SYSTEM_DISK_GB, SYSTEM_MACHINE_TYPE
from tritonfleet.core.exposure import ControlPlaneAccess

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# The least-privilege role GKE documents for a custom node service account (logs, metrics, image pulls).
NODE_SERVICE_ACCOUNT_ROLE = "roles/container.defaultNodeServiceAccount"


def kubeconfig(name: str, dns_endpoint: str) -> str:
    """The kubeconfig for people: the DNS-based endpoint, authenticated by gke-gcloud-auth-plugin (no credentials in
    it). The endpoint's certificate is publicly trusted, so no cluster CA is given (facts.DNS_ENDPOINT_PERMISSION)."""
    return _kubeconfig(
        name,
        dns_endpoint,
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        f"      command: {GKE_AUTH_PLUGIN}\n      provideClusterInfo: true\n",
    )


def provider_kubeconfig(name: str, dns_endpoint: str, access_token: str) -> str:
    """The stack's Kubernetes provider's kubeconfig: the DNS-based endpoint with the deployer's OAuth access token,
    so `pulumi up` runs nothing the CI runner lacks (gke-gcloud-auth-plugin is not on hosted runners). The token lives
    about an hour (facts.ACCESS_TOKEN_LIFETIME_S): an `up` whose Kubernetes steps run later fails with 401, and a
    second `up` carries on (docs/access.md)."""
    return _kubeconfig(name, dns_endpoint, f"    token: {access_token}\n")


def _kubeconfig(name: str, dns_endpoint: str, user: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {name}\n  cluster:\n    server: https://{dns_endpoint}\n"
        f"contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        f"current-context: {name}\n"
        f"users:\n- name: {name}\n  user:\n{user}"
    )


def dns_endpoint(cluster: gcp.container.Cluster) -> pulumi.Output[str]:
    """The cluster's DNS-based control-plane endpoint (a name under gke.goog)."""
    return cluster.control_plane_endpoints_config.apply(lambda config: config.dns_endpoint_config.endpoint)


def workload_pool(project: str | None) -> str:
    """The Workload Identity pool of a project's GKE clusters."""
    return f"{project}.svc.id.goog"


@dataclass(frozen=True)
class GkeClusterArgs:
    """The slice of the stack config the cluster and its system pool are built from."""

    cluster_name: str
    """The GKE cluster's name."""
    project: str | None
    """The GCP project (None: the provider's)."""
    region: str
    """The cluster's region (a regional cluster)."""
    zones: list[str]
    """Zones of the nodes; empty: GKE's default zones of the region."""
    release_channel: str
    """The GKE release channel."""
    kubernetes_version: str
    """The minimum control-plane version."""
    node_service_account: pulumi.Input[str]
    """The email of the service account every node runs as (`create_node_account`)."""
    system_machine_type: str = SYSTEM_MACHINE_TYPE
    """Machine type of the system pool."""
    system_node_count: int = 1
    """System nodes in total (the pool's autoscaling bounds hold it there)."""
    system_nodes_per_zone: int = 1
    """Initial system nodes per zone (`node_pools.system_pool_layout`)."""
    system_zones: list[str] = field(default_factory=list)
    """Zones of the system pool (`node_pools.system_pool_layout`); empty: the cluster's."""
    node_account_binding: pulumi.Resource | None = None
    """The node account's role binding: every node pool (the temporary default pool too) waits for it."""
    maintenance: Maintenance | None = None
    """The maintenance window and exclusion (`maintenance.maintenance_for`); None: GKE's defaults."""
    protected: bool = False
    """Protect the cluster and its pools, and turn on deletion protection."""
    labels: dict[str, str] = field(default_factory=dict)
    """The stack's tags, as resource labels."""
    control_plane: ControlPlaneAccess = ControlPlaneAccess(())
    """Who reaches the API: the cluster's network always, from outside only these CIDRs (authorized networks)."""
    control_plane_cidr: str = CONTROL_PLANE_CIDR
    """The control plane's /28 (`layout.planned_ranges`)."""
    gateway_api: bool = False
    """Serve the Gateway API (a deployment's load balancer is a GKE Gateway: `exposure.needs_gateway_api`)."""


def enable_project_apis(
    name: str, project: str | None, uses_kms: bool, opts: pulumi.ResourceOptions
) -> list[gcp.projects.Service]:
    """One projects.Service per API. Never disabled on destroy: other workloads in the project may use them."""
    return [
        gcp.projects.Service(
            f"{name}-api-{api.split('.')[0]}",
            project=project,
            service=api,
            disable_on_destroy=False,
            disable_dependent_services=False,
            opts=opts,
        )
        for api in project_apis(uses_kms)
    ]


def create_node_account(
    name: str, account_id: str, display_name: str, project: str | None, opts: pulumi.ResourceOptions
) -> tuple[gcp.serviceaccount.Account, gcp.projects.IAMMember]:
    """The nodes' own service account with only the role GKE documents for nodes (not the Compute default account),
    and that role's binding, which node pools must wait for."""
    account = gcp.serviceaccount.Account(
        f"{name}-nodes", account_id=account_id, display_name=display_name, project=project, opts=opts
    )
    binding = gcp.projects.IAMMember(
        f"{name}-nodes-role",
        project=project,
        role=NODE_SERVICE_ACCOUNT_ROLE,
        member=account.email.apply(lambda email: f"serviceAccount:{email}"),
        opts=opts,
    )
    return account, binding


def maintenance_policy(maintenance: Maintenance | None) -> gcp.container.ClusterMaintenancePolicyArgs | None:
    if maintenance is None:
        return None
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
            start_time=maintenance.window_start, end_time=maintenance.window_end, recurrence=maintenance.recurrence
        ),
        maintenance_exclusions=[
            gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                exclusion_name=maintenance.exclusion_name,
                start_time=maintenance.exclusion_start,
                exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                    scope=maintenance.exclusion_scope, end_time_behavior=maintenance.exclusion_end_behavior
                ),
            )
        ],
    )


def create_cluster(name: str, args: GkeClusterArgs, network: GkeNetwork, opts: pulumi.ResourceOptions) -> gcp.container.Cluster:
    """A VPC-native regional GKE Standard cluster with private nodes and a system pool (its default pool removed)."""
    after_binding = [args.node_account_binding] if args.node_account_binding else []
    protected = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=args.protected, depends_on=after_binding))
    control_plane = gke_control_plane_access(args.control_plane)
    cluster = gcp.container.Cluster(
        f"{name}-gke",
        name=args.cluster_name,
        location=args.region,
        node_locations=args.zones or None,
        network=network.network.self_link,
        subnetwork=network.subnet.self_link,
        networking_mode="VPC_NATIVE",
        # Dataplane V2 (eBPF) enforces NetworkPolicy; it is chosen when the cluster is created (changing it replaces
        # the cluster: tritonfleet diff says so, and prod refuses it without an acknowledgement).
        datapath_provider=ADVANCED_DATAPATH,
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_secondary_range_name=PODS_RANGE, services_secondary_range_name=SERVICES_RANGE
        ),
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_nodes=True,
            enable_private_endpoint=control_plane["enable_private_endpoint"],
            master_ipv4_cidr_block=args.control_plane_cidr,
        ),
        master_authorized_networks_config=control_plane["master_authorized_networks_config"],
        # The DNS-based endpoint: how `pulumi up` (the Kubernetes provider) and people reach the API from anywhere,
        # IAM-authenticated, while the IP endpoint stays as controlPlaneCidrs says (private in prod).
        control_plane_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigArgs(
            dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
                allow_external_traffic=True
            )
        ),
        release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
        min_master_version=args.kubernetes_version,
        workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(workload_pool=workload_pool(args.project)),
        enable_shielded_nodes=True,
        remove_default_node_pool=True,
        initial_node_count=1,
        # The temporary default pool runs as the nodes' own account too, never the Compute Engine default account.
        node_config=gcp.container.ClusterNodeConfigArgs(
            service_account=args.node_service_account, oauth_scopes=[CLOUD_PLATFORM_SCOPE]
        ),
        maintenance_policy=maintenance_policy(args.maintenance),
        # The stack's kube-prometheus-stack scrapes the cluster: no idle managed-Prometheus collectors beside it.
        monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
            enable_components=list(GKE_MONITORING_COMPONENTS),
            managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=False),
        ),
        gateway_api_config=(
            gcp.container.ClusterGatewayApiConfigArgs(channel=GKE_GATEWAY_API_CHANNEL) if args.gateway_api else None
        ),
        resource_labels=args.labels,
        deletion_protection=args.protected,
        opts=protected,
    )
    gcp.container.NodePool(
        f"{name}-system",
        name="system",
        cluster=cluster.name,
        location=args.region,
        node_locations=args.system_zones or args.zones or None,
        initial_node_count=args.system_nodes_per_zone,
        autoscaling=gcp.container.NodePoolAutoscalingArgs(
            total_min_node_count=args.system_node_count,
            total_max_node_count=args.system_node_count,
            location_policy="BALANCED",
        ),
        management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
        node_config=gcp.container.NodePoolNodeConfigArgs(
            machine_type=args.system_machine_type,
            image_type="COS_CONTAINERD",
            disk_size_gb=SYSTEM_DISK_GB,
            service_account=args.node_service_account,
            oauth_scopes=[CLOUD_PLATFORM_SCOPE],
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
            resource_labels=args.labels,
        ),
        # An explicit name cannot exist twice: a replacement must delete the old pool first.
        opts=pulumi.ResourceOptions.merge(protected, pulumi.ResourceOptions(delete_before_replace=True)),
    )
    return cluster
