"""Refresh the catalog's prices from the vendors: the AWS Price List API (pricing:GetProducts) and the Google Cloud
Billing Catalog API (services.skus.list), then rewrite the matching rows of tritonfleet/core/catalog.yaml with the
vendor's figure, its SKU and the date it was read (source AWSPRICELIST or GCPBILLING).

It needs credentials and the network, so the tests never run it: they run its parsers (`aws_quotes`, `gcp_quotes`)
and the rewrite (`apply_quotes`) on small recorded responses (tests/data/prices/).

    venv/bin/python scripts/refresh_prices.py --cloud aws --region us-east-1 [--write] [--record DIR]
    GOOGLE_API_KEY=... venv/bin/python scripts/refresh_prices.py --cloud gcp --region us-central1 [--write]

Without --write it prints what would change. Rows it rewrites: the instance types' on-demand prices and the
servicePrices rows (non-GPU items) this script knows how to find (AWS_SERVICE_ITEMS, GCP_SERVICE_ITEMS); a row the
vendor did not answer for stays as it is, with its own source and `verify` mark.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "tritonfleet" / "core" / "catalog.yaml"
SOURCES = {
    "aws": ("AWSPRICELIST", "AWS Price List API, pricing:GetProducts (service code AmazonEC2), on-demand terms"),
    "gcp": ("GCPBILLING", "Google Cloud Billing Catalog API, services.skus.list (Compute Engine 6F81-5844-456A)"),
}
# (productFamily, usagetype suffix or volumeApiName) -> the catalog's servicePrices item
AWS_SERVICE_ITEMS = {
    ("NAT Gateway", "NatGateway-Hours"): "nat-gateway",
    ("NAT Gateway", "NatGateway-Bytes"): "nat-processing",
    ("Storage", "gp3"): "volume:gp3",
}
# SKU description (exact, the region's SKU) -> servicePrices item
GCP_SERVICE_ITEMS = {
    "Balanced PD Capacity": "volume:pd-balanced",
    "Cloud NAT Gateway uptime charge": "nat-gateway",
    "Cloud NAT Data processing": "nat-processing",
}
# Non-GPU machine types priced from their series' core and RAM SKUs: (vCPUs, GiB, core SKU, RAM SKU descriptions)
GCP_MACHINES = {
    "e2-standard-4": (4, 16, "E2 Instance Core running in Americas", "E2 Instance Ram running in Americas"),
}
GCP_COMPUTE_SERVICE = "6F81-5844-456A"


@dataclass(frozen=True)
class Quote:
    """One vendor price: `item` is an instance/machine type name or a servicePrices item."""

    cloud: str
    item: str
    region: str
    usd: float
    unit: str
    sku: str
    effective: str  # the vendor's effective date (YYYY-MM-DD)


def _on_demand(product: dict[str, Any]) -> tuple[float, str, str] | None:
    """The single on-demand rate of a GetProducts item: (usd, unit, effective date), or None."""
    for term in (product.get("terms", {}).get("OnDemand") or {}).values():
        for dimension in term.get("priceDimensions", {}).values():
            usd = float(dimension.get("pricePerUnit", {}).get("USD", "0") or 0)
            if usd > 0:
                return usd, str(dimension.get("unit", "")), str(term.get("effectiveDate", ""))[:10]
    return None


def aws_quotes(price_list: Iterable[str | dict[str, Any]]) -> list[Quote]:
    """Quotes from the `PriceList` of pricing:GetProducts (items are JSON strings): Linux, shared-tenancy, no
    pre-installed software on-demand instance hours, and the service items of AWS_SERVICE_ITEMS."""
    quotes = []
    for raw in price_list:
        item = json.loads(raw) if isinstance(raw, str) else raw
        product = item.get("product", {})
        attrs = product.get("attributes", {})
        rate = _on_demand(item)
        if rate is None:
            continue
        usd, unit, effective = rate
        region = str(attrs.get("regionCode", ""))
        family = str(product.get("productFamily", ""))
        if family == "Compute Instance":
            wanted = (attrs.get("operatingSystem"), attrs.get("tenancy"), attrs.get("preInstalledSw"), attrs.get("capacitystatus"))
            if wanted != ("Linux", "Shared", "NA", "Used"):
                continue
            name = str(attrs.get("instanceType", ""))
        else:
            # usagetype carries a region prefix outside us-east-1 ("USE2-NatGateway-Hours")
            nat = re.search(r"NatGateway-\w+", str(attrs.get("usagetype", "")))
            key = attrs.get("volumeApiName") if family == "Storage" else nat.group(0) if nat else ""
            name = AWS_SERVICE_ITEMS.get((family, str(key)), "")
            if not name:
                continue
        quotes.append(Quote("aws", name, region, usd, unit, str(product.get("sku", "")), effective))
    return quotes


def _unit_price(sku: dict[str, Any]) -> tuple[float, str, str] | None:
    """The SKU's price past any free tier (its last tier), its usage unit and effective date."""
    infos = sku.get("pricingInfo") or []
    if not infos:
        return None
    expression = infos[-1].get("pricingExpression", {})
    tiers = expression.get("tieredRates") or []
    if not tiers:
        return None
    price = tiers[-1].get("unitPrice", {})
    usd = int(price.get("units", "0") or 0) + int(price.get("nanos", 0) or 0) / 1e9
    return usd, str(expression.get("usageUnit", "")), str(infos[-1].get("effectiveTime", ""))[:10]


