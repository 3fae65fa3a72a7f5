"""The AWS adapter: a VPC, an EKS cluster, GPU node groups, the Karpenter controller, a default StorageClass, S3 buckets
and IRSA identities, built through the cloud-adapter contract (components/contract.py).

The config is read here, once, and each component gets its slice; decisions live in layout.py and policies.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.bucket import ModelBucket, ModelBucketArgs
from components.aws.cluster import NODE_POLICIES, EksCluster, EksClusterArgs
from components.aws.cluster_access import support_type
from components.aws.exposure import aws_exposure_facts
from components.aws.gpu_pools import GpuPool, GpuPoolArgs
from components.aws.identity import TritonIdentities, TritonIdentitiesArgs
from components.aws.karpenter import KarpenterController, KarpenterControllerArgs
from components.aws.karpenter_iam import CNI_POLICY
from components.aws.layout import (
    AMI_TYPE,
    IMAGE_VOLUME_DEVICE,
    SYSTEM_AMI_TYPE,
    ami_release_version,
    default_storage_class,
    gpu_operator_values,
    load_balancer_cidrs,
    log_retention_days,
    nat_zones,
    node_group_plans,
    system_instance_type,
)
from components.aws.load_balancer_controller import (
    LoadBalancerController,
    LoadBalancerControllerArgs,
    needs_load_balancer_controller,
)
from components.aws.network import Network, NetworkArgs
from components.contract import (
    BucketRequest,
    CloudAdapter,
    ClusterFacts,
    IdentityRequest,
    ModelStore,
    TritonIdentity,
    shared_facts,
)
from tritonfleet.clouds.aws.monitoring import aws_monitoring_facts
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.core.config import StackConfig
from tritonfleet.core.exposure import control_plane_access
from tritonfleet.core.scheduling import PoolFacts, pool_facts


def kubeconfig(name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that authenticates with `aws eks get-token` (no static credentials)."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [
                {
                    "name": name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": ["eks", "get-token", "--cluster-name", name, "--region", region],
                        }
                    },
                }
            ],
        }
    )


@dataclass(frozen=True)
class EksFloor:
    """What the AWS adapter's later steps need from its cluster."""

    children: pulumi.ResourceOptions  # parent: the adapter; provider: the stack region's AWS provider
    eks: EksCluster
    karpenter: KarpenterController
    load_balancer_controller: LoadBalancerController | None  # only when a deployment is exposed internal or public
    k8s_provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]
    node_groups: dict[str, dict[str, pulumi.Output[str]]]  # pool -> purchase option -> node group name
    launch_templates: dict[str, pulumi.Output[str]]  # pool -> launch template id
    region: str
    tags: dict[str, str]


