"""The EKS control plane and what every node needs: KMS-encrypted secrets, control-plane logs, access entries,
the IRSA OIDC provider, the node role, a small on-demand system node group and the managed add-ons.

IMDS: the system nodes' launch template requires IMDSv2 with a hop limit of 1, so no pod outside the host network can
reach the node role's credentials. What runs there and needs AWS does not need IMDS: the VPC CNI (aws-node) and
kube-proxy run in the host network, the VPC CNI and the EBS CSI controller take their own IRSA roles (IRSA injects
AWS_REGION), the EBS CSI node plugin reads its zone from the Kubernetes API when IMDS is out of reach, and the AWS Load
Balancer Controller gets its region and VPC id as chart values (load_balancer_controller.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from tritonfleet.clouds.aws.cluster_access import CREATOR_TAG, admin_entries, deployer_entry, iam_principal
from tritonfleet.clouds.aws.exposure import eks_endpoint_access
from tritonfleet.clouds.aws.facts import (
    CLOUDWATCH_OBSERVABILITY_ADDON,
    CLOUDWATCH_OBSERVABILITY_CONFIGURATION,
    EKS_API_PORT,
    NODE_MONITORING_AGENT_ADDON,
    VPC_CNI_ADDON,
    VPC_CNI_NETWORK_POLICY_CONFIGURATION,
)
from tritonfleet.clouds.aws.iam_policies import STS_AUDIENCE, irsa_trust_policy, service_trust_policy
from tritonfleet.clouds.aws.layout import CONTROL_PLANE_LOGS, GROUP_MARKER, SYSTEM_DISK_GI, SYSTEM_ROLE_LABEL, system_node_range
from tritonfleet.core.exposure import ControlPlaneAccess
from tritonfleet.core.pins import eks_addon_version

ADMIN_ACCESS_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
# The VPC CNI's policy is not on the node role: the vpc-cni add-on runs as its own IRSA role (CNI_SERVICE_ACCOUNT).
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryReadOnly")
CNI_POLICY = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
CNI_SERVICE_ACCOUNT = ("kube-system", "aws-node")
EBS_CSI_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
EBS_CSI_SERVICE_ACCOUNT = ("kube-system", "ebs-csi-controller-sa")
# How the AWS provider reports a cluster that does not exist, in the error of the eks getCluster data source.
CLUSTER_NOT_FOUND = ("ResourceNotFoundException", "couldn't find resource", "No cluster found")
# Add-ons nodes need before they can become Ready (and the EKS Pod Identity agent, a DaemonSet that must run on the
# system nodes before the Karpenter controller starts there), and those that need Ready nodes to become healthy.
NODE_ADDONS = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
WORKLOAD_ADDONS = ("coredns", "aws-ebs-csi-driver", CLOUDWATCH_OBSERVABILITY_ADDON, NODE_MONITORING_AGENT_ADDON)
# The VPC CNI's network-policy agent enforces NetworkPolicy (off unless asked for); the CloudWatch add-on runs no
# dcgm-exporter of its own (the GPU Operator's is the one per node). tritonfleet/clouds/aws/facts.py has the sources.
ADDON_CONFIGURATION = {
    VPC_CNI_ADDON: VPC_CNI_NETWORK_POLICY_CONFIGURATION,
    CLOUDWATCH_OBSERVABILITY_ADDON: CLOUDWATCH_OBSERVABILITY_CONFIGURATION,
}
# Container logs to CloudWatch Logs (Fluent Bit of the amazon-cloudwatch-observability add-on, AWS's recommended path:
# docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-setup-EKS-quickstart.html). Its agent runs
# as this service account, which gets CloudWatch write access through IRSA (never through the node role).
CLOUDWATCH_SERVICE_ACCOUNT = ("amazon-cloudwatch", "cloudwatch-agent")
CLOUDWATCH_AGENT_POLICY = "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"


# The log groups the add-on writes, each created here first so it has a retention (a group the agent or Fluent Bit
# creates never expires): application (the pods' logs, Triton's model-load errors included), dataplane (kubelet,
# containerd), host (the nodes' system logs) and performance (Container Insights' metric events). Source:
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-setup-logs-FluentBit.html
# (log groups /aws/containerinsights/Cluster_Name/{application,host,dataplane}) and .../Container-Insights-reference
# .html (performance log events in /aws/containerinsights/Cluster_Name/performance), read 2026-12-05.
CONTAINER_INSIGHTS_LOG_KINDS = ("application", "dataplane", "host", "performance")


def container_log_group(cluster_name: str, kind: str = "application") -> str:
    """One of the add-on's log groups (CONTAINER_INSIGHTS_LOG_KINDS)."""
    return f"/aws/containerinsights/{cluster_name}/{kind}"