def gcp_quotes(pages: Iterable[dict[str, Any]], region: str) -> list[Quote]:
    """Quotes from services.skus.list pages for `region`: on-demand SKUs of GCP_SERVICE_ITEMS, and the machine
    types of GCP_MACHINES composed from their core and RAM SKUs."""
    found: dict[str, tuple[float, str, str, str]] = {}
    for page in pages:
        for sku in page.get("skus", []):
            if region not in (sku.get("serviceRegions") or []) or sku.get("category", {}).get("usageType") != "OnDemand":
                continue
            price = _unit_price(sku)
            if price is not None:
                # Regions outside the US name themselves: "Balanced PD Capacity in Frankfurt"
                description = re.sub(r" in [A-Z][\w ]+$", "", str(sku.get("description", "")))
                description = str(sku.get("description", "")) if description.endswith(" running") else description
                found[description] = (*price, str(sku.get("skuId", "")))
    quotes = [
        Quote("gcp", item, region, round(found[desc][0], 6), found[desc][1], found[desc][3], found[desc][2])
        for desc, item in GCP_SERVICE_ITEMS.items()
        if desc in found
    ]
    for machine, (vcpus, gib, core, ram) in GCP_MACHINES.items():
        if core in found and ram in found:
            usd = round(vcpus * found[core][0] + gib * found[ram][0], 6)
            quotes.append(Quote("gcp", machine, region, usd, "h", f"{found[core][3]}+{found[ram][3]}", found[core][2]))
    return quotes


def _with_source(text: str, name: str, title: str, as_of: str) -> str:
    """The catalog text with source `name` read on `as_of` (added before `gpus:`, or its date updated)."""
    block = re.search(rf"(?m)^  {name}:\n(?:    .*\n)+", text)
    entry = f"  {name}:\n    title: {json.dumps(title)}\n    asOf: \"{as_of}\"\n"
    if block:
        return text[: block.start()] + entry + text[block.end() :]
    return text.replace("\n\ngpus:", f"\n{entry}\ngpus:", 1)


def _price_mapping(usd: float, source: str, region: str, sku: str) -> str:
    return f"{{usd: {usd:g}, source: {source}, regions: [{region}], sku: \"{sku}\"}}"


