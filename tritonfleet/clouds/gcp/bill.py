"""How Google Cloud bills a GKE stack besides its GPU nodes: the facts tritonfleet/core/bill.py prices (the cluster
management fee, the system node pool, Cloud NAT per VM-hour and GiB, pd-balanced or Hyperdisk Balanced boot disks,
inter-zone traffic billed once). Prices are in the catalog (servicePrices)."""

from __future__ import annotations

from datetime import date

from tritonfleet.clouds.gcp import node_pools
from tritonfleet.clouds.gcp.facts import GKE_DEFAULT_REGION_ZONES
from tritonfleet.core.bill import BillLine, Nodes, charge, nat_assumption, nat_processing
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import HOURS_PER_MONTH

# Inter-zone traffic is billed once, on the sending side (catalog GCPNET).
CROSS_ZONE_BILLED_SIDES = 1
# The lines the budget policies price from the resources that prove them (policies/_platform.py: the cluster and the
# system node pool); Cloud NAT bills per node-hour, so the program registers it with the others (bill.registered_lines).
RESOURCE_COUNTED_LINES = ("control-plane", "system-nodes")
# GKE's default StorageClass (standard-rwo) provisions pd-balanced disks, the Prometheus volume's type when
# monitoring.storageClass is unset. Source: https://cloud.google.com/kubernetes-engine/docs/concepts/persistent-volumes
# (read 2026-12-05; VERIFY).
DEFAULT_STORAGE_CLASS_DISK = "pd-balanced"


def system_disk_gi(config: StackConfig) -> int:
    return node_pools.SYSTEM_DISK_GB


def system_node_range(config: StackConfig) -> tuple[int, int]:
    """The system pool's total bounds hold the planned count (components/gcp/cluster.py)."""
    total = node_pools.system_pool_layout(config).total
    return total, total


def system_instance_type(config: StackConfig) -> str:
    return config.cluster.system_nodes.instance_type or node_pools.SYSTEM_MACHINE_TYPE


def zone_count(config: StackConfig) -> int:
    return len(config.cluster.zones) or GKE_DEFAULT_REGION_ZONES


def boot_volume_item(config: StackConfig, machine_type: str | None) -> str:
    return f"volume:{node_pools.boot_disk_type(machine_type or system_instance_type(config))}"


def prometheus_volume_item(config: StackConfig) -> str:
    name = config.monitoring.storage_class
    return f"volume:{DEFAULT_STORAGE_CLASS_DISK}" if name is None else f"volume:storage-class:{name}"


def control_plane_line(config: StackConfig, today: date) -> BillLine:
    return BillLine(
        "control-plane",
        f"GKE cluster {config.cluster_name} management fee (regional: no free-tier credit)",
        (charge(config, "control-plane", Nodes.fixed(HOURS_PER_MONTH)),),
    )


def nat_lines(config: StackConfig, nodes: Nodes) -> list[BillLine]:
    """Cloud NAT bills each VM that uses it (every node: the nodes are private) an hour, and the GiB it processes."""
    return [
        BillLine(
            "nat-gateways",
            "Cloud NAT for every node (system and GPU)",
            (charge(config, "nat-gateway", nodes.times(HOURS_PER_MONTH)),),
        ),
        BillLine("nat-processing", "data through Cloud NAT", (nat_processing(config),), assumption=nat_assumption(config)),
    ]
