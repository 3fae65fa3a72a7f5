"""The AWS adapter: a VPC, an EKS cluster, the Karpenter controller and the GPU pools' NodePools, a default
StorageClass, S3 buckets and IRSA identities, built through the cloud-adapter contract (components/contract.py).

The config is read here, once, and each component gets its slice; decisions live in layout.py and policies.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.bucket import ModelBucket
from components.aws.cluster import NODE_POLICIES, EksCluster, EksClusterArgs
from components.aws.gpu_node_pools import GpuNodePoolArgs, GpuNodePools, GpuNodePoolsArgs
from components.aws.identity import TritonIdentities, TritonIdentitiesArgs
from components.aws.karpenter import KarpenterController, KarpenterControllerArgs
from components.aws.load_balancer_controller import (
    LoadBalancerController,
    LoadBalancerControllerArgs,
    needs_load_balancer_controller,
)
from components.aws.network import Network, NetworkArgs, s3_gateway_service
from components.aws.sts_endpoint import StsEndpoint
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
from tritonfleet.clouds.aws.cluster_access import support_type
from tritonfleet.clouds.aws.exposure import api_ingress_cidrs, aws_exposure_facts
from tritonfleet.clouds.aws.facts import KARPENTER_DISCOVERY_TAG
from tritonfleet.clouds.aws.karpenter_iam import CNI_POLICY
from tritonfleet.clouds.aws.layout import (
    IMAGE_VOLUME_DEVICE,
    SYSTEM_AMI_TYPE,
    VPC_CIDR,
    ami_release_version,
    default_storage_class,
    gpu_operator_values,
    load_balancer_cidrs,
    log_retention_days,
    nat_zones,
    system_instance_type,
)
from tritonfleet.clouds.aws.monitoring import aws_monitoring_facts
from tritonfleet.clouds.aws.node_pools import node_class_spec, node_pool_specs, placeholder_deployment
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import CAPACITY_LABEL
from tritonfleet.core.disruption import capacity_spread
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
    gpu_node_pools: GpuNodePools  # the pools' NodePools and EC2NodeClasses (Triton releases wait for them)
    k8s_provider: k8s.Provider
    kubeconfig: pulumi.Output[str]  # secret
    pools: dict[str, PoolFacts]
    node_pools: dict[str, list[str]]  # pool -> its Karpenter NodePools, highest weight first
    region: str
    tags: dict[str, str]
    s3_cidrs: tuple[str, ...]  # the region's S3 addresses (its managed prefix list): Triton's model pulls go there


def s3_cidrs(region: str, opts: pulumi.InvokeOptions) -> tuple[str, ...]:
    """The CIDRs of the region's S3 managed prefix list, named like the gateway endpoint's service (S3's addresses
    in the region, what the gateway endpoint routes): https://docs.aws.amazon.com/vpc/latest/userguide/working-with-aws-managed-prefix-lists.html,
    read 2026-12-05."""
    return tuple(aws.ec2.get_prefix_list(name=s3_gateway_service(region), opts=opts).cidr_blocks)


class AwsCloud(CloudAdapter[EksFloor]):
    """The AWS floor: EKS with Karpenter GPU NodePools, S3 model buckets and IRSA identities."""

    cloud = "aws"

    def build_cluster(self, name: str, config: StackConfig) -> EksFloor:
        # allowed_account_ids: credentials of another account (dev's role on prod's stack) fail before any change.
        provider = aws.Provider(
            f"{name}-aws",
            region=config.region,
            allowed_account_ids=[config.aws_account_id] if config.aws_account_id else None,
            opts=pulumi.ResourceOptions(parent=self),
        )
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
                model_buckets=[config.physical_bucket_name(bucket) for bucket in config.model_buckets],
            ),
            opts=child,
        )
        if network.public_subnets:  # the VPC tritonfleet creates (an existing one brings its own: docs/aws.md)
            StsEndpoint(
                f"{name}-sts",
                vpc_id=network.vpc_id,
                vpc_cidr=VPC_CIDR,
                subnet_ids=list(network.public_subnets.values()),
                region=config.region,
                tags=config.tags,
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
                api_ingress_cidrs=api_ingress_cidrs(cluster_config.deploy_from, cluster_config.deployer_cidrs),
            ),
            opts=child,
        )
        cluster = eks.cluster

        # Karpenter's EC2NodeClasses find the nodes' security group by this tag (the private subnets carry it too).
        aws.ec2.Tag(
            f"{name}-cluster-sg-discovery",
            resource_id=cluster.vpc_config.cluster_security_group_id,
            key=KARPENTER_DISCOVERY_TAG,
            value=config.cluster_name,
            opts=child,
        )
        # No spread over spot / on-demand: Karpenter would hold a preferred one as required and split every
        # deployment half and half, launching spot beside an idle on-demand base (docs/aws.md "How the nodes are
        # counted"). The NodePool weights fill the on-demand base first.
        spread = CAPACITY_LABEL if capacity_spread(config) else ""
        pools = {pool.name: replace(pool_facts(config, pool), capacity_type_label=spread) for pool in config.enabled_pools}

        # Secret from the start, as on GCP: the provider's input and the stack output are stored encrypted.
        kubeconfig_text = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, cluster.endpoint, cluster.certificate_authority.data).apply(
                lambda args: kubeconfig(args[0], args[1], args[2], config.region)
            )
        )
        # The kubeconfig authenticates as the deployer, whose access is the stack's own entry: nothing reaches the
        # Kubernetes API before it exists. Replaced (with every Kubernetes object) only when the cluster is, not when
        # its endpoint's settings change.
        k8s_provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=kubeconfig_text,
            cluster_identifier=cluster.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=eks.admin_access),
        )
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
        gpu_node_pools = [
            GpuNodePoolArgs(
                pool=pool.name,
                node_class=node_class_spec(config, pool, config.cluster_name),
                node_pools=node_pool_specs(config, pool),
                placeholders=placeholder_deployment(config, pool),
            )
            for pool in config.enabled_pools
        ]
        gpu = GpuNodePools(
            f"{name}-gpu",
            GpuNodePoolsArgs(
                pools=gpu_node_pools,
                cluster_name=config.cluster_name,
                node_role_name=karpenter.node_role.name,
                provider=k8s_provider,
                # The controller (its CRDs and webhooks) first: nothing GPU-bound before it and its NodePools exist.
                depends_on=[karpenter.release],
                protected=config.protected,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return EksFloor(
            children=child,
            eks=eks,
            karpenter=karpenter,
            load_balancer_controller=load_balancer_controller,
            gpu_node_pools=gpu,
            k8s_provider=k8s_provider,
            kubeconfig=kubeconfig_text,
            pools=pools,
            node_pools={p.pool: [spec.name for spec in p.node_pools] for p in gpu_node_pools},
            region=config.region,
            tags=config.tags,
            s3_cidrs=s3_cidrs(config.region, pulumi.InvokeOptions(parent=self, provider=provider)),
        )

    def bucket(self, name: str, floor: EksFloor, request: BucketRequest) -> ModelBucket:
        return ModelBucket(name, request, opts=floor.children)

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

    def image_mirror(self, name: str, config: StackConfig, floor: EksFloor) -> ImageMirror:
        from components.aws.image_mirror import create_image_mirror

        tags = [d.image_tag for d in config.triton_deployments]
        repository, commands = create_image_mirror(
            name, config.cluster_name, tags, config.protected, floor.tags, floor.children
        )
        return ImageMirror(
            repository.repository_url, {"tritonImageMirror": repository.repository_url, "tritonImageCopy": commands}
        )

    def cluster_facts(
        self, config: StackConfig, floor: EksFloor, stores: dict[str, ModelStore], identities: dict[str, TritonIdentity]
    ) -> ClusterFacts:
        eks = floor.eks
        cluster = eks.cluster
        return ClusterFacts(
            cluster_name=cluster.name,
            provider=floor.k8s_provider,
            kubeconfig=floor.kubeconfig,
            pools=floor.pools,
            **shared_facts(stores, identities),
            triton_env={"AWS_DEFAULT_REGION": config.region},
            exposure=aws_exposure_facts(load_balancer_cidrs(config), floor.s3_cidrs),
            monitoring=aws_monitoring_facts(),
            gpu_operator_values=gpu_operator_values(config.cluster.eks_gpu_node_image),
            # Triton's pods need GPU nodes: the NodePools that launch them exist first (and, exposed, the LB controller).
            triton_depends_on=[
                floor.gpu_node_pools,
                *([floor.load_balancer_controller.release] if floor.load_balancer_controller else []),
            ],
            exports={
                "clusterEndpoint": cluster.endpoint,
                "oidcIssuer": eks.issuer_url,
                "nodePools": floor.node_pools,
                "systemNodeGroup": eks.system_node_group.node_group_name,
                # Who administers the cluster: the stack's access entries, and EKS's own entry where one exists.
                "clusterAdmins": eks.admins,
                **({"eksBootstrapAdmin": eks.bootstrap_admin} if eks.bootstrap_admin else {}),
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