def apply_quotes(text: str, quotes: Iterable[Quote], as_of: date) -> tuple[str, list[str]]:
    """Rewrite the catalog rows the quotes price (their region's figure only; rows listing several regions get the
    quote's region split out of them is left to a person: such rows are reported, not rewritten). Returns the new
    text and a line per change."""
    changes = []
    used: set[str] = set()
    for quote in quotes:
        source, _ = SOURCES[quote.cloud]
        service = re.compile(
            rf"(?m)^  - \{{cloud: {quote.cloud}, item: \"?{re.escape(quote.item)}\"?, unit: ([^,]+), usd: ([0-9.]+), "
            rf"source: \w+, regions: \[{re.escape(quote.region)}\](.*)\}}$"
        )
        match = service.search(text)
        if match:
            rest = re.sub(r", (verify: true|sku: \"[^\"]*\")", "", match.group(3))
            row = (
                f"  - {{cloud: {quote.cloud}, item: \"{quote.item}\", unit: {match.group(1)}, usd: {quote.usd:g}, "
                f"source: {source}, regions: [{quote.region}], sku: \"{quote.sku}\"{rest}}}"
            )
            changes.append(f"{quote.cloud} {quote.item} {quote.region}: {match.group(2)} -> {quote.usd:g} ({quote.sku})")
            text = text[: match.start()] + row + text[match.end() :]
            used.add(quote.cloud)
            continue
        instance = re.compile(
            rf"(?s)(name: {re.escape(quote.item)},.*?on-demand: )\{{usd: ([0-9.]+), source: \w+, "
            rf"regions: \[{re.escape(quote.region)}\][^}}]*\}}"
        )
        match = instance.search(text)
        if match and "\n  - {" not in match.group(1):
            changes.append(f"{quote.cloud} {quote.item} on-demand {quote.region}: {match.group(2)} -> {quote.usd:g}")
            text = text[: match.start()] + match.group(1) + _price_mapping(quote.usd, source, quote.region, quote.sku) + text[match.end() :]
            used.add(quote.cloud)
    for cloud in sorted(used):
        text = _with_source(text, *SOURCES[cloud], as_of.isoformat())
    return text, changes


def fetch_aws(region: str, record: Path | None) -> list[Quote]:  # pragma: no cover - needs AWS credentials
    import boto3

    from tritonfleet.core.catalog import load_catalog

    client = boto3.client("pricing", region_name="us-east-1")
    names = sorted({i.name for i in load_catalog().instance_types if i.cloud == "aws"} | {"m6i.xlarge"})
    filters = [[{"Type": "TERM_MATCH", "Field": "instanceType", "Value": name}] for name in names]
    filters += [[{"Type": "TERM_MATCH", "Field": "productFamily", "Value": family}] for family in ("NAT Gateway", "Storage")]
    price_list: list[str] = []
    for extra in filters:
        query = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}, *extra]
        for page in client.get_paginator("get_products").paginate(ServiceCode="AmazonEC2", Filters=query):
            price_list += page["PriceList"]
    if record:
        (record / "aws-get-products-ec2.json").write_text(json.dumps({"PriceList": price_list}, indent=1))
    return aws_quotes(price_list)


def fetch_gcp(region: str, record: Path | None) -> list[Quote]:  # pragma: no cover - needs an API key
    key = os.environ["GOOGLE_API_KEY"]
    pages, token = [], ""
    for _ in range(200):  # bounded: Compute Engine lists a few tens of thousands of SKUs, 5,000 a page
        query = urllib.parse.urlencode({"key": key, "pageSize": 5000, **({"pageToken": token} if token else {})})
        url = f"https://cloudbilling.googleapis.com/v1/services/{GCP_COMPUTE_SERVICE}/skus?{query}"
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - a fixed https URL
            page = json.load(response)
        pages.append(page)
        token = page.get("nextPageToken", "")
        if not token:
            break
    if record:
        (record / "gcp-skus-compute.json").write_text(json.dumps(pages[0], indent=1))
    return gcp_quotes(pages, region)


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - the network
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cloud", choices=("aws", "gcp"), required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--write", action="store_true", help="rewrite tritonfleet/core/catalog.yaml")
    parser.add_argument("--record", type=Path, help="also save the raw responses here (to refresh tests/data/prices)")
    args = parser.parse_args(argv)
    quotes = fetch_aws(args.region, args.record) if args.cloud == "aws" else fetch_gcp(args.region, args.record)
    text, changes = apply_quotes(CATALOG.read_text(), quotes, date.today())
    for line in changes or ["no catalog row matched a vendor price"]:
        print(line)
    if args.write and changes:
        from tritonfleet.core.catalog import parse_catalog

        parse_catalog(text)  # never write a catalog that does not load
        CATALOG.write_text(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
