"""Writes the FOCUS fixture exports next to it (run it again after editing the rows; the tests read the CSVs).

Columns: the FOCUS 1.2 specification's columns (https://focus.finops.org/focus-specification/v1-2/, read 2026-12-05)
in its order, values as AWS Data Exports writes them for a FOCUS 1.2 export; figures are made up around the prod
stack's plan (November 2026, 720 hours) so that each line has a known drift and cause.
"""

from __future__ import annotations

import csv
import json
import zlib
from pathlib import Path

COLUMNS = [
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName", "BillingAccountType", "BillingCurrency",
    "BillingPeriodEnd", "BillingPeriodStart", "CapacityReservationId", "CapacityReservationStatus", "ChargeCategory",
    "ChargeClass", "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
    "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName", "CommitmentDiscountQuantity",
    "CommitmentDiscountStatus", "CommitmentDiscountType", "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit",
    "ContractedCost", "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost",
    "ListUnitPrice", "PricingCategory", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice", "PricingQuantity", "PricingUnit", "ProviderName",
    "PublisherName", "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType", "ServiceCategory",
    "ServiceName", "ServiceSubcategory", "SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId",
    "SubAccountName", "SubAccountType", "Tags",
]  # fmt: skip
# FOCUS 1.0 (https://focus.finops.org/focus-specification/v1-0/, read 2026-12-05) has 43 of them: 1.1 added the
# capacity reservation, commitment quantity and unit, service subcategory and SKU meter and price details columns;
# 1.2 the account types, the invoice id and the pricing currency columns.
ADDED_AFTER_1_0 = (
    "CapacityReservationId", "CapacityReservationStatus", "CommitmentDiscountQuantity", "CommitmentDiscountUnit",
    "ServiceSubcategory", "SkuMeter", "SkuPriceDetails",  # 1.1
    "BillingAccountType", "SubAccountType", "InvoiceId", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice",  # 1.2
)  # fmt: skip
COLUMNS_1_0 = [c for c in COLUMNS if c not in ADDED_AFTER_1_0]
TAGS = {"team": "ml-platform", "cost-center": "ml-prod"}
HERE = Path(__file__).parent


def row(cost, quantity, unit, unit_price, description, service, category, subcategory, resource, rtype,
        tags=None, pricing="Standard", account="123456789012", month="11", zone="us-east-1a", list_cost=None):  # noqa: ANN001
    end_month = f"{int(month) + 1:02d}" if month != "12" else "01"
    # Usage rows name their SKU and SKU price (both MUST NOT be null for Usage in FOCUS 1.0 and 1.2); a made-up,
    # stable code per charge, in the shape of AWS's (a price id is <SKU>.<offer term>.<rate code>).
    sku = f"SKU{zlib.crc32(description.encode()):010d}"
    return {
        "AvailabilityZone": zone, "BilledCost": f"{cost:.6f}", "BillingAccountId": "111122223333",
        "BillingAccountName": "payer", "BillingAccountType": "Billing Account", "BillingCurrency": "USD",
        "BillingPeriodEnd": f"2026-{end_month}-01T00:00:00Z", "BillingPeriodStart": f"2026-{month}-01T00:00:00Z",
        "CapacityReservationId": "", "CapacityReservationStatus": "", "ChargeCategory": "Usage", "ChargeClass": "",
        "ChargeDescription": description, "ChargeFrequency": "Usage-Based",
        "ChargePeriodEnd": f"2026-{month}-30T00:00:00Z", "ChargePeriodStart": f"2026-{month}-29T00:00:00Z",
        "CommitmentDiscountCategory": "", "CommitmentDiscountId": "", "CommitmentDiscountName": "",
        "CommitmentDiscountQuantity": "", "CommitmentDiscountStatus": "", "CommitmentDiscountType": "",
        "CommitmentDiscountUnit": "", "ConsumedQuantity": f"{quantity:g}", "ConsumedUnit": unit,
        "ContractedCost": f"{cost:.6f}", "ContractedUnitPrice": f"{unit_price:g}", "EffectiveCost": f"{cost:.6f}",
        "InvoiceId": "INV-2026-11", "InvoiceIssuerName": "Amazon Web Services, Inc.",
        "ListCost": f"{(list_cost if list_cost is not None else cost):.6f}", "ListUnitPrice": f"{unit_price:g}",
        "PricingCategory": pricing, "PricingCurrency": "USD", "PricingCurrencyContractedUnitPrice": f"{unit_price:g}",
        "PricingCurrencyEffectiveCost": f"{cost:.6f}", "PricingCurrencyListUnitPrice": f"{unit_price:g}",
        "PricingQuantity": f"{quantity:g}", "PricingUnit": unit, "ProviderName": "AWS", "PublisherName": "AWS",
        "RegionId": "us-east-1", "RegionName": "US East (N. Virginia)", "ResourceId": resource, "ResourceName": "",
        "ResourceType": rtype, "ServiceCategory": category, "ServiceName": service, "ServiceSubcategory": subcategory,
        "SkuId": sku, "SkuMeter": "", "SkuPriceDetails": "{}", "SkuPriceId": f"{sku}.JRTCKXETXF.6YS6EN2CT7", "SubAccountId": account,
        "SubAccountName": "ml-prod", "SubAccountType": "Account", "Tags": json.dumps(TAGS if tags is None else tags),
    }


