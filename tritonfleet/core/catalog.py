"""Typed loader for the GPU catalog (catalog.yaml): instance/machine types, GPUs and dated, sourced prices."""

from __future__ import annotations

import datetime as dt
import re
from functools import cache
from importlib import resources
from typing import Annotated, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from tritonfleet.core.cloud import cloud as registered_cloud
from tritonfleet.core.cloud import cloud_names
from tritonfleet.core.conventions import LABEL_VALUE_PATTERN


def _registered_cloud(name: str) -> str:
    if name not in cloud_names():
        raise ValueError(f"unknown cloud {name!r}; registered: {', '.join(cloud_names())}")
    return name


# A cloud of the registry (tritonfleet/core/cloud.py), by name.
CloudName = Annotated[str, AfterValidator(_registered_cloud)]
PurchaseOption = Literal["on-demand", "spot", "capacity-block", "reservation", "flex-start"]
PURCHASE_OPTIONS: tuple[str, ...] = ("on-demand", "spot", "capacity-block", "reservation", "flex-start")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


class Source(_Strict):
    title: str
    as_of: dt.date = Field(alias="asOf")
    date_approximate: bool = Field(False, alias="dateApproximate")
    verify: bool = False


class Network(_Strict):
    """Sustained (baseline) network bandwidth of a node, for estimates of how long a model download takes."""

    gbps: float = Field(gt=0)
    source: str


class Price(_Strict):
    usd: float = Field(gt=0)
    source: str
    # The regions the source lists this figure for. In any other region the price is unknown (never this figure):
    # prices differ by region (AWS g6e.xlarge on-demand: $1.861 in us-east-1, $2.327 in eu-central-1).
    regions: tuple[str, ...] = Field(min_length=1)
    note: str = ""
    verify: bool = False
    sku: str = ""  # the vendor's SKU, where the price was read from its price API (scripts/refresh_prices.py)

    def applies_in(self, region: str | None) -> bool:
        """True in one of the price's regions; `region=None` asks for the figure wherever it holds (reference uses:
        comparing types with each other, never a stack's cost)."""
        return region is None or region in self.regions


class RegionalPrice(Price):
    """A price of one purchase option in regions other than those of the entry's `prices`."""

    option: PurchaseOption


class ServicePrice(Price):
    """A price of something a stack runs besides its GPU nodes (control plane, system nodes, NAT, load balancers,
    volumes, storage, log ingestion, traffic): USD per `unit` of `item`, in the listed regions only."""

    cloud: CloudName
    item: str  # e.g. nat-gateway-hour, ebs-gp3, instance:m6i.xlarge
    unit: str  # what one `usd` buys: hour, GB, GB-month, node-hour, LCU-hour


class Benchmark(_Strict):
    """A published per-accelerator throughput: an estimate for sizing, never a measurement of the user's model."""

    gpu: str
    model: str
    scenario: str
    inferences_per_second: float = Field(alias="inferencesPerSecond", gt=0)  # in `unit`, per GPU
    source: str
    note: str = ""
    unit: Literal["inferences/s", "output tokens/s"] = "inferences/s"  # an LLM benchmark counts output tokens


COMPUTE_CAPABILITY_SOURCE = "CUDAGPUS"


class Gpu(_Strict):
    memory_gb: int = Field(alias="memoryGb")
    vendor_name: str = Field(alias="vendorName")
    verify: bool = False
    # The CUDA compute capability ("9.0"): a TensorRT engine runs only on the one it was built for.
    compute_capability: str | None = Field(None, alias="computeCapability", pattern=r"^\d+\.\d+$")


Architecture = Literal["x86_64", "arm64"]


class LocalSsd(_Strict):
    """The local NVMe SSDs a type comes with (EC2 instance store, Compute Engine's bundled local SSDs), in total, in
    the unit its source lists: EC2 says GB (decimal), Compute Engine GiB."""

    disks: int = Field(gt=0)
    gb: int | None = Field(None, gt=0)
    gib: int | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _one_size(self) -> LocalSsd:
        if (self.gb is None) == (self.gib is None):
            raise ValueError("a local SSD size is either gb or gib, as its source lists it")
        return self

    @property
    def total_gib(self) -> float:
        return self.gib if self.gib is not None else self.gb * 1e9 / 2**30  # type: ignore[operator]


