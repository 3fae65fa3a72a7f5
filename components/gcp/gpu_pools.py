"""GKE GPU node pools, built from the specs node_pools.py decides. Builders are functions whose resources are children
of the GCP adapter."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from components.gcp.cluster import CLOUD_PLATFORM_SCOPE
from tritonfleet.clouds.gcp.node_pools import RESERVATION_KEY, GpuNodePoolSpec


@dataclass(frozen=True)
class GpuNodePoolArgs:
    """One GKE GPU node pool: its decided spec, and the cluster it joins."""

    spec: GpuNodePoolSpec
    """Shape, accelerator, driver, capacity and bounds (`node_pools.gpu_node_pool_specs`)."""
    cluster_name: pulumi.Input[str]
    """The GKE cluster the pool belongs to."""
    region: str
    """The cluster's region."""
    node_service_account: pulumi.Input[str]
    """The email of the service account the nodes run as."""
    protected: bool = False
    """Protect the pool."""
    labels: dict[str, str] = field(default_factory=dict)
    """The stack's tags, as resource labels."""
    after: list[pulumi.Resource] = field(default_factory=list)
    """What the pool waits for: the node account's role binding (nodes without it cannot pull images or log)."""
    image_streaming: bool = False
    """GKE image streaming (gcfs_config): with the image mirror, on COS nodes (tritonfleet/clouds/gcp/image_mirror.py)."""


def create_gpu_node_pool(name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions) -> gcp.container.NodePool:
    """The node pool `args.spec` describes, named `<name>-<spec.name>`."""
    spec = args.spec
    reservation = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
        consume_reservation_type=spec.reservation_affinity,
        key=RESERVATION_KEY if spec.reservation else None,
        values=[spec.reservation] if spec.reservation else None,
    )
    return gcp.container.NodePool(
        f"{name}-{spec.name}",
        name=spec.name,
        cluster=args.cluster_name,
        location=args.region,
        node_locations=spec.zones or None,
        autoscaling=gcp.container.NodePoolAutoscalingArgs(
            total_min_node_count=spec.autoscaling.total_min,
            total_max_node_count=spec.autoscaling.total_max,
            location_policy=spec.autoscaling.location_policy,
        ),
        management=gcp.container.NodePoolManagementArgs(auto_repair=spec.auto_repair, auto_upgrade=True),
        upgrade_settings=(
            gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", **spec.upgrade) if spec.upgrade else None
        ),
        node_config=gcp.container.NodePoolNodeConfigArgs(
            machine_type=spec.machine_type,
            image_type=spec.driver.image_type,
            disk_size_gb=spec.disk_size_gb,
            disk_type=spec.disk_type,
            spot=spec.spot,
            flex_start=spec.flex_start or None,
            max_run_duration=spec.max_run_duration,
            reservation_affinity=reservation,
            labels=spec.labels,
            taints=[gcp.container.NodePoolNodeConfigTaintArgs(**taint) for taint in spec.taints],
            kubelet_config=(
                gcp.container.NodePoolNodeConfigKubeletConfigArgs(
                    shutdown_grace_period_seconds=spec.shutdown.window_seconds,
                    shutdown_grace_period_critical_pods_seconds=spec.shutdown.window_seconds - spec.shutdown.pod_seconds,
                )
                if spec.shutdown
                else None
            ),
            ephemeral_storage_local_ssd_config=(
                gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(local_ssd_count=spec.local_ssds)
                if spec.local_ssds
                else None
            ),
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
            gcfs_config=gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=True) if args.image_streaming else None,
            service_account=args.node_service_account,
            oauth_scopes=[CLOUD_PLATFORM_SCOPE],
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=spec.driver.secure_boot, enable_integrity_monitoring=True
            ),
            resource_labels=args.labels,
        ),
        # An explicit name cannot exist twice: a replacement must delete the old pool first.
        opts=pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(protect=args.protected, delete_before_replace=True, depends_on=args.after)
        ),
    )
