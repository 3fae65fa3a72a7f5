"""The rest of the bill: every line a stack costs besides its GPU nodes, each priced from the catalog's dated,
sourced, regional prices (`servicePrices` in catalog.yaml).

Lines: the control plane, system nodes, NAT (hours and GB processed), load balancers per exposure mode, volumes
(node boot disks, Prometheus, Grafana), bucket storage from the deployments' repository sizes, log ingestion, and
inference traffic (cross-zone, internet egress). Usage-driven lines come from the stack's `usage` section and say
what they assume. A price the catalog lacks in the stack's region makes the line unknown (None), never 0, as for GPU
prices. The cloud supplies its own facts (tritonfleet/clouds/<cloud>/bill.py: which volume type, how NAT and the
control plane bill); this module holds the arithmetic, so both clouds price alike.

Each line has three figures matching the GPU ones: floor (the nodes at minReplicas), expected (at maxReplicas) and
ceiling (every pool at maxNodes); only lines that follow the node count differ between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from tritonfleet.core.catalog import ServicePrice, load_catalog
from tritonfleet.core.conventions import HOURS_PER_MONTH

if TYPE_CHECKING:
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.cost import StackCost

SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
BYTES_PER_UNIT = {"GB": 1e9, "GiB": 2**30}


@dataclass(frozen=True)
class Nodes:
    """A count at the floor, the expected ceiling and the ceiling."""

    floor: float
    expected: float
    ceiling: float

    @classmethod
    def fixed(cls, count: float) -> Nodes:
        return cls(count, count, count)

    def times(self, factor: float) -> Nodes:
        return Nodes(self.floor * factor, self.expected * factor, self.ceiling * factor)

    def plus(self, other: Nodes) -> Nodes:
        return Nodes(self.floor + other.floor, self.expected + other.expected, self.ceiling + other.ceiling)


@dataclass(frozen=True)
class Charge:
    """One priced item of a line: `quantity` units of the catalog's `item` a month (in the price's unit)."""

    item: str
    quantity: Nodes
    price: ServicePrice | None
    priced_elsewhere: tuple[str, ...] = ()  # the regions the catalog prices the item in, when not this one


@dataclass(frozen=True)
class BillLine:
    line: str  # a stable key: control-plane, system-nodes, nat-gateways, ...
    what: str  # what is counted, in words ("3 x m6i.xlarge")
    charges: tuple[Charge, ...]
    assumption: str = ""  # what a usage-driven line assumes (the stack's `usage` section)
    note: str = ""
    fixed_usd: Nodes | None = None  # a line priced outside the catalog (the EKS control plane fees, facts.py)
    source: str = ""  # the source of fixed_usd

    def _monthly(self, pick: str) -> float | None:
        if self.fixed_usd is not None:
            return round(getattr(self.fixed_usd, pick), 2)
        total = 0.0
        for charge in self.charges:
            quantity = getattr(charge.quantity, pick)
            if quantity == 0:
                continue
            if charge.price is None:
                return None
            total += quantity * charge.price.usd
        return round(total, 2)

    @property
    def monthly_floor_usd(self) -> float | None:
        return self._monthly("floor")

    @property
    def monthly_expected_usd(self) -> float | None:
        return self._monthly("expected")

    @property
    def monthly_ceiling_usd(self) -> float | None:
        return self._monthly("ceiling")

    @property
    def unknown(self) -> tuple[str, ...]:
        """The items of this line without a price in the stack's region (and a quantity above 0)."""
        return tuple(
            c.item for c in self.charges if c.price is None and (c.quantity.ceiling or c.quantity.floor)
        )


def priced_charge(cloud: str, region: str | None, item: str, quantity: Nodes) -> Charge:
    """`quantity` of a catalog item, priced in `region` (None there: unknown, with where it is priced)."""
    catalog = load_catalog()
    price = catalog.service_price(cloud, item, region) if region else None
    elsewhere = () if price else catalog.service_priced_regions(cloud, item)
    return Charge(item, quantity, price, elsewhere)