class Host(_Strict):
    """A node of the type apart from its GPUs: its CPU architecture (the images it boots and runs must be built for
    it) and the local SSDs it comes with (what backs its ephemeral storage; null: none, the boot disk does). Both are
    required, so a new row cannot leave them out and plan as an x86_64 node without local SSD."""

    arch: Architecture
    local_ssd: LocalSsd | None = Field(alias="localSsd")
    source: str


class InstanceType(_Strict):
    cloud: CloudName
    name: str
    gpu: str
    gpu_count: int = Field(alias="gpuCount", gt=0)
    vcpu: int
    memory_gib: int = Field(alias="memoryGib")
    accelerator: str | None = None
    network: Network | None = None  # None: unknown (no download-time estimate)
    host: Host
    default: bool = False
    verify: bool = False
    purchase_options: tuple[PurchaseOption, ...] = Field(alias="purchaseOptions")
    prices: dict[PurchaseOption, Price]
    regional_prices: tuple[RegionalPrice, ...] = Field((), alias="regionalPrices")

    def _published(self, option: str, region: str | None) -> Price | None:
        if region is not None:
            regional = next((p for p in self.regional_prices if p.option == option and region in p.regions), None)
            if regional is not None:
                return regional
        found = self.prices.get(option)  # type: ignore[call-overload]
        return found if found is not None and found.applies_in(region) else None

    def price(self, option: str, region: str | None = None) -> Price | None:
        """The published $/node-hour for a purchase option in `region`, or None when unknown there (`region=None`:
        the entry's main figure, wherever it holds).

        Reservations bill at the on-demand rate unless a commitment says otherwise.
        """
        found = self._published(option, region)
        if option == "reservation" and found is None and "reservation" not in self.prices:
            found = self._published("on-demand", region)
        return found

    def priced_regions(self, option: str) -> tuple[str, ...]:
        """Every region the catalog holds a price of `option` for (reservations: the on-demand ones too)."""
        options = (option, "on-demand") if option == "reservation" and "reservation" not in self.prices else (option,)
        prices = [p for o in options for p in [self.prices.get(o), *(r for r in self.regional_prices if r.option == o)] if p]  # type: ignore[call-overload]
        return tuple(sorted({region for p in prices for region in p.regions}))