class AwsCloud(CloudAdapter[EksFloor]):
    """The AWS floor: EKS with managed GPU node groups, S3 model buckets and IRSA identities."""

    cloud = "aws"

    def build_cluster(self, name: str, config: StackConfig) -> EksFloor:
        provider = aws.Provider(f"{name}-aws", region=config.region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        cluster_config = config.cluster
        image = cluster_config.eks_gpu_node_image

        network = Network(
            f"{name}-net",
            NetworkArgs(
                vpc_name=config.cluster_name,
                region=config.region,
                zones=aws_zones(config.region, cluster_config),
                nat_zones=nat_zones(config),
                protected=config.protected,
                existing_vpc_id=cluster_config.existing_vpc_id,
                existing_private_subnets=dict(cluster_config.existing_private_subnets),
                tags=config.tags,
            ),
            opts=child,
        )
        eks = EksCluster(
            f"{name}-eks",
            EksClusterArgs(
                cluster_name=config.cluster_name,
                kubernetes_version=cluster_config.kubernetes_version,
                subnet_ids=list(network.private_subnets.values()),
                log_retention_days=log_retention_days(config),
                system_ami_type=SYSTEM_AMI_TYPE[image],
                ami_release_version=ami_release_version(config),
                system_instance_type=system_instance_type(config),
                system_node_count=cluster_config.system_nodes.count,
                image_volume_device=IMAGE_VOLUME_DEVICE[image],
                support_type=support_type(config.environment),
                admin_principals=list(cluster_config.admin_principals),
                protected=config.protected,
                tags=config.tags,
                control_plane=control_plane_access(cluster_config.control_plane_cidrs, config.environment),
            ),
            opts=child,
        )
        cluster = eks.cluster

        pools = {}
        node_groups: dict[str, dict[str, pulumi.Output[str]]] = {}
        launch_templates: dict[str, pulumi.Output[str]] = {}
        for pool in config.enabled_pools:
            pools[pool.name] = pool_facts(config, pool)
            pool_name = f"{name}-{pool.name}"
            groups = GpuPool(
                pool_name,
                GpuPoolArgs(
                    pool=pool.name,
                    plans=node_group_plans(config, pool, pool_name),
                    ami_type=AMI_TYPE[image],
                    ami_release_version=ami_release_version(config),
                    image_volume_device=IMAGE_VOLUME_DEVICE[image],
                    disk_gi=pool.disk_gi,
                    cluster_name=cluster.name,
                    node_role_arn=eks.node_role.arn,
                    private_subnets=network.private_subnets,
                    capacity_block_id=pool.reservation_id if pool.capacity == "capacity-block" else None,
                    protected=config.protected,
                    tags=config.tags,
                ),
                opts=child,
                depends_on=[*eks.node_policies, eks.system_node_group],
            )
            node_groups[pool.name] = {option: group.node_group_name for option, group in groups.node_groups.items()}
            launch_templates[pool.name] = groups.launch_template.id

        kubeconfig_text = pulumi.Output.all(cluster.name, cluster.endpoint, cluster.certificate_authority.data).apply(
            lambda args: kubeconfig(args[0], args[1], args[2], config.region)
        )
        k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig_text, opts=pulumi.ResourceOptions(parent=self))
        # Claims made before it exists get it retroactively (Kubernetes >= 1.28), so nothing else waits for it.
        k8s.storage.v1.StorageClass(
            f"{name}-storage-class",
            **default_storage_class(),
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=eks.addons),
        )
        # Karpenter's nodes get the CNI's policy exactly when the cluster's own node role carries it (the VPC CNI
        # add-on without an identity of its own).
        karpenter = KarpenterController(
            f"{name}-karpenter",
            KarpenterControllerArgs(
                cluster=cluster,
                cluster_name=config.cluster_name,
                region=config.region,
                system_node_count=cluster_config.system_nodes.count,
                cni_on_node_role=CNI_POLICY in NODE_POLICIES,
                provider=k8s_provider,
                tags=config.tags,
            ),
            opts=child,
            depends_on=eks.addons,
        )
        load_balancer_controller = (
            LoadBalancerController(
                f"{name}-lb-controller",
                LoadBalancerControllerArgs(
                    cluster_name=config.cluster_name,
                    region=config.region,
                    vpc_id=network.vpc_id,
                    oidc_provider_arn=eks.oidc_provider.arn,
                    issuer_url=eks.issuer_url,
                    provider=k8s_provider,
                    tags=config.tags,
                ),
                opts=child,
                depends_on=eks.addons,
            )
            if needs_load_balancer_controller(config)
            else None
        )
        return EksFloor(
            children=child,
            eks=eks,
            karpenter=karpenter,
            load_balancer_controller=load_balancer_controller,
            k8s_provider=k8s_provider,
            kubeconfig=kubeconfig_text,
            pools=pools,
            node_groups=node_groups,
            launch_templates=launch_templates,
            region=config.region,
            tags=config.tags,
        )

    def model_bucket(self, name: str, floor: EksFloor, request: BucketRequest) -> ModelStore:
        bucket = ModelBucket(
            f"{name}-{request.name}",
            ModelBucketArgs(
                bucket_name=request.physical_name,
                noncurrent_version_days=request.noncurrent_version_days,
                kms_key_id=request.kms_key,
                protected=request.protected,
                tags=request.labels,
            ),
            opts=floor.children,
        )
        return ModelStore(uri=bucket.uri, grant_target=bucket.arn)

    def triton_identities(
        self, name: str, floor: EksFloor, requests: list[IdentityRequest], stores: dict[str, ModelStore]
    ) -> dict[str, TritonIdentity]:
        identities = TritonIdentities(
            f"{name}-triton",
            TritonIdentitiesArgs(
                requests=requests,
                bucket_arns={bucket: store.grant_target for bucket, store in stores.items()},
                oidc_provider_arn=floor.eks.oidc_provider.arn,
                issuer_url=floor.eks.issuer_url,
                region=floor.region,
                tags=floor.tags,
            ),
            opts=floor.children,
        )
        return {
            deployment: TritonIdentity(annotations=identities.annotations[deployment], export=role_arn)
            for deployment, role_arn in identities.role_arns.items()
        }

    def cluster_facts(
        self, config: StackConfig, floor: EksFloor, stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]
    ) -> ClusterFacts:
        eks = floor.eks
        cluster = eks.cluster
        return ClusterFacts(
            cluster_name=cluster.name,
            provider=floor.k8s_provider,
            kubeconfig=pulumi.Output.secret(floor.kubeconfig),
            pools=floor.pools,
            **shared_facts(stores, identities),
            triton_env={"AWS_DEFAULT_REGION": config.region},
            exposure=aws_exposure_facts(load_balancer_cidrs(config)),
            monitoring=aws_monitoring_facts(),
            gpu_operator_values=gpu_operator_values(config.cluster.eks_gpu_node_image),
            triton_depends_on=[floor.load_balancer_controller.release] if floor.load_balancer_controller else [],
            exports={
                "clusterEndpoint": cluster.endpoint,
                "oidcIssuer": eks.issuer_url,
                "nodeGroups": floor.node_groups,
                "launchTemplates": floor.launch_templates,
                "systemNodeGroup": eks.system_node_group.node_group_name,
                "tritonRoleArns": {deployment: identity.export for deployment, identity in identities.items()},
                "karpenterRoleArn": floor.karpenter.controller_role.arn,
                "karpenterNodeRoleName": floor.karpenter.node_role.name,
                "interruptionQueue": floor.karpenter.interruption_queue.name,
                "ebsCsiRoleArn": eks.ebs_csi_role.arn,
                "cniRoleArn": eks.cni_role.arn,
                **(
                    {"loadBalancerControllerRoleArn": floor.load_balancer_controller.role.arn}
                    if floor.load_balancer_controller
                    else {}
                ),
            },
        )
