"""Karpenter's IAM: the node role's managed policies, the controller's trust (EKS Pod Identity) and its
least-privilege policies. Plain functions over resolved strings; no Pulumi.

Built from AWS's getting-started CloudFormation for Karpenter 1.14.1
(https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/, `cloudformation.yaml` of
github.com/aws/karpenter-provider-aws at tag v1.14.1, read 2026-12). The statements below are that template's, with
`${AWS::Partition}`, `${AWS::Region}`, `${AWS::AccountId}`, `${ClusterName}`, the node role ARN and the queue ARN
substituted; tests/test_aws_karpenter.py compares them with the vendored copy
(tests/upstream/karpenter-1.14.1/getting-started-cloudformation.yaml), so a pin bump that changes the policy fails there.
"""

from __future__ import annotations

from dataclasses import dataclass

from tritonfleet.clouds.aws.iam_policies import VERSION

# The Karpenter node role's AWS managed policies, as the CloudFormation's KarpenterNodeRole. The CNI's policy is on
# the node role only while the VPC CNI add-on runs on the node's identity (see `node_role_policies`).
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly", "AmazonSSMManagedInstanceCore")
CNI_POLICY = "AmazonEKS_CNI_Policy"
# EKS Pod Identity's service principal and the actions its trust needs (EKS user guide, "pod-id-role", 2026-12).
POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"
POD_IDENTITY_ACTIONS = ["sts:AssumeRole", "sts:TagSession"]


@dataclass(frozen=True)
class ClusterScope:
    """Where the cluster lives: what the CloudFormation's pseudo parameters resolve to."""

    partition: str
    region: str
    account: str
    cluster_name: str

    @classmethod
    def from_cluster_arn(cls, arn: str) -> ClusterScope:
        """arn:<partition>:eks:<region>:<account>:cluster/<name> (the cluster's own ARN, so no extra API call)."""
        parts = arn.split(":", 5)
        if len(parts) != 6 or parts[2] != "eks" or not parts[5].startswith("cluster/"):
            raise ValueError(f"not an EKS cluster ARN: {arn!r}")
        return cls(partition=parts[1], region=parts[3], account=parts[4], cluster_name=parts[5].removeprefix("cluster/"))

    @property
    def cluster_arn(self) -> str:
        return f"arn:{self.partition}:eks:{self.region}:{self.account}:cluster/{self.cluster_name}"

    def ec2(self, resource: str) -> str:
        return f"arn:{self.partition}:ec2:{self.region}:*:{resource}"


def node_role_policies(cni_on_node_role: bool) -> list[str]:
    """The Karpenter node role's AWS managed policies. `cni_on_node_role`: the VPC CNI add-on has no identity of its
    own and takes the node's (then its policy must be here, as in the CloudFormation)."""
    return [*NODE_POLICIES, CNI_POLICY] if cni_on_node_role else list(NODE_POLICIES)