class Catalog(_Strict):
    sources: dict[str, Source]
    gpus: dict[str, Gpu]
    alternatives: dict[CloudName, dict[str, list[str]]]
    instance_types: tuple[InstanceType, ...] = Field(alias="instanceTypes")
    benchmarks: tuple[Benchmark, ...] = ()
    service_prices: tuple[ServicePrice, ...] = Field((), alias="servicePrices")

    @model_validator(mode="after")
    def _consistent(self) -> Catalog:
        # GPU names and instance type names become Kubernetes node label values (tritonfleet.io/gpu, the autoscaler's
        # node templates), so a name the API server would refuse is refused here, before any plan.
        for kind, names in (("GPU", self.gpus), ("instance type", [i.name for i in self.instance_types])):
            for name in names:
                if not name or not re.fullmatch(LABEL_VALUE_PATTERN, name):
                    raise ValueError(
                        f"{kind} {name!r} is not a valid Kubernetes label value: at most 63 letters, digits, '-', '_' "
                        "or '.', starting and ending with a letter or digit"
                    )
        seen: set[tuple[str, str]] = set()
        for it in self.instance_types:
            key = (it.cloud, it.name)
            if key in seen:
                raise ValueError(f"duplicate instance type {it.cloud}/{it.name}")
            seen.add(key)
            if it.gpu not in self.gpus:
                raise ValueError(f"{it.name}: unknown GPU {it.gpu}")
            if registered_cloud(it.cloud).machine_types_name_their_accelerator and not it.accelerator:
                raise ValueError(f"{it.name}: {it.cloud} machine types need their accelerator type (accelerator)")
            if it.host.source not in self.sources:
                raise ValueError(f"{it.name} host: unknown source {it.host.source}")
            for option, price in [*it.prices.items(), *((r.option, r) for r in it.regional_prices)]:
                if price.source not in self.sources:
                    raise ValueError(f"{it.name} {option}: unknown source {price.source}")
                if option not in it.purchase_options and option != "reservation":
                    raise ValueError(f"{it.name}: price for {option}, which it is not sold as")
            for regional in it.regional_prices:
                main = it.prices.get(regional.option)
                twice = set(regional.regions) & set(main.regions if main else ()) | {
                    r for other in it.regional_prices if other is not regional and other.option == regional.option
                    for r in set(other.regions) & set(regional.regions)
                }
                if twice:
                    raise ValueError(f"{it.name} {regional.option}: two prices for {', '.join(sorted(twice))}")
        for bench in self.benchmarks:
            if bench.source not in self.sources or bench.gpu not in self.gpus:
                raise ValueError(f"benchmark {bench.gpu}/{bench.model}: unknown source or GPU")
        for it in self.instance_types:
            if it.network is not None and it.network.source not in self.sources:
                raise ValueError(f"{it.name} network: unknown source {it.network.source}")
        cited = {p.source for i in self.instance_types for p in [*i.prices.values(), *i.regional_prices]}
        cited |= {b.source for b in self.benchmarks}
        claimed: set[tuple[str, str, str]] = set()
        for service in self.service_prices:
            if service.source not in self.sources:
                raise ValueError(f"{service.cloud} {service.item}: unknown source {service.source}")
            for region in service.regions:
                if (service.cloud, service.item, region) in claimed:
                    raise ValueError(f"{service.cloud} {service.item}: two prices for {region}")
                claimed.add((service.cloud, service.item, region))
            cited.add(service.source)
        if any(g.compute_capability for g in self.gpus.values()):
            if COMPUTE_CAPABILITY_SOURCE not in self.sources:
                raise ValueError(f"GPU compute capabilities cite {COMPUTE_CAPABILITY_SOURCE}, which is not a source")
            cited.add(COMPUTE_CAPABILITY_SOURCE)
        cited |= {i.host.source for i in self.instance_types}
        unused = set(self.sources) - cited - {i.network.source for i in self.instance_types if i.network}
        if unused:
            raise ValueError(f"sources no price cites: {sorted(unused)}")
        for cloud, gpu in {(i.cloud, i.gpu) for i in self.instance_types}:
            if sum(1 for i in self.types_for(cloud, gpu) if i.default) != 1:
                raise ValueError(f"{cloud}/{gpu}: exactly one instance type must be the default")
        return self

    def find(self, cloud: str, name: str) -> InstanceType | None:
        return next((i for i in self.instance_types if i.cloud == cloud and i.name == name), None)

    def types_for(self, cloud: str, gpu: str) -> list[InstanceType]:
        return [i for i in self.instance_types if i.cloud == cloud and i.gpu == gpu]

    def gpus_on(self, cloud: str) -> list[str]:
        return sorted({i.gpu for i in self.instance_types if i.cloud == cloud})

    def default_type(self, cloud: str, gpu: str) -> InstanceType | None:
        return next((i for i in self.types_for(cloud, gpu) if i.default), None)

    def smallest_unit(self, cloud: str, gpu: str) -> InstanceType | None:
        """The smallest node one can buy with this GPU on this cloud (fewest GPUs, then cheapest on-demand, then vCPUs)."""
        types = self.types_for(cloud, gpu)
        on_demand = {t.name: (p.usd if (p := t.price("on-demand")) else float("inf")) for t in types}
        return min(types, key=lambda t: (t.gpu_count, on_demand[t.name], t.vcpu), default=None)

    def service_price(self, cloud: str, item: str, region: str) -> ServicePrice | None:
        """The price of a non-GPU item in `region`, or None when the catalog has none there (unknown, never borrowed
        from another region)."""
        return next((p for p in self.service_prices if p.cloud == cloud and p.item == item and region in p.regions), None)

    def service_priced_regions(self, cloud: str, item: str) -> tuple[str, ...]:
        """Every region the catalog prices a non-GPU item in (for messages about an unknown price)."""
        found = {r for p in self.service_prices if p.cloud == cloud and p.item == item for r in p.regions}
        return tuple(sorted(found))

    def alternatives_for(self, cloud: str, gpu: str) -> list[str]:
        return self.alternatives.get(cloud, {}).get(gpu, [])  # type: ignore[call-overload]


# libyaml's parser where PyYAML was built with it (several times faster; every command reads the catalog), else
# PyYAML's own: the same safe constructors either way. For our own data; a user's stack file keeps PyYAML's parser,
# whose error messages the config errors quote.
FAST_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_catalog(text: str) -> Catalog:
    """A catalog from its YAML text; raises pydantic's ValidationError naming the entry that is wrong."""
    return Catalog.model_validate(yaml.load(text, Loader=FAST_SAFE_LOADER))  # noqa: S506 - a safe loader


@cache
def load_catalog() -> Catalog:
    return parse_catalog(resources.files("tritonfleet.core").joinpath("catalog.yaml").read_text())