def charge(config: StackConfig, item: str, quantity: Nodes) -> Charge:
    """`quantity` of a catalog item, priced in the stack's region."""
    return priced_charge(config.cloud, config.region, item, quantity)


def unit_of(config: StackConfig, item: str) -> str:
    """The unit the catalog prices an item in (any region's row; GB when none has a row)."""
    rows = [p for p in load_catalog().service_prices if p.cloud == config.cloud and p.item == item]
    return rows[0].unit if rows else "GB"


def gigabytes(config: StackConfig, item: str, bytes_per_month: float) -> float:
    """Bytes a month in the unit the item's price counts (GB or GiB)."""
    unit = unit_of(config, item)
    return bytes_per_month / BYTES_PER_UNIT["GiB" if unit.startswith("GiB") else "GB"]


@dataclass(frozen=True)
class Traffic:
    """The inference traffic the usage lines price, per deployment: inferences/s and where the bytes go."""

    deployment: str
    mode: str  # exposure mode (tritonfleet.core.exposure)
    inferences_per_second: float


def traffic(config: StackConfig) -> list[Traffic]:
    """Each deployment's average inferences/s: its targetLoad (average, else peak); usage.inferencesPerSecond, when
    set, is the stack's total, shared in the same proportions (evenly where no deployment states a load)."""
    stated = []
    for d in config.triton_deployments:
        load = d.target_load
        value = 0.0 if load is None else load.inferences_per_second(load.average if load.average is not None else load.peak)
        stated.append((d, value))
    total = config.usage.inferences_per_second
    if total is not None:
        known = sum(v for _, v in stated)
        share = [(d, total * (v / known if known else 1 / len(stated))) for d, v in stated] if stated else []
        stated = share
    return [Traffic(d.name, d.access.mode, round(v, 6)) for d, v in stated]


def traffic_assumption(config: StackConfig, rows: list[Traffic]) -> str:
    usage = config.usage
    total = sum(r.inferences_per_second for r in rows)
    where = "usage.inferencesPerSecond" if usage.inferences_per_second is not None else "targetLoad (average, else peak)"
    return (
        f"{total:,.6g} inferences/s ({where}) x {usage.request_bytes:,} B request + {usage.response_bytes:,} B "
        "response (usage.requestBytes, usage.responseBytes)"
    )


def _bytes_per_month(rows: list[Traffic], per_inference: int) -> float:
    return sum(r.inferences_per_second for r in rows) * per_inference * SECONDS_PER_MONTH


def other_lines(config: StackConfig, cost: StackCost, today: date) -> list[BillLine]:
    """Every non-GPU line of the stack's monthly bill, in the order a bill lists them."""
    from tritonfleet.core.cloud import cloud

    facts = cloud(config.cloud).bill
    gpu_nodes = Nodes(
        sum(p.floor_nodes for p in cost.pools),
        sum(p.ceiling_nodes for p in cost.pools),
        sum(p.max_nodes for p in cost.pools),
    )
    low, high = facts.system_node_range(config)
    system = Nodes(low, low, high)
    system_type = facts.system_instance_type(config)
    rows = traffic(config)
    lines = [
        facts.control_plane_line(config, today),
        BillLine(
            "system-nodes",
            f"{low}{'' if high == low else f'..{high}'} x {system_type} (on-demand)",
            (charge(config, f"instance:{system_type}", system.times(HOURS_PER_MONTH)),),
        ),
        *facts.nat_lines(config, system.plus(gpu_nodes)),
        *load_balancer_lines(config, rows),
        boot_volume_line(config, cost, facts, system),
        *monitoring_volume_lines(config, facts),
        bucket_line(config),
        log_line(config),
        *traffic_lines(config, rows, facts),
    ]
    return lines


