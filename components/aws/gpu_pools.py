"""One GPU pool as EKS managed node groups: a launch template (disk, IMDSv2, capacity block) and one node group per
purchase option, with the scale-from-zero tags cluster-autoscaler reads from the groups' Auto Scaling groups."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.aws.layout import AMI_TYPE, IMAGE_VOLUME_DEVICE, NodeGroupPlan, ami_release_version, node_group_plans
from tritonfleet.core.config import GpuPool, StackConfig


def launch_template_args(config: StackConfig, pool: GpuPool, reservation_id: str | None) -> dict:
    """Launch template settings: the image volume sized for Triton images and model copies, IMDSv2 only,
    and for capacity blocks the market type and reservation. No AMI or instance type: the node group sets those."""
    args: dict = {
        "block_device_mappings": [
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=IMAGE_VOLUME_DEVICE[config.cluster.eks_gpu_node_image],
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=pool.disk_gi, volume_type="gp3", encrypted="true", delete_on_termination="true"
                ),
            )
        ],
        # Hop limit 2 keeps IMDS reachable from pods that need node metadata; credentials for workloads come from IRSA.
        "metadata_options": aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
        ),
        "tag_specifications": [
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=config.tags) for kind in ("instance", "volume")
        ]
        if config.tags
        else None,
    }
    if reservation_id:
        args["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block")
        args["capacity_reservation_specification"] = aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=reservation_id
            )
        )
    return args


class GpuPoolGroups(pulumi.ComponentResource):
    """The node groups of one pool. `node_groups` maps purchase option -> aws.eks.NodeGroup."""

    def __init__(
        self,
        name: str,
        config: StackConfig,
        pool: GpuPool,
        cluster_name: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        private_subnets: dict[str, pulumi.Input[str]],
        opts: pulumi.ResourceOptions | None = None,
        depends_on: list[pulumi.Resource] | None = None,
    ):
        super().__init__("tritonfleet:aws:GpuPool", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.plans = node_group_plans(config, pool, name)
        reservation_id = pool.reservation_id if pool.capacity == "capacity-block" else None
        # One template per pool: a pool is either a spot/on-demand mix or a capacity block, never both.
        self.launch_template = aws.ec2.LaunchTemplate(
            name,
            description=f"tritonfleet GPU pool {pool.name}",
            update_default_version=True,
            tags=config.tags,
            opts=child,
            **launch_template_args(config, pool, reservation_id),
        )
        self.node_groups: dict[str, aws.eks.NodeGroup] = {
            plan.option: self._node_group(config, plan, cluster_name, node_role_arn, private_subnets, depends_on or [])
            for plan in self.plans
        }
        self.register_outputs({"node_groups": {o: g.node_group_name for o, g in self.node_groups.items()}})

    def _node_group(self, config, plan: NodeGroupPlan, cluster_name, node_role_arn, private_subnets, depends_on):
        group = aws.eks.NodeGroup(
            plan.logical_name,
            cluster_name=cluster_name,
            node_role_arn=node_role_arn,
            subnet_ids=[private_subnets[zone] for zone in plan.zones],
            ami_type=AMI_TYPE[config.cluster.eks_gpu_node_image],
            release_version=ami_release_version(config),
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
            tags={**config.tags, "tritonfleet.io/pool": plan.pool},
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=config.protected,
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
