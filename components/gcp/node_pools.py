"""What each GKE node pool looks like, decided from the stack config (plain data, no Pulumi; gpu_pools.py builds them).

One configured GPU pool becomes one GKE node pool per purchase option of `tritonfleet.core.cost.split_capacity`
(the one formula the cost table uses too): a `mixed` pool becomes an on-demand base pool and a spot pool whose
autoscaling bounds add up to the configured minNodes/maxNodes; reservation and flex-start pools stay one pool.
Bounds are GKE's *total* node counts (`total_min_node_count`), not the per-zone counts a regional pool multiplies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from components.gcp.drivers import GpuDriverSetup, gpu_driver_setup
from tritonfleet.clouds.gcp.facts import GKE_TAINT_EFFECT
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import gpu_taint, pool_node_labels
from tritonfleet.core.cost import split_capacity

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
SYSTEM_MACHINE_TYPE = "e2-standard-4"
SYSTEM_DISK_GB = 100
# Machine series that boot only from Hyperdisk (no Persistent Disk); VERIFY against the GCE disk-support table.
HYPERDISK_ONLY_SERIES = ("a3-ultragpu-", "a4-")


@dataclass(frozen=True)
class Autoscaling:
    total_min: int
    total_max: int
    # ANY lets the autoscaler take whichever zone has spot, reservation or flex-start capacity; BALANCED spreads.
    location_policy: str


@dataclass(frozen=True)
class GpuNodePoolSpec:
    pool: str  # the configured pool
    option: str  # purchase option: on-demand, spot, reservation or flex-start
    name: str  # the GKE node pool name
    machine_type: str
    accelerator: str
    accelerator_count: int
    driver: GpuDriverSetup
    labels: dict[str, str]
    taint: dict[str, str]  # key, value, effect in GKE spelling
    spot: bool
    flex_start: bool
    reservation_affinity: str  # ANY_RESERVATION, NO_RESERVATION or SPECIFIC_RESERVATION
    reservation: str | None
    autoscaling: Autoscaling
    disk_size_gb: int
    disk_type: str
    zones: list[str]
    auto_repair: bool


def boot_disk_type(machine_type: str) -> str:
    return "hyperdisk-balanced" if machine_type.startswith(HYPERDISK_ONLY_SERIES) else "pd-balanced"


def node_pool_name(pool: str, option: str) -> str:
    """GKE node pool name: <pool>-<option>, at most 31 characters (pool names are at most 20)."""
    return f"{pool}-{option}"


def gpu_node_pool_specs(config: StackConfig, pool: GpuPool) -> list[GpuNodePoolSpec]:
    itype = config.instance_type(pool)
    driver = gpu_driver_setup(config)
    taint = gpu_taint("gcp")
    specs = []
    for option, nodes in split_capacity(pool).purchase.items():
        specs.append(
            GpuNodePoolSpec(
                pool=pool.name,
                option=option,
                name=node_pool_name(pool.name, option),
                machine_type=itype.name,
                accelerator=itype.accelerator or "",
                accelerator_count=itype.gpu_count,
                driver=driver,
                labels=pool_node_labels(
                    pool.name, pool.gpu, option, {**pool.node_labels, **driver.node_labels}, pool.assumed_usd_per_hour
                ),
                taint={**taint, "effect": GKE_TAINT_EFFECT[taint["effect"]]},
                spot=option == "spot",
                flex_start=option == "flex-start",
                reservation_affinity={"reservation": "SPECIFIC_RESERVATION", "on-demand": "ANY_RESERVATION"}.get(
                    option, "NO_RESERVATION"
                ),
                reservation=pool.reservation_id if option == "reservation" else None,
                autoscaling=Autoscaling(nodes.min, nodes.max, "BALANCED" if option == "on-demand" else "ANY"),
                disk_size_gb=pool.disk_gi,
                disk_type=boot_disk_type(itype.name),
                zones=pool.zones or config.cluster.zones,
                # Flex-start nodes are not repaired (GKE flex-start docs create them with --no-enable-autorepair).
                auto_repair=option != "flex-start",
            )
        )
    return specs


def system_pool_nodes_per_zone(config: StackConfig) -> int:
    """Initial nodes per zone of the system pool; its total autoscaling bounds keep it at the configured count."""
    zones = len(config.cluster.zones) or 1
    return math.ceil(config.cluster.system_nodes.count / zones)
