"""How the toy cloud bills a stack besides its GPU nodes (the facts tritonfleet/core/bill.py prices; the prices are
the toy's catalog rows, catalog.py)."""

from __future__ import annotations

from datetime import date

from tests.toy_cloud.catalog import SYSTEM_TYPE
from tritonfleet.core.bill import BillLine, Nodes, charge, nat_assumption, nat_processing
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import HOURS_PER_MONTH

CROSS_ZONE_BILLED_SIDES = 1
# Priced by the budget policies from the resources that prove them (resources.platform_line).
RESOURCE_COUNTED_LINES = ("control-plane", "system-nodes")
SYSTEM_DISK_GI = 50
DISK_ITEM = "volume:toy-disk"


def system_disk_gi(config: StackConfig) -> int:
    return SYSTEM_DISK_GI


def system_node_range(config: StackConfig) -> tuple[int, int]:
    count = config.cluster.system_nodes.count
    return count, count


def system_instance_type(config: StackConfig) -> str:
    return config.cluster.system_nodes.instance_type or SYSTEM_TYPE


def zone_count(config: StackConfig) -> int:
    from tests.toy_cloud.config_rules import stack_zones

    return len(stack_zones(config.region, config.cluster))


def boot_volume_item(config: StackConfig, instance_type: str | None) -> str:
    return DISK_ITEM


def prometheus_volume_item(config: StackConfig) -> str:
    return DISK_ITEM


def control_plane_line(config: StackConfig, today: date) -> BillLine:
    return BillLine(
        "control-plane", f"toy control plane {config.cluster_name}", (charge(config, "control-plane", Nodes.fixed(HOURS_PER_MONTH)),)
    )


def nat_lines(config: StackConfig, nodes: Nodes) -> list[BillLine]:
    """One NAT gateway per stack, and the GB it processes."""
    return [
        BillLine("nat-gateways", "one toy NAT gateway", (charge(config, "nat-gateway", Nodes.fixed(HOURS_PER_MONTH)),)),
        BillLine("nat-processing", "data through the NAT gateway", (nat_processing(config),), assumption=nat_assumption(config)),
    ]
