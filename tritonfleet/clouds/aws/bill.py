"""How AWS bills an EKS stack besides its GPU nodes: the facts tritonfleet/core/bill.py prices (control plane from
support.py's EKS fees, the system node group, one NAT gateway per zone in a protected stack, gp3 volumes, cross-AZ
traffic billed on both sides). Prices are in the catalog (servicePrices)."""

from __future__ import annotations

from datetime import date

from tritonfleet.clouds.aws import layout
from tritonfleet.clouds.aws.support import control_plane
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.core.bill import BillLine, Nodes, charge, nat_assumption, nat_processing
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import HOURS_PER_MONTH

# A byte between Availability Zones is billed $0.01/GB leaving one and $0.01/GB entering the other (catalog AWSVPC).
CROSS_ZONE_BILLED_SIDES = 2
# The lines the budget policies price from the resources that prove them (policies/_platform.py: the cluster, the
# system node group, each NAT gateway); the program registers the others for them (bill.registered_lines).
RESOURCE_COUNTED_LINES = ("control-plane", "system-nodes", "nat-gateways")


def system_disk_gi(config: StackConfig) -> int:
    return layout.SYSTEM_DISK_GI


def system_node_range(config: StackConfig) -> tuple[int, int]:
    return layout.system_node_range(config.cluster.system_nodes.count)


def system_instance_type(config: StackConfig) -> str:
    return layout.system_instance_type(config)


def zone_count(config: StackConfig) -> int:
    return len(aws_zones(config.region, config.cluster))


def boot_volume_item(config: StackConfig, instance_type: str | None) -> str:
    return "volume:gp3"  # system node group and Karpenter EC2NodeClass root volumes are gp3


def prometheus_volume_item(config: StackConfig) -> str:
    # The stack's default StorageClass is gp3 (layout.DEFAULT_STORAGE_CLASS); another class is priced unknown.
    name = config.monitoring.storage_class or layout.DEFAULT_STORAGE_CLASS
    return "volume:gp3" if name == layout.DEFAULT_STORAGE_CLASS else f"volume:storage-class:{name}"


def control_plane_line(config: StackConfig, today: date) -> BillLine:
    """EKS's fee per cluster-hour now; with supportType EXTENDED the extended-support fee from the end of standard
    support (support.control_plane), shown as a note so the upgrade is planned before it starts."""
    plane = control_plane(config.cluster.kubernetes_version, config.environment, today)
    note = ""
    if "monthlyUsdInExtendedSupport" in plane:
        note = (
            f"From {plane['endOfStandardSupport']} (end of standard support) ${plane['monthlyUsdInExtendedSupport']:,.2f}"
            "/month in extended support until upgraded"
        )
    return BillLine(
        "control-plane",
        f"EKS cluster {config.cluster_name} ({plane['supportType'].lower()} support type)",
        (),
        note=note,
        fixed_usd=Nodes.fixed(plane["monthlyUsdNow"]),
        source=plane["source"],
    )


def nat_lines(config: StackConfig, nodes: Nodes) -> list[BillLine]:
    """The NAT gateways the network creates (one per zone when protected, else one) and the GB they process. An
    existing VPC's NAT is not this stack's: not counted."""
    if config.cluster.existing_vpc_id:
        return [
            BillLine(
                "nat-gateways",
                f"existing VPC {config.cluster.existing_vpc_id}: its NAT gateways are billed to it, not counted",
                (),
            )
        ]
    gateways = len(layout.nat_zones(config))
    return [
        BillLine("nat-gateways", f"{gateways} NAT gateway(s)", (charge(config, "nat-gateway", Nodes.fixed(gateways * HOURS_PER_MONTH)),)),
        BillLine(
            "nat-processing",
            "data through NAT (S3 model pulls bypass it through the gateway endpoint)",
            (nat_processing(config),),
            assumption=nat_assumption(config),
        ),
    ]