def irsa_role(
    name: str,
    oidc_provider_arn: pulumi.Input[str],
    issuer_url: pulumi.Input[str],
    namespace: str,
    service_account: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.iam.Role:
    """An IAM role that exactly one Kubernetes service account of this cluster can assume (IRSA)."""
    trust = pulumi.Output.all(oidc_provider_arn, issuer_url).apply(
        lambda args: irsa_trust_policy(args[0], args[1], namespace, service_account)
    )
    return aws.iam.Role(name, assume_role_policy=trust, tags=tags, opts=opts)


@dataclass(frozen=True)
class EksClusterArgs:
    """The slice of the stack config the control plane and system nodes are built from."""

    cluster_name: str
    """The EKS cluster's name."""
    kubernetes_version: str
    """The control plane's Kubernetes minor version, e.g. 1.33."""
    subnet_ids: list[pulumi.Input[str]]
    """Private subnets for the control plane's interfaces and the system nodes."""
    log_retention_days: int
    """How long control-plane and container logs are kept (`layout.log_retention_days`)."""
    system_ami_type: str
    """EKS AMI type of the system nodes (`layout.SYSTEM_AMI_TYPE` of the node image)."""
    ami_release_version: str
    """The pinned EKS AMI release of every node group (`layout.ami_release_version`)."""
    system_instance_type: str
    """Instance type of the system nodes (`layout.system_instance_type`)."""
    system_node_count: int
    """System nodes the group keeps (it may grow to twice as many)."""
    image_volume_device: str
    """The system nodes' root (image) volume device (`layout.IMAGE_VOLUME_DEVICE`)."""
    support_type: str
    """upgradePolicy.supportType: STANDARD or EXTENDED (`cluster_access.support_type`)."""
    admin_principals: list[str] = field(default_factory=list)
    """IAM principal ARNs given cluster-admin through access entries (the creator has the `deployer` entry)."""
    protected: bool = False
    """Protect the cluster, its secrets key and its system nodes, and turn on deletion protection."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on every resource."""
    control_plane: ControlPlaneAccess = ControlPlaneAccess(())
    """Who reaches the API endpoint: the private endpoint always, the public one only from these CIDRs."""
    api_ingress_cidrs: list[str] = field(default_factory=list)
    """Networks inside or connected to the VPC admitted on 443 by the cluster security group (an in-VPC deployer)."""


class EksCluster(pulumi.ComponentResource):
    """The control plane, its OIDC provider, the node role, the system node group and the managed add-ons."""

    cluster: aws.eks.Cluster
    """The EKS cluster."""
    issuer_url: pulumi.Output[str]
    """The cluster's OIDC issuer (IRSA trust policies name it)."""
    oidc_provider: aws.iam.OpenIdConnectProvider
    """The IAM OIDC provider IRSA roles trust."""
    node_role: aws.iam.Role
    """The role every node group's instances take."""
    node_policies: list[aws.iam.RolePolicyAttachment]
    """The node role's managed policies: node groups wait for them."""
    system_node_group: aws.eks.NodeGroup
    """The on-demand node group for system pods (not GPUs)."""
    ebs_csi_role: aws.iam.Role
    """The EBS CSI driver's IRSA role."""
    cni_role: aws.iam.Role
    """The VPC CNI's IRSA role (AmazonEKS_CNI_Policy), instead of that policy on the node role."""
    addons: list[aws.eks.Addon]
    """The managed add-ons; cluster add-ons that need working nodes and storage wait for them."""

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:EksCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        protected = pulumi.ResourceOptions(parent=self, protect=args.protected)
        tags = args.tags
        cluster_name = args.cluster_name
        subnet_ids = args.subnet_ids

        secrets_key = aws.kms.Key(
            f"{name}-secrets",
            description=f"Kubernetes secrets envelope encryption for EKS cluster {cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tags,
            opts=protected,
        )
        # EKS writes control-plane logs here; creating the group first sets a retention (EKS's own never expires).
        logs = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/eks/{cluster_name}/cluster",
            retention_in_days=args.log_retention_days,
            tags=tags,
            opts=child,
        )
        cluster_role = aws.iam.Role(
            f"{name}-cluster-role", assume_role_policy=service_trust_policy("eks.amazonaws.com"), tags=tags, opts=child
        )
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=cluster_role.name,
            policy_arn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
            opts=child,
        )
        creator, bootstrapped = self._creator(cluster_name)
        self.cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=cluster_name,
            version=args.kubernetes_version,
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=args.support_type),
            role_arn=cluster_role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(subnet_ids=subnet_ids, **eks_endpoint_access(args.control_plane)),
            # No admin outside the stack: the deployer's entry below is the stack's own (cluster_access.py).
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=False
            ),
            # We install vpc-cni, kube-proxy and coredns as managed add-ons below, so EKS must not install its own copies.
            bootstrap_self_managed_addons=False,
            enabled_cluster_log_types=CONTROL_PLANE_LOGS,
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=secrets_key.arn), resources=["secrets"]
            ),
            deletion_protection=args.protected,
            tags={**tags, CREATOR_TAG: creator} if creator else tags,
            opts=pulumi.ResourceOptions.merge(
                protected,
                pulumi.ResourceOptions(
                    depends_on=[logs, cluster_policy],
                    # The flag replaces the cluster when it changes: one created with it keeps it (and EKS's entry).
                    ignore_changes=["accessConfig.bootstrapClusterCreatorAdminPermissions"],
                ),
            ),
        )
        cluster = self.cluster
        for i, cidr in enumerate(args.api_ingress_cidrs):
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-api-from-{i}",
                security_group_id=cluster.vpc_config.cluster_security_group_id,
                cidr_ipv4=cidr,
                ip_protocol="tcp",
                from_port=EKS_API_PORT,
                to_port=EKS_API_PORT,
                description="Kubernetes API from the deployer (cluster.deployerCidrs)",
                tags=tags,
                opts=child,
            )

        admins = {f"{name}-admin-{i}": principal for i, principal in admin_entries(args.admin_principals, creator).items()}
        if deployer := deployer_entry(creator, bootstrapped):
            admins[f"{name}-deployer"] = deployer
        self.admin_access: list[aws.eks.AccessPolicyAssociation] = []
        """The stack's cluster-admin grants: the Kubernetes provider waits for them (the deployer's is its access)."""
        for resource_name, principal in admins.items():
            entry = aws.eks.AccessEntry(
                resource_name, cluster_name=cluster.name, principal_arn=principal, type="STANDARD", tags=tags, opts=child
            )
            self.admin_access.append(
                aws.eks.AccessPolicyAssociation(
                    resource_name,
                    cluster_name=cluster.name,
                    principal_arn=entry.principal_arn,
                    policy_arn=ADMIN_ACCESS_POLICY,
                    access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                    opts=child,
                )
            )
        self.admins = sorted(admins.values())
        """Principals with the stack's admin entries."""
        self.bootstrap_admin = creator if bootstrapped else None
        """The creator EKS made admin itself on a cluster created before the flag was false (not managed here)."""

        self.issuer_url = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        self.oidc_provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc", url=self.issuer_url, client_id_lists=[STS_AUDIENCE], tags=tags, opts=child
        )

        self.node_role = aws.iam.Role(
            f"{name}-node-role", assume_role_policy=service_trust_policy("ec2.amazonaws.com"), tags=tags, opts=child
        )
        node_policies = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}", role=self.node_role.name, policy_arn=f"arn:aws:iam::aws:policy/{policy}", opts=child
            )
            for policy in NODE_POLICIES
        ]

        self.cni_role, cni_policy = self._service_account_role(f"{name}-cni", CNI_SERVICE_ACCOUNT, CNI_POLICY, tags, child)
        # The add-on takes the role once its policy is attached, so aws-node never starts without IP permissions.
        cni_role_arn = pulumi.Output.all(self.cni_role.arn, cni_policy.id).apply(lambda ids: ids[0])
        node_addons = [
            self._addon(name, cluster, addon, args.kubernetes_version, child, cni_role_arn if addon == "vpc-cni" else None)
            for addon in NODE_ADDONS
        ]
        system_template = aws.ec2.LaunchTemplate(
            f"{name}-system",
            description=f"System nodes of EKS cluster {cluster_name}: encrypted root volume, IMDSv2 with hop limit 1",
            update_default_version=True,
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=args.image_volume_device,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_size=SYSTEM_DISK_GI, volume_type="gp3", encrypted="true", delete_on_termination="true"
                    ),
                )
            ],
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=1
            ),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags) for kind in ("instance", "volume")
            ]
            if tags
            else None,
            tags=tags,
            opts=child,
        )
        self.system_node_group = aws.eks.NodeGroup(
            f"{name}{GROUP_MARKER['system']}",
            cluster_name=cluster.name,
            node_role_arn=self.node_role.arn,
            subnet_ids=subnet_ids,
            ami_type=args.system_ami_type,
            release_version=args.ami_release_version,
            capacity_type="ON_DEMAND",
            instance_types=[args.system_instance_type],
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=system_node_range(args.system_node_count)[0],
                max_size=system_node_range(args.system_node_count)[1],
                desired_size=args.system_node_count,
            ),
            labels=SYSTEM_ROLE_LABEL,
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=system_template.id, version=system_template.latest_version.apply(str)
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            tags=tags,
            opts=pulumi.ResourceOptions.merge(
                protected,
                pulumi.ResourceOptions(depends_on=[*node_policies, *node_addons], ignore_changes=["scalingConfig.desiredSize"]),
            ),
        )
        self.node_policies = node_policies

        self.ebs_csi_role, _ = self._service_account_role(f"{name}-ebs-csi", EBS_CSI_SERVICE_ACCOUNT, EBS_CSI_POLICY, tags, child)
        self.cloudwatch_role, _ = self._service_account_role(
            f"{name}-cloudwatch", CLOUDWATCH_SERVICE_ACCOUNT, CLOUDWATCH_AGENT_POLICY, tags, child
        )
        # Created first so each has a retention; application keeps its first resource name (its URN).
        container_logs = [
            aws.cloudwatch.LogGroup(
                f"{name}-container-logs" if kind == "application" else f"{name}-container-logs-{kind}",
                name=container_log_group(cluster_name, kind),
                retention_in_days=args.log_retention_days,
                tags=tags,
                opts=child,
            )
            for kind in CONTAINER_INSIGHTS_LOG_KINDS
        ]
        addon_roles = {"aws-ebs-csi-driver": self.ebs_csi_role.arn, CLOUDWATCH_OBSERVABILITY_ADDON: self.cloudwatch_role.arn}
        after_nodes = pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group, *container_logs])
        self.addons = [
            *node_addons,
            *(
                self._addon(name, cluster, addon, args.kubernetes_version, after_nodes, addon_roles.get(addon))
                for addon in WORKLOAD_ADDONS
            ),
        ]
        self.register_outputs(
            {
                "name": cluster.name,
                "endpoint": cluster.endpoint,
                "issuer_url": self.issuer_url,
                "oidc_provider_arn": self.oidc_provider.arn,
                "node_role_arn": self.node_role.arn,
                "system_node_group": self.system_node_group.node_group_name,
                "ebs_csi_role_arn": self.ebs_csi_role.arn,
                "cni_role_arn": self.cni_role.arn,
            }
        )

    def _creator(self, cluster_name: str) -> tuple[str | None, bool]:
        """(the IAM principal that created the cluster, whether EKS made it admin itself): the tag it was recorded in
        and the cluster's bootstrap flag, or, while the cluster does not exist yet, the caller (who is about to create
        it, without the bootstrap admin). The principal is None for a cluster created before the tag existed."""
        invoke = pulumi.InvokeOptions(parent=self)
        try:
            existing = aws.eks.get_cluster(name=cluster_name, opts=invoke)
        except Exception as error:  # the provider reports a missing cluster as an error of the data source
            if not any(marker in str(error) for marker in CLUSTER_NOT_FOUND):
                raise
            return iam_principal(aws.get_caller_identity(opts=invoke).arn), False
        bootstrapped = any(c.bootstrap_cluster_creator_admin_permissions for c in existing.access_configs or [])
        return (existing.tags or {}).get(CREATOR_TAG), bootstrapped

    def _service_account_role(
        self, name: str, service_account: tuple[str, str], policy_arn: str, tags: dict[str, str], opts: pulumi.ResourceOptions
    ) -> tuple[aws.iam.Role, aws.iam.RolePolicyAttachment]:
        """An IRSA role for one (namespace, service account) of this cluster, with its one managed policy attached."""
        role = irsa_role(
            name,
            oidc_provider_arn=self.oidc_provider.arn,
            issuer_url=self.issuer_url,
            namespace=service_account[0],
            service_account=service_account[1],
            tags=tags,
            opts=opts,
        )
        return role, aws.iam.RolePolicyAttachment(name, role=role.name, policy_arn=policy_arn, opts=opts)

    @staticmethod
    def _addon(
        name: str, cluster: aws.eks.Cluster, addon: str, kubernetes_version: str, opts: pulumi.ResourceOptions, role_arn=None
    ) -> aws.eks.Addon:
        """A managed add-on at its pinned version for the cluster version (pins.EKS_ADDON_VERSIONS); where none is
        pinned, at EKS's default for that version (set at creation, not rolled by later ups)."""
        return aws.eks.Addon(
            f"{name}-{addon}",
            cluster_name=cluster.name,
            addon_name=addon,
            addon_version=eks_addon_version(addon, kubernetes_version),
            configuration_values=json.dumps(ADDON_CONFIGURATION[addon]) if addon in ADDON_CONFIGURATION else None,
            service_account_role_arn=role_arn,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=opts,
        )
