"""One GPU pool as EKS managed node groups: a launch template (disk, IMDSv2, capacity block) and one node group per
purchase option, with the scale-from-zero tags cluster-autoscaler reads from the groups' Auto Scaling groups."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.aws.layout import NodeGroupPlan


@dataclass(frozen=True)
class GpuPoolArgs:
    """One configured GPU pool, decided: its node groups and launch template settings."""

    pool: str
    """The configured pool's name."""
    plans: list[NodeGroupPlan]
    """One managed node group per purchase option (`layout.node_group_plans`)."""
    ami_type: str
    """EKS AMI type of the GPU nodes (`layout.AMI_TYPE` of the node image)."""
    ami_release_version: str
    """The pinned EKS AMI release (`layout.ami_release_version`)."""
    image_volume_device: str
    """The device that holds container images (`layout.IMAGE_VOLUME_DEVICE` of the node image)."""
    disk_gi: int
    """Size of that volume, GiB."""
    cluster_name: pulumi.Input[str]
    """The EKS cluster the groups join."""
    node_role_arn: pulumi.Input[str]
    """The role the nodes take."""
    private_subnets: dict[str, pulumi.Input[str]]
    """zone -> private subnet id; each group takes the subnets of its plan's zones."""
    capacity_block_id: str | None = None
    """The EC2 Capacity Block (capacity reservation id) the nodes launch into, for capacity-block pools."""
    protected: bool = False
    """Protect the node groups."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on every resource and on the instances and volumes."""


def launch_template_args(args: GpuPoolArgs) -> dict:
    """Launch template settings: the image volume sized for Triton images and model copies, IMDSv2 only,
    and for capacity blocks the market type and reservation. No AMI or instance type: the node group sets those."""
    settings: dict = {
        "block_device_mappings": [
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=args.image_volume_device,
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=args.disk_gi, volume_type="gp3", encrypted="true", delete_on_termination="true"
                ),
            )
        ],
        # Hop limit 2 keeps IMDS reachable from pods that need node metadata; credentials for workloads come from IRSA.
        "metadata_options": aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
        ),
        "tag_specifications": [
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=args.tags) for kind in ("instance", "volume")
        ]
        if args.tags
        else None,
    }
    if args.capacity_block_id:
        settings["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block")
        settings["capacity_reservation_specification"] = aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=args.capacity_block_id
            )
        )
    return settings


class GpuPool(pulumi.ComponentResource):
    """The node groups of one pool. `node_groups` maps purchase option -> aws.eks.NodeGroup."""

    launch_template: aws.ec2.LaunchTemplate
    """The pool's one launch template (a pool is either a spot/on-demand mix or a capacity block, never both)."""
    node_groups: dict[str, aws.eks.NodeGroup]
    """purchase option -> its managed node group."""

    def __init__(
        self,
        name: str,
        args: GpuPoolArgs,
        opts: pulumi.ResourceOptions | None = None,
        depends_on: list[pulumi.Resource] | None = None,
    ):
        super().__init__("tritonfleet:aws:GpuPool", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.launch_template = aws.ec2.LaunchTemplate(
            name,
            description=f"tritonfleet GPU pool {args.pool}",
            update_default_version=True,
            tags=args.tags,
            opts=child,
            **launch_template_args(args),
        )
        self.node_groups = {plan.option: self._node_group(args, plan, depends_on or []) for plan in args.plans}
        self.register_outputs(
            {
                "launch_template_id": self.launch_template.id,
                "node_groups": {option: group.node_group_name for option, group in self.node_groups.items()},
            }
        )

    def _node_group(self, args: GpuPoolArgs, plan: NodeGroupPlan, depends_on: list[pulumi.Resource]) -> aws.eks.NodeGroup:
        group = aws.eks.NodeGroup(
            plan.logical_name,
            cluster_name=args.cluster_name,
            node_role_arn=args.node_role_arn,
            subnet_ids=[args.private_subnets[zone] for zone in plan.zones],
            ami_type=args.ami_type,
            release_version=args.ami_release_version,
            capacity_type=plan.capacity_type,
            instance_types=plan.instance_types,
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.launch_template.id, version=self.launch_template.latest_version.apply(str)
            ),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=plan.min_size, max_size=plan.max_size, desired_size=plan.min_size
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            labels=plan.labels,
            taints=[aws.eks.NodeGroupTaintArgs(**plan.taint)],
            tags={**args.tags, "tritonfleet.io/pool": plan.pool},
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protected,
                depends_on=depends_on,
                # cluster-autoscaler owns the desired size; the engine must not reset it on every up.
                ignore_changes=["scalingConfig.desiredSize"],
            ),
        )
        asg_name = group.resources.apply(lambda resources: resources[0].autoscaling_groups[0].name)
        for key, value in plan.autoscaler_tags.items():
            slug = key.removeprefix("k8s.io/cluster-autoscaler/node-template/").replace("/", "-")
            aws.autoscaling.Tag(
                f"{plan.logical_name}-{slug}",
                autoscaling_group_name=asg_name,
                tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                opts=pulumi.ResourceOptions(parent=self),
            )
        return group
