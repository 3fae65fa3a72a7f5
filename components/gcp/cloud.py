"""The GCP floor: turns a StackConfig into a GKE cluster, GPU node pools and GCS buckets, and hands up ClusterFacts."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.facts import ClusterFacts
from components.gcp.exposure import gcp_exposure_facts
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import pool_node_labels, resource_name
from tritonfleet.core.cost import split_capacity
from tritonfleet.core.gpu_operator import PROFILES as GPU_OPERATOR_PROFILES
from tritonfleet.core.scheduling import pool_facts


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
        provider = gcp.Provider(f"{name}-gcp", project=config.gcp_project, region=config.region, opts=pulumi.ResourceOptions(parent=self))
        protected = pulumi.ResourceOptions(parent=self, provider=provider, protect=config.protected)
        stack = config.stack

        cluster = gcp.container.Cluster(
            f"{name}-gke",
            name=config.cluster_name,
            location=config.region,
            min_master_version=config.cluster.kubernetes_version,
            remove_default_node_pool=True,
            initial_node_count=1,
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{config.gcp_project}.svc.id.goog"
            ),
            resource_labels=config.tags,
            deletion_protection=config.protected,
            opts=protected,
        )

        pools = {}
        for pool in config.enabled_pools:
            facts = pool_facts(config, pool)
            pools[pool.name] = facts
            itype = config.instance_type(pool)
            for option, nodes in split_capacity(pool).purchase.items():
                gcp.container.NodePool(
                    f"{name}-{pool.name}-{option}",
                    cluster=cluster.name,
                    location=config.region,
                    autoscaling=gcp.container.NodePoolAutoscalingArgs(min_node_count=nodes.min, max_node_count=nodes.max),
                    node_config=gcp.container.NodePoolNodeConfigArgs(
                        machine_type=itype.name,
                        spot=option == "spot",
                        disk_size_gb=pool.disk_gi,
                        labels=pool_node_labels(pool.name, pool.gpu, option),
                        guest_accelerators=[
                            gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                                type=itype.accelerator,
                                count=itype.gpu_count,
                                gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                                    gpu_driver_version="LATEST"
                                ),
                            )
                        ],
                        taints=[
                            gcp.container.NodePoolNodeConfigTaintArgs(
                                key=facts.taint["key"], value=facts.taint["value"], effect="NO_SCHEDULE"
                            )
                        ],
                        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
                    ),
                    opts=protected,
                )

        repositories = {}
        for bucket in config.model_buckets:
            gcs = gcp.storage.Bucket(
                f"{name}-{bucket.name}",
                name=resource_name(stack, bucket.name),
                location=config.region.upper(),
                uniform_bucket_level_access=True,
                public_access_prevention="enforced",
                labels=config.tags,
                opts=protected,
            )
            repositories[bucket.name] = gcs.name.apply(lambda b: f"gs://{b}")

        kubeconfig_text = pulumi.Output.all(cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate).apply(
            lambda args: kubeconfig(args[0], args[1], args[2])
        )
        k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig_text, opts=pulumi.ResourceOptions(parent=self))
        self.facts = ClusterFacts(
            provider=k8s_provider,
            kubeconfig=pulumi.Output.secret(kubeconfig_text),
            pools=pools,
            model_repositories=repositories,
            # The pools above use GKE-managed drivers (gpu_driver_version LATEST): GKE owns the GPU stack.
            gpu_operator_values=GPU_OPERATOR_PROFILES["gke-managed"],
            exposure=gcp_exposure_facts(),
        )
        self.cluster_name = cluster.name
        self.register_outputs({"cluster_name": cluster.name})
