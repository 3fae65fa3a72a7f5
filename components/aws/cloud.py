"""The AWS floor: turns a StackConfig into a VPC, an EKS cluster, GPU node groups, cluster-autoscaler, a default
StorageClass, S3 buckets and IRSA identities, and hands up ClusterFacts."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.autoscaler import ClusterAutoscaler
from components.aws.bucket import ModelBucket, ModelBucketArgs
from components.aws.cluster import EksCluster
from components.aws.exposure import aws_exposure_facts
from components.aws.gpu_pools import GpuPoolGroups
from components.aws.identity import TritonIdentities
from components.aws.layout import VPC_CIDR, default_storage_class, gpu_operator_values
from components.aws.network import AwsNetwork
from components.facts import ClusterFacts
from tritonfleet.core.config import StackConfig, physical_bucket_name
from tritonfleet.core.scheduling import pool_facts


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


class AwsCloud(pulumi.ComponentResource):
    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:AwsCloud", name, None, opts)
        provider = aws.Provider(f"{name}-aws", region=config.region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        stack = config.stack

        network = AwsNetwork(f"{name}-net", config, opts=child)
        eks = EksCluster(f"{name}-eks", config, subnet_ids=list(network.private_subnets.values()), opts=child)
        cluster = eks.cluster

        pools = {}
        node_groups: dict[str, dict[str, pulumi.Output[str]]] = {}
        launch_templates: dict[str, pulumi.Output[str]] = {}
        for pool in config.enabled_pools:
            pools[pool.name] = pool_facts(config, pool)
            groups = GpuPoolGroups(
                f"{name}-{pool.name}",
                config,
                pool,
                cluster_name=cluster.name,
                node_role_arn=eks.node_role.arn,
                private_subnets=network.private_subnets,
                opts=child,
                depends_on=[*eks.node_policies, eks.system_node_group],
            )
            node_groups[pool.name] = {option: group.node_group_name for option, group in groups.node_groups.items()}
            launch_templates[pool.name] = groups.launch_template.id

        repositories = {}
        self.buckets: dict[str, ModelBucket] = {}
        for bucket in config.model_buckets:
            self.buckets[bucket.name] = ModelBucket(
                f"{name}-{bucket.name}",
                ModelBucketArgs(
                    bucket_name=physical_bucket_name(bucket, stack),
                    noncurrent_version_days=bucket.noncurrent_version_days,
                    kms_key_id=bucket.kms_key_id,
                    protected=config.protected,
                    tags=config.tags,
                ),
                opts=child,
            )
            repositories[bucket.name] = self.buckets[bucket.name].uri

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
        autoscaler = ClusterAutoscaler(
            f"{name}-autoscaler",
            config,
            cluster=cluster,
            oidc_provider_arn=eks.oidc_provider.arn,
            issuer_url=eks.issuer_url,
            provider=k8s_provider,
            opts=child,
            depends_on=eks.addons,
        )
        identities = TritonIdentities(
            f"{name}-triton",
            config,
            bucket_arns={bucket_name: bucket.arn for bucket_name, bucket in self.buckets.items()},
            oidc_provider_arn=eks.oidc_provider.arn,
            issuer_url=eks.issuer_url,
            opts=child,
        )

        self.facts = ClusterFacts(
            provider=k8s_provider,
            kubeconfig=pulumi.Output.secret(kubeconfig_text),
            pools=pools,
            model_repositories=repositories,
            service_account_annotations=identities.annotations,
            triton_env={"AWS_DEFAULT_REGION": config.region},
            exposure=aws_exposure_facts(config.cluster.existing_vpc_cidr or VPC_CIDR),
            gpu_operator_values=gpu_operator_values(config.cluster.eks_gpu_node_image),
            exports={
                "clusterEndpoint": cluster.endpoint,
                "oidcIssuer": eks.issuer_url,
                "nodeGroups": node_groups,
                "launchTemplates": launch_templates,
                "systemNodeGroup": eks.system_node_group.node_group_name,
                "tritonRoleArns": identities.role_arns,
                "autoscalerRoleArn": autoscaler.role.arn,
                "ebsCsiRoleArn": eks.ebs_csi_role.arn,
            },
        )
        self.cluster_name = cluster.name
        self.register_outputs({"cluster_name": cluster.name, "endpoint": cluster.endpoint})