def load_balancer_lines(config: StackConfig, rows: list[Traffic]) -> list[BillLine]:
    """One load balancer per exposed deployment (mode internal: a network one; internal-application and public: an
    application one): its hours, and its capacity units for the bytes it processes (the bytes dimension only)."""
    lines = []
    for kind, modes in (("network", ("internal",)), ("application", ("internal-application", "public"))):
        exposed = [r for r in rows if r.mode in modes]
        named = [d.name for d in config.triton_deployments if d.access.mode in modes]
        if not named:
            continue
        capacity = f"load-balancer-capacity:{kind}"
        processed = gigabytes(config, capacity, _bytes_per_month(exposed, config.usage.request_bytes + config.usage.response_bytes))
        lines.append(
            BillLine(
                f"load-balancers-{kind}",
                f"{len(named)} {kind} load balancer(s): {', '.join(named)}",
                (
                    charge(config, f"load-balancer:{kind}", Nodes.fixed(len(named) * HOURS_PER_MONTH)),
                    charge(config, capacity, Nodes.fixed(round(processed, 3))),
                ),
                assumption=f"{processed:,.1f} {unit_of(config, capacity).split('-')[0]} processed a month: "
                + traffic_assumption(config, exposed),
            )
        )
    return lines


def boot_volume_line(config: StackConfig, cost: StackCost, facts, system: Nodes) -> BillLine:  # noqa: ANN001
    """Every node's boot disk: the system nodes' and each GPU pool's (diskGi) at its floor, expected and max nodes."""
    system_gi = facts.system_disk_gi(config)
    by_item: dict[str, Nodes] = {facts.boot_volume_item(config, None): system.times(system_gi)}
    for pc in cost.pools:
        pool = config.pool(pc.pool)
        item = facts.boot_volume_item(config, pc.instance_type)
        size = Nodes(pc.floor_nodes, pc.ceiling_nodes, pc.max_nodes).times(pool.disk_gi)
        by_item[item] = by_item[item].plus(size) if item in by_item else size
    gpu = ", ".join(f"{config.pool(pc.pool).disk_gi} GiB per {pc.pool} node" for pc in cost.pools)
    return BillLine(
        "volumes-boot",
        f"boot disks: {system_gi} GiB per system node" + (f", {gpu}" if gpu else ""),
        tuple(charge(config, item, quantity) for item, quantity in by_item.items()),
    )


def monitoring_volume_lines(config: StackConfig, facts) -> list[BillLine]:  # noqa: ANN001
    if not config.monitoring.enabled:
        return []
    item = facts.prometheus_volume_item(config)
    return [
        BillLine(
            "volume-prometheus",
            f"Prometheus volume {config.monitoring.storage_gi} GiB ({config.monitoring.retention_days} days kept)",
            (charge(config, item, Nodes.fixed(config.monitoring.storage_gi)),),
        ),
        BillLine(
            "volume-grafana",
            "Grafana: no volume (dashboards and data sources are provisioned from ConfigMaps and Secrets)",
            (),
        ),
    ]


def bucket_line(config: StackConfig) -> BillLine:
    """The model buckets hold each deployment's repository (repositoryGi, current versions; noncurrent versions kept
    for noncurrentVersionDays add to it when models are replaced)."""
    size = sum(d.repository_gi for d in config.triton_deployments)
    names = ", ".join(f"{d.name} {d.repository_gi} GiB" for d in config.triton_deployments) or "no deployment"
    gb = size * 2**30 / BYTES_PER_UNIT["GiB" if unit_of(config, "object-storage").startswith("GiB") else "GB"]
    return BillLine(
        "bucket-storage",
        f"model buckets: {size} GiB of repositories ({names})",
        (charge(config, "object-storage", Nodes.fixed(round(gb, 3))),),
        note="current versions only; replaced models are kept noncurrentVersionDays more",
    )


def log_line(config: StackConfig) -> BillLine:
    volume = config.usage.log_gb_per_month
    return BillLine(
        "log-ingestion",
        "logs into the cloud's log service (control plane and container logs)",
        (charge(config, "log-ingestion", Nodes.fixed(volume)),),
        assumption=f"{volume:,g} GB a month (usage.logGbPerMonth)",
    )


