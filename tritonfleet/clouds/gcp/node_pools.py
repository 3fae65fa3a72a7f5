"""What each GKE node pool looks like, decided from the stack config (plain data, no Pulumi;
components/gcp/gpu_pools.py builds them).

One configured GPU pool becomes one GKE node pool per purchase option (`class_bounds`, from the one cost model): a
`mixed` pool becomes an on-demand pool whose minimum is the on-demand base and a spot pool whose maximum is the
spotShare of the burst (their maxima add up to maxNodes); reservation and flex-start pools stay one pool.
Bounds are GKE's *total* node counts (`total_min_node_count`), not the per-zone counts a regional pool multiplies.

Every GPU node pool joins the compute class of its pool's head (compute_classes.py): label and taint
`cloud.google.com/compute-class=<class>`, beside the GPU taint. Upgrades, spot shutdown and local SSDs follow the
purchase option and the machine (docs/gcp.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from tritonfleet.clouds.gcp.drivers import GpuDriverSetup, gpu_driver_setup
from tritonfleet.clouds.gcp.facts import (
    BOOT_DISK_TYPES,
    COMPUTE_CLASS_LABEL,
    DEFAULT_BOOT_DISK_TYPE,
    FLEX_START_MAX_RUN_SECONDS,
    GKE_DEFAULT_REGION_ZONES,
    GKE_TAINT_EFFECT,
    IN_PLACE_UPGRADE,
    SURGE_UPGRADE,
)
from tritonfleet.clouds.gcp.spot import SpotShutdown, spot_shutdown
from tritonfleet.core.capacity import CapacitySplit, NodeRange, fill_split, split_nodes
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import GPU_TAINT_EFFECT, PROJECT, gpu_taint, pool_node_labels
from tritonfleet.core.placement import floor_placement, kept_nodes
from tritonfleet.core.scheduling import pool_members

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
SYSTEM_MACHINE_TYPE = "e2-standard-4"
SYSTEM_DISK_GB = 100
# A machine with this many GPUs is scarce: a surge node needs a second one from stock, quota or the reservation.
SCARCE_GPUS_PER_NODE = 8


def compute_class_name(head: str) -> str:
    """The ComputeClass of a head pool (a pool that is no other pool's fallback); a valid label value."""
    return f"{PROJECT}-{head}"


def class_taint(class_name: str) -> dict[str, str]:
    """The taint GKE documents for manually created node pools of a class, in Kubernetes spelling."""
    return {"key": COMPUTE_CLASS_LABEL, "value": class_name, "effect": GPU_TAINT_EFFECT}


def upgrade_settings(option: str, gpus_per_node: int) -> dict[str, int] | None:
    """Surge settings per purchase option: in place (surge 0, unavailable 1) where a surge node would have to come
    from the reservation or from scarce stock; one surge node otherwise; None for flex-start (GKE's short-lived
    upgrades)."""
    if option == "flex-start":
        return None
    if option == "reservation" or gpus_per_node >= SCARCE_GPUS_PER_NODE:
        return dict(IN_PLACE_UPGRADE)
    return dict(SURGE_UPGRADE)


def local_ssd_count(machine_type: str) -> int | None:
    """Local SSDs the machine comes with (the catalog's host.localSsd), to back the node's ephemeral storage (the
    Triton model cache)."""
    itype = load_catalog().find("gcp", machine_type)
    local = itype.host.local_ssd if itype else None
    return local.disks if local else None


def class_bounds(config: StackConfig, pool: GpuPool) -> CapacitySplit:
    """The autoscaling bounds of the pool's GKE node pools. Minimum: the plan's floor (tritonfleet/core/placement.py:
    minNodes, the on-demand base, and the nodes the deployments' minReplicas keep up), so the autoscaler holds what the
    plan counts and the policy pack reads it back. A mixed pool's on-demand node pool keeps the on-demand base; the
    spot node pool's maximum is the spotShare of the burst, and the class tries spot before on-demand
    (compute_classes.py), so nodes above the base are spot until that maximum, on-demand after it."""
    placed = floor_placement(config).get(pool.name)
    floor = placed.nodes if placed else kept_nodes(config, pool)
    low, high = fill_split(config.cloud, pool, floor), split_nodes(pool, pool.max_nodes)
    return CapacitySplit({o: NodeRange(low.get(o, 0), high[o]) for o in high if high[o] > 0})


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
    taints: list[dict[str, str]]  # key, value, effect in GKE spelling: the GPU taint and the compute class's
    compute_class: str
    spot: bool
    flex_start: bool
    reservation_affinity: str  # ANY_RESERVATION, NO_RESERVATION or SPECIFIC_RESERVATION
    reservation: str | None
    autoscaling: Autoscaling
    disk_size_gb: int
    disk_type: str
    zones: list[str]
    auto_repair: bool
    upgrade: dict[str, int] | None  # max_surge / max_unavailable; None: GKE's own (flex-start)
    shutdown: SpotShutdown | None  # set on spot pools whose cluster version allows the extended window
    local_ssds: int | None  # local SSDs backing ephemeral storage; None: the boot disk
    max_run_duration: str | None = None  # flex-start: the VM's life ("604800s"); None: no limit


def boot_disk_type(machine_type: str) -> str:
    """The boot disk type of a GPU machine type (tritonfleet/clouds/gcp/facts.py BOOT_DISK_TYPES, a row per catalog
    type) or of a system node's."""
    return BOOT_DISK_TYPES.get(machine_type, DEFAULT_BOOT_DISK_TYPE)


def node_pool_name(pool: str, option: str) -> str:
    """GKE node pool name: <pool>-<option>, at most 31 characters (pool names are at most 20)."""
    return f"{pool}-{option}"


def gpu_node_pool_specs(config: StackConfig, pool: GpuPool) -> list[GpuNodePoolSpec]:
    itype = config.instance_type(pool)
    driver = gpu_driver_setup(config)
    class_name = compute_class_name(pool_members(config, pool)[0].name)
    taints = [gpu_taint("gcp"), class_taint(class_name)]
    shutdown = spot_shutdown(config.cluster.gke_build)
    specs = []
    for option, nodes in class_bounds(config, pool).purchase.items():
        labels = pool_node_labels(
            pool.name, pool.gpu, option, {**pool.node_labels, **driver.node_labels}, pool.assumed_usd_per_hour
        )
        specs.append(
            GpuNodePoolSpec(
                pool=pool.name,
                option=option,
                name=node_pool_name(pool.name, option),
                machine_type=itype.name,
                accelerator=itype.accelerator or "",
                accelerator_count=itype.gpu_count,
                driver=driver,
                labels={**labels, COMPUTE_CLASS_LABEL: class_name},
                taints=[{**taint, "effect": GKE_TAINT_EFFECT[taint["effect"]]} for taint in taints],
                compute_class=class_name,
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
                upgrade=upgrade_settings(option, itype.gpu_count),
                shutdown=shutdown if option == "spot" and shutdown.extended else None,
                local_ssds=local_ssd_count(itype.name),
                max_run_duration=f"{FLEX_START_MAX_RUN_SECONDS}s" if option == "flex-start" else None,
            )
        )
    return specs


@dataclass(frozen=True)
class SystemPoolLayout:
    zones: list[str]  # node locations of the system pool; empty: GKE's default zones of the region
    nodes_per_zone: int  # initial_node_count (GKE creates this many in each zone)
    total: int  # nodes in all: nodes_per_zone x zones, the pool's total autoscaling bounds


def system_pool_layout(config: StackConfig) -> SystemPoolLayout:
    """Where the system nodes go so that per-zone x zones is the configured count.

    Fewer nodes than zones: one node in each of the first `count` zones. Otherwise the count is spread evenly (the
    config check `gcp.config_rules.check_system_nodes` refuses a count that is not a multiple of the zones).
    """
    count, zones = config.cluster.system_nodes.count, list(config.cluster.zones)
    if zones and count < len(zones):
        return SystemPoolLayout(zones[:count], 1, count)
    per_zone = max(1, count // (len(zones) or GKE_DEFAULT_REGION_ZONES))
    return SystemPoolLayout(zones, per_zone, per_zone * (len(zones) or GKE_DEFAULT_REGION_ZONES))