EC2, COMPUTE, VM = "Amazon Elastic Compute Cloud", "Compute", "Virtual Machines"
PROD = [
    # h200: the base node on-demand all month, one burst node spot for 400 h (floor $92,412.16: 2 nodes planned)
    row(45573.12, 720, "Hours", 63.296, "On Demand Linux p5en.48xlarge Instance Hour", EC2, COMPUTE, VM,
        "i-0h200base", "Instance", {**TAGS, "tritonfleet.io/pool": "h200"}),
    row(10880.00, 400, "Hours", 27.2, "Spot Linux p5en.48xlarge Instance Hour", EC2, COMPUTE, VM,
        "i-0h200spot", "Instance", {**TAGS, "tritonfleet.io/pool": "h200"}, pricing="Dynamic", list_cost=25318.4),
    # l40s: 4 nodes all on-demand (spotShare 0.5 planned above the base of 2): spot never reached, above the floor
    row(5359.68, 2880, "Hours", 1.861, "On Demand Linux g6e.xlarge Instance Hour", EC2, COMPUTE, VM,
        "i-0l40s", "Instance", {**TAGS, "tritonfleet.io/pool": "l40s"}),
    row(72.00, 720, "Hours", 0.10, "Amazon EKS cluster usage", "Amazon Elastic Kubernetes Service",
        "Compute", "Containers", "arn:aws:eks:us-east-1:123456789012:cluster/tf-prod", "Cluster"),
    row(414.72, 2160, "Hours", 0.192, "On Demand Linux m6i.xlarge Instance Hour", EC2, COMPUTE, VM,
        "i-0system", "Instance"),
    row(97.20, 2160, "Hours", 0.045, "$0.045 per NAT Gateway Hour", EC2, "Networking", "Network Infrastructure",
        "nat-0prod", "NAT Gateway"),
    row(11.25, 250, "GB", 0.045, "$0.045 per GB Data Processed by NAT Gateways", EC2, "Networking",
        "Network Infrastructure", "nat-0prod", "NAT Gateway"),
    row(88.00, 1100, "GB-Mo", 0.08, "$0.08 per GB-month of General Purpose (gp3) provisioned storage", EC2,
        "Storage", "Block Storage", "vol-0prod", "Volume"),
    row(0.99, 43, "GB-Mo", 0.023, "$0.023 per GB - first 50 TB / month of storage used",
        "Amazon Simple Storage Service", "Storage", "Object Storage", "tf-prod-models", "Bucket"),
    row(40.00, 80, "GB", 0.50, "$0.50 per GB custom log data ingested", "AmazonCloudWatch",
        "Management and Governance", "Logging", "/aws/eks/tf-prod/cluster", "Log Group"),
    row(1000.00, 100000, "GB", 0.01, "$0.010 per GB - regional data transfer - in/out/between EC2 AZs", EC2,
        "Networking", "Network Connectivity", "i-0l40s", "Instance"),
    # the account's rows without the stack's tags: reported, never dropped
    row(300.00, 720, "Hours", 0.4167, "On Demand Linux m6i.2xlarge Instance Hour", EC2, COMPUTE, VM,
        "i-0untagged", "Instance", tags={}),
    row(12.50, 250, "GB-Mo", 0.05, "$0.05 per GB-Month of snapshot data stored", EC2, "Storage", "Backup",
        "snap-0orphan", "Snapshot", tags={"team": "data"}),
    # another month and another account: not November's, not the stack's
    row(999.00, 1, "Hours", 999, "October usage", EC2, COMPUTE, VM, "i-0oct", "Instance", month="10"),
]


def write(name: str, rows: list[dict[str, str]], columns: list[str] = COLUMNS) -> None:
    with (HERE / name).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    write("prod-2026-11.csv", PROD)
    write("prod-2026-11-focus-1.0.csv", PROD, COLUMNS_1_0)  # the same rows as a FOCUS 1.0 export
    other = [row(50.0, 1, "Hours", 50, "another account", EC2, COMPUTE, VM, "i-0x", "Instance", account="999999999999")]
    write("other-account-2026-11.csv", other)
    gke = {**TAGS, "cost-center": "ml-prod"}
    google = [
        {**row(4000.0, 720, "Hours", 5.5, "Spot Preemptible A3 Ultra Instance", "Compute Engine", COMPUTE, VM,
               "gke-h200-spot-spot-1", "Instance", {**gke, "goog-k8s-node-pool-name": "h200-spot-spot"},
               pricing="Dynamic", account="acme-ml-prod"), "ProviderName": "Google Cloud", "RegionId": "us-central1"},
        {**row(1200.0, 1440, "Hours", 0.8333, "G2 Instance running in Americas", "Compute Engine", COMPUTE, VM,
               "gke-l4-on-demand-1", "Instance", {**gke, "goog-k8s-node-pool-name": "l4-on-demand"},
               account="acme-ml-prod"), "ProviderName": "Google Cloud", "RegionId": "us-central1"},
        {**row(72.0, 720, "Hours", 0.1, "Regional Kubernetes Clusters", "Kubernetes Engine", "Compute", "Containers",
               "tf-gcp-prod", "Cluster", gke, account="acme-ml-prod"), "ProviderName": "Google Cloud",
         "RegionId": "us-central1"},
    ]
    write("gcp-prod-2026-11.csv", google)
    cur = ["identity/LineItemId", "lineItem/UsageStartDate", "lineItem/UnblendedCost", "resourceTags/user:team"]
    with (HERE / "cur-2026-11.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows([cur, ["x", "2026-11-01T00:00:00Z", "1.0", "ml-platform"]])