def traffic_lines(config: StackConfig, rows: list[Traffic], facts) -> list[BillLine]:  # noqa: ANN001
    """Cross-zone traffic (a share of all inference bytes) and internet egress (responses of public deployments)."""
    usage = config.usage
    zones = facts.zone_count(config)
    share = usage.cross_zone_share if usage.cross_zone_share is not None else (zones - 1) / zones if zones else 0.0
    both = _bytes_per_month(rows, usage.request_bytes + usage.response_bytes) * share * facts.CROSS_ZONE_BILLED_SIDES
    public = [r for r in rows if r.mode == "public"]
    out = _bytes_per_month(public, usage.response_bytes)
    cross = gigabytes(config, "cross-zone", both)
    egress = gigabytes(config, "internet-egress", out)
    share_text = (
        "usage.crossZoneShare" if usage.cross_zone_share is not None else f"(zones - 1) / zones with {zones} zones"
    )
    sides = " x 2 (billed leaving and entering)" if facts.CROSS_ZONE_BILLED_SIDES == 2 else ""
    return [
        BillLine(
            "traffic-cross-zone",
            "inference traffic between zones",
            (charge(config, "cross-zone", Nodes.fixed(round(cross, 3))),),
            assumption=f"{share:.0%} crosses zones ({share_text}){sides}: " + traffic_assumption(config, rows),
        ),
        BillLine(
            "traffic-egress",
            "responses to the internet (public deployments)",
            (charge(config, "internet-egress", Nodes.fixed(round(egress, 3))),),
            assumption=(traffic_assumption(config, public) if public else "no public deployment: no egress counted"),
        ),
    ]


def nat_processing(config: StackConfig) -> Charge:
    """NAT data processing for usage.natGbPerMonth (in the price's unit)."""
    volume = gigabytes(config, "nat-processing", config.usage.nat_gb_per_month * 1e9)
    return charge(config, "nat-processing", Nodes.fixed(round(volume, 3)))


def nat_assumption(config: StackConfig) -> str:
    return f"{config.usage.nat_gb_per_month:,g} GB a month through NAT (usage.natGbPerMonth)"


def total(lines: list[BillLine], pick: str) -> float | None:
    values = [getattr(line, f"monthly_{pick}_usd") for line in lines]
    return None if any(v is None for v in values) else round(sum(v for v in values if v is not None), 2)


def known_total(lines: list[BillLine], pick: str) -> float:
    return round(sum(v for line in lines if (v := getattr(line, f"monthly_{pick}_usd")) is not None), 2)


def registered_lines(config: StackConfig, lines: list[BillLine]) -> list[dict[str, object]]:
    """The lines no resource proves (traffic, NAT GB, logs, bucket storage, volumes, load balancers; GCP's Cloud NAT
    hours) as plain data: each line's catalog items with their monthly quantities and what it assumes. The program
    registers them on the Platform component (`billLines`) so that the budget policies price them as the plan does
    (priced_registered_lines); the cloud names the lines the policies count from resources instead."""
    from tritonfleet.core.cloud import cloud

    counted = cloud(config.cloud).bill.RESOURCE_COUNTED_LINES
    return [
        {
            "line": line.line,
            "assumption": line.assumption,
            "charges": [
                {"item": c.item, "floor": c.quantity.floor, "expected": c.quantity.expected, "ceiling": c.quantity.ceiling}
                for c in line.charges
            ],
        }
        for line in lines
        if line.line not in counted
    ]


def priced_registered_lines(registered: list[dict], cloud: str, region: str | None) -> list[BillLine]:
    """registered_lines' data back as BillLines, each charge priced from the catalog in `region`."""
    return [
        BillLine(
            str(entry["line"]),
            str(entry["line"]),
            tuple(
                priced_charge(cloud, region, str(c["item"]), Nodes(float(c["floor"]), float(c["expected"]), float(c["ceiling"])))
                for c in entry.get("charges") or ()
            ),
            assumption=str(entry.get("assumption") or ""),
        )
        for entry in registered
    ]