def managed_policy_arn(partition: str, name: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{name}"


def pod_identity_trust_policy() -> dict:
    """Trust for EKS Pod Identity: the association (cluster, namespace, service account) decides who gets the role."""
    return {
        "Version": VERSION,
        "Statement": [{"Effect": "Allow", "Principal": {"Service": POD_IDENTITY_PRINCIPAL}, "Action": POD_IDENTITY_ACTIONS}],
    }


def _owned(scope: ClusterScope, kind: str) -> dict:
    return {f"aws:{kind}Tag/kubernetes.io/cluster/{scope.cluster_name}": "owned"}


def _node_lifecycle(scope: ClusterScope) -> list[dict]:
    tagged = [
        scope.ec2(r)
        for r in ("fleet/*", "instance/*", "volume/*", "network-interface/*", "launch-template/*", "spot-instances-request/*")
    ]
    request_tags = {**_owned(scope, "Request"), "aws:RequestTag/eks:eks-cluster-name": scope.cluster_name}
    nodepool_request = {"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}
    owned_nodepool = {"StringEquals": _owned(scope, "Resource"), "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}
    return [
        {
            "Sid": "AllowScopedEC2InstanceAccessActions",
            "Effect": "Allow",
            "Resource": [
                f"arn:{scope.partition}:ec2:{scope.region}::image/*",
                f"arn:{scope.partition}:ec2:{scope.region}::snapshot/*",
                scope.ec2("security-group/*"),
                scope.ec2("subnet/*"),
                scope.ec2("capacity-reservation/*"),
                scope.ec2("placement-group/*"),
            ],
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
            "Effect": "Allow",
            "Resource": scope.ec2("launch-template/*"),
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Condition": owned_nodepool,
        },
        {
            "Sid": "AllowScopedEC2InstanceActionsWithTags",
            "Effect": "Allow",
            "Resource": tagged,
            "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            "Condition": {"StringEquals": request_tags, **nodepool_request},
        },
        {
            "Sid": "AllowScopedResourceCreationTagging",
            "Effect": "Allow",
            "Resource": tagged,
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": {**request_tags, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
                **nodepool_request,
            },
        },
        {
            "Sid": "AllowScopedResourceTagging",
            "Effect": "Allow",
            "Resource": scope.ec2("instance/*"),
            "Action": "ec2:CreateTags",
            "Condition": {
                **owned_nodepool,
                "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": scope.cluster_name},
                "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]},
            },
        },
        {
            "Sid": "AllowScopedDeletion",
            "Effect": "Allow",
            "Resource": [scope.ec2("instance/*"), scope.ec2("launch-template/*")],
            "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            "Condition": owned_nodepool,
        },
    ]


def _iam_integration(scope: ClusterScope, node_role_arn: str) -> list[dict]:
    profiles = f"arn:{scope.partition}:iam::{scope.account}:instance-profile/*"
    region_tag = "topology.kubernetes.io/region"
    request = {
        **_owned(scope, "Request"),
        "aws:RequestTag/eks:eks-cluster-name": scope.cluster_name,
        f"aws:RequestTag/{region_tag}": scope.region,
    }
    resource = {**_owned(scope, "Resource"), f"aws:ResourceTag/{region_tag}": scope.region}
    return [
        {
            "Sid": "AllowPassingInstanceRole",
            "Effect": "Allow",
            "Resource": node_role_arn,
            "Action": "iam:PassRole",
            "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
        },
        {
            "Sid": "AllowScopedInstanceProfileCreationActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": ["iam:CreateInstanceProfile"],
            "Condition": {"StringEquals": request, "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}},
        },
        {
            "Sid": "AllowScopedInstanceProfileTagActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": ["iam:TagInstanceProfile"],
            "Condition": {
                "StringEquals": {**resource, **request},
                "StringLike": {
                    "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                    "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                },
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
            "Condition": {"StringEquals": resource, "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}},
        },
    ]


def _resource_discovery(scope: ClusterScope) -> list[dict]:
    reads = [
        "DescribeCapacityReservations",
        "DescribeImages",
        "DescribeInstances",
        "DescribeInstanceStatus",
        "DescribeInstanceTypeOfferings",
        "DescribeInstanceTypes",
        "DescribeLaunchTemplates",
        "DescribePlacementGroups",
        "DescribeSecurityGroups",
        "DescribeSpotPriceHistory",
        "DescribeSubnets",
    ]
    return [
        {
            # EC2's Describe calls support no resource-level scoping: "*" limited to the cluster's region.
            "Sid": "AllowRegionalReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": [f"ec2:{action}" for action in reads],
            "Condition": {"StringEquals": {"aws:RequestedRegion": scope.region}},
        },
        {
            "Sid": "AllowSSMReadActions",
            "Effect": "Allow",
            "Resource": f"arn:{scope.partition}:ssm:{scope.region}::parameter/aws/service/*",
            "Action": "ssm:GetParameter",
        },
        {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Resource": "*", "Action": "pricing:GetProducts"},
        {
            "Sid": "AllowUnscopedInstanceProfileListAction",
            "Effect": "Allow",
            "Resource": "*",
            "Action": "iam:ListInstanceProfiles",
        },
        {
            "Sid": "AllowInstanceProfileReadActions",
            "Effect": "Allow",
            "Resource": f"arn:{scope.partition}:iam::{scope.account}:instance-profile/*",
            "Action": "iam:GetInstanceProfile",
        },
    ]


# The CloudFormation's logical ids of the controller's policies: one customer managed policy each, as there (together
# they exceed the 10,240 characters IAM allows all inline policies of one role).
CONTROLLER_POLICIES = (
    "NodeLifecyclePolicy",
    "IAMIntegrationPolicy",
    "EKSIntegrationPolicy",
    "InterruptionPolicy",
    "ZonalShiftPolicy",
    "ResourceDiscoveryPolicy",
)


def controller_policies(scope: ClusterScope, node_role_arn: str, queue_arn: str) -> dict[str, dict]:
    """The controller's policy documents, keyed by `CONTROLLER_POLICIES`."""
    statements = {
        "NodeLifecyclePolicy": _node_lifecycle(scope),
        "IAMIntegrationPolicy": _iam_integration(scope, node_role_arn),
        "EKSIntegrationPolicy": [
            {
                "Sid": "AllowAPIServerEndpointDiscovery",
                "Effect": "Allow",
                "Resource": scope.cluster_arn,
                "Action": "eks:DescribeCluster",
            }
        ],
        "InterruptionPolicy": [
            {
                "Sid": "AllowInterruptionQueueActions",
                "Effect": "Allow",
                "Resource": queue_arn,
                "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
            }
        ],
        "ZonalShiftPolicy": [
            {
                "Sid": "AllowZonalShiftStatusReadOnly",
                "Effect": "Allow",
                "Resource": "*",
                "Action": ["arc-zonal-shift:GetManagedResource"],
                "Condition": {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": scope.cluster_arn}},
            }
        ],
        "ResourceDiscoveryPolicy": _resource_discovery(scope),
    }
    assert tuple(statements) == CONTROLLER_POLICIES
    return {name: {"Version": VERSION, "Statement": body} for name, body in statements.items()}
