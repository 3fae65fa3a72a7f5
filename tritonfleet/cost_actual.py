"""The plan against the invoice: a month of a FOCUS billing export matched to a stack's lines, actual against
expected, with the drift and its likely causes.

FOCUS is the FinOps Foundation's open billing format (specifications 1.0, https://focus.finops.org/focus-specification/v1-0/,
and 1.2, https://focus.finops.org/focus-specification/v1-2/, read 2026-12-05); AWS Data Exports and Google Cloud's billing export both produce it. A row belongs to the stack when
it is in the stack's account or project (SubAccountId) and carries the stack's cost tags (`tags`, which the program
sets on every resource); a GPU node's row names its pool (tag `tritonfleet.io/pool`, which the EC2NodeClass sets; GKE
labels its nodes' VMs `goog-k8s-node-pool-name`). Other rows go to the plan's non-GPU lines by service (the control
plane, NAT, load balancers, volumes, storage, logs, traffic, system nodes). Rows of the account without the stack's
tags are reported as untagged, never dropped silently. The actual figure is EffectiveCost (after discounts and
commitments), beside the plan's floor, expected and ceiling figures, which are list prices.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tritonfleet.core.conventions import POOL_LABEL

FOCUS_SPECS = {
    "1.0": "https://focus.finops.org/focus-specification/v1-0/",
    "1.2": "https://focus.finops.org/focus-specification/v1-2/",
}
# Columns that tell a later release from 1.0 (read 2026-12-05): 1.1 added ServiceSubcategory and SkuMeter (among
# others), 1.2 the account types and InvoiceId. The report names the release; it reads every one alike.
LATER_COLUMNS = (("1.2", ("BillingAccountType", "SubAccountType", "InvoiceId")), ("1.1", ("ServiceSubcategory", "SkuMeter")))
# The FOCUS columns this command reads (all of them mandatory, and named alike, in 1.0, 1.1 and 1.2).
REQUIRED_COLUMNS = (
    "BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "ChargePeriodStart", "ChargePeriodEnd",
    "ChargeCategory", "ChargeDescription", "PricingCategory", "ProviderName", "RegionId", "ResourceId",
    "ServiceCategory", "ServiceName", "SubAccountId", "Tags",
)  # fmt: skip
# Column names that give away another format, and what to do instead.
OTHER_FORMATS = {
    "lineItem/UnblendedCost": "an AWS Cost and Usage Report (CUR), not FOCUS: create a FOCUS 1.2 export in AWS Data "
    "Exports (Billing and Cost Management > Data Exports > 'FOCUS 1.2 with AWS columns')",
    "cost": "a Google Cloud billing export in BigQuery's standard schema, not FOCUS: query the FOCUS view Google "
    "publishes for the billing export (cloud.google.com/billing/docs/how-to/export-data-bigquery) and save it as CSV",
}
GKE_NODE_POOL_LABEL = "goog-k8s-node-pool-name"
PURCHASE_SUFFIXES = ("-on-demand", "-spot", "-reservation", "-flex-start", "-capacity-block")


class ExportError(ValueError):
    """The export cannot be read as this stack's FOCUS export: the message says why and what to do."""


@dataclass
class Actual:
    line: str  # "pool <name>" or a non-GPU line key (control-plane, nat-gateways, ...), or "other"
    usd: float = 0.0
    list_usd: float = 0.0
    spot_usd: float = 0.0  # rows priced Dynamic (spot)
    rows: int = 0


@dataclass
class Comparison:
    line: str
    actual_usd: float
    floor_usd: float | str | None
    expected_usd: float | str | None
    ceiling_usd: float | str | None
    drift_usd: float | None  # actual - expected
    causes: list[str] = field(default_factory=list)


@dataclass
class Report:
    stack: str
    month: str
    currency: str
    lines: list[Comparison]
    untagged_usd: float
    untagged: list[tuple[str, str, float]]  # (ResourceId, ServiceName, EffectiveCost), dearest first
    rows: int
    focus_version: str = "1.2"

    @property
    def actual_usd(self) -> float:
        return round(sum(c.actual_usd for c in self.lines), 2)


def read_export(path: Path) -> list[dict[str, str]]:
    """The export's rows: CSV (optionally gzip-compressed), or Parquet where pyarrow is installed."""
    if not path.is_file():
        raise ExportError(f"{path}: no such file")
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ExportError(
                f"{path}: reading Parquet needs pyarrow, which is not installed; export the month as CSV instead"
            ) from None
        table = pq.read_table(path)
        return [{k: "" if v is None else str(v) for k, v in row.items()} for row in table.to_pylist()]
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", newline="", encoding="utf-8-sig") as handle:  # type: ignore[operator]
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            _check_columns(path, columns)
            return list(reader)
    except (UnicodeDecodeError, OSError, csv.Error) as error:
        raise ExportError(f"{path}: not a CSV file ({error})") from None


def _check_columns(path: Path, columns: list[str]) -> None:
    for marker, what in OTHER_FORMATS.items():
        if marker in columns and "BilledCost" not in columns:
            raise ExportError(f"{path} is {what}")
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ExportError(
            f"{path} is not a FOCUS 1.0 or 1.2 export: it lacks the columns {', '.join(missing)} "
            f"({', '.join(FOCUS_SPECS.values())})"
        )


def focus_version(columns: Any) -> str:
    """The FOCUS release an export's columns belong to (1.0 unless it has a later release's columns)."""
    return next((version for version, added in LATER_COLUMNS if all(c in columns for c in added)), "1.0")


def _tags(row: dict[str, str]) -> dict[str, str]:
    raw = row.get("Tags") or ""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _month_of(value: str) -> str:
    return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).strftime("%Y-%m") if value.strip() else ""


def _number(row: dict[str, str], column: str) -> float:
    try:
        return float(row.get(column) or 0)
    except ValueError:
        return 0.0


def classify(row: dict[str, str], tags: dict[str, str]) -> str:
    """The plan's line a stack row belongs to: its pool, or the non-GPU line of its service, else 'other'."""
    pool = tags.get(POOL_LABEL) or tags.get(GKE_NODE_POOL_LABEL)
    if pool:
        # a GKE node pool is <pool>-<purchase option>: strip one option ("h200-spot-spot" is pool h200-spot)
        suffix = next((s for s in PURCHASE_SUFFIXES if pool.endswith(s) and POOL_LABEL not in tags), "")
        return f"pool {pool.removesuffix(suffix) if suffix else pool}"
    service = row.get("ServiceName", "").lower()
    text = f"{row.get('ChargeDescription', '')} {row.get('ResourceType', '')} {row.get('SkuId', '')}".lower()
    category = row.get("ServiceCategory", "").lower()
    rules = (
        ("nat-processing", "nat" in text and ("gb" in text or "data processed" in text or "processing" in text)),
        ("nat-gateways", "nat gateway" in text or "cloud nat" in text),
        ("control-plane", "kubernetes" in service and ("cluster" in text or "management" in text)),
        ("load-balancers", "load balanc" in service or "load balanc" in text),
        ("volumes", any(w in text for w in ("gp3", "ebs", "pd capacity", "hyperdisk", "volume", "persistent disk"))),
        ("bucket-storage", "s3" in service or "simple storage" in service or "cloud storage" in service),
        ("log-ingestion", "cloudwatch" in service or "logging" in service),
        ("traffic", category == "networking" or "data transfer" in text or "egress" in text or "inter-zone" in text),
        ("system-nodes", category == "compute"),
    )
    return next((line for line, hit in rules if hit), "other")


# The plan's non-GPU lines a FOCUS row can be told apart by (several plan lines share one row kind).
PLAN_LINES = {
    "control-plane": ("control-plane",),
    "system-nodes": ("system-nodes",),
    "nat-gateways": ("nat-gateways",),
    "nat-processing": ("nat-processing",),
    "load-balancers": ("load-balancers-network", "load-balancers-application"),
    "volumes": ("volumes-boot", "volume-prometheus", "volume-grafana"),
    "bucket-storage": ("bucket-storage",),
    "log-ingestion": ("log-ingestion",),
    "traffic": ("traffic-cross-zone", "traffic-egress"),
}


def collect(
    rows: list[dict[str, str]], month: str, account: str | None, stack_tags: dict[str, str], path: Path
) -> tuple[dict[str, Actual], list[tuple[str, str, float]], str, int]:
    """Sum the month's rows of the stack's account by line; the account's rows without the stack's tags apart."""
    in_month = [r for r in rows if _month_of(r.get("ChargePeriodStart", "")) == month]
    if not in_month:
        months = sorted({m for r in rows if (m := _month_of(r.get("ChargePeriodStart", "")))})
        covered = f"it covers {months[0]}..{months[-1]}" if months else "it has no dated rows"
        raise ExportError(f"{path} has no rows for {month}: {covered}")
    accounts = sorted({r.get("SubAccountId", "") for r in in_month})
    if account and account not in accounts:
        raise ExportError(
            f"{path} has no rows of the stack's account or project {account} in {month} (it holds {', '.join(accounts)}): "
            "an export of another account"
        )
    ours = [r for r in in_month if not account or r.get("SubAccountId") == account]
    currencies = sorted({r.get("BillingCurrency", "") for r in ours})
    if currencies != ["USD"]:
        raise ExportError(f"{path}: billing currency {', '.join(currencies)}; the plan is in USD (convert the export)")
    totals: dict[str, Actual] = {}
    untagged: list[tuple[str, str, float]] = []
    for row in ours:
        tags = _tags(row)
        cost = _number(row, "EffectiveCost")
        if stack_tags and any(tags.get(k) != v for k, v in stack_tags.items()):
            untagged.append((row.get("ResourceId") or "(no resource id)", row.get("ServiceName", ""), cost))
            continue
        line = classify(row, tags)
        actual = totals.setdefault(line, Actual(line))
        actual.usd += cost
        actual.list_usd += _number(row, "ListCost")
        actual.spot_usd += cost if row.get("PricingCategory") == "Dynamic" else 0.0
        actual.rows += 1
    untagged.sort(key=lambda u: -u[2])
    return totals, untagged, "USD", len(ours)


def _plan_figures(cost: dict[str, Any]) -> dict[str, tuple[Any, Any, Any, dict[str, Any] | None]]:
    """line -> (floor, expected, ceiling, pool document) from the plan's cost section."""
    figures: dict[str, tuple[Any, Any, Any, dict[str, Any] | None]] = {}
    for pool in cost["pools"]:
        figures[f"pool {pool['pool']}"] = (
            pool["monthlyFloorUsd"], pool["monthlyExpectedCeilingUsd"], pool["monthlyCeilingUsd"], pool,
        )
    by_key = {line["line"]: line for line in cost.get("otherLines", [])}
    for kind, keys in PLAN_LINES.items():
        lines = [by_key[k] for k in keys if k in by_key]
        if not lines:
            continue
        sums = []
        for pick in ("monthlyFloorUsd", "monthlyExpectedUsd", "monthlyCeilingUsd"):
            values = [line[pick] for line in lines]
            sums.append("unknown" if any(isinstance(v, str) for v in values) else round(sum(values), 2))
        figures[kind] = (*sums, None)
    return figures


def _causes(actual: Actual, floor: Any, expected: Any, ceiling: Any, pool: dict[str, Any] | None) -> list[str]:
    causes = []
    if isinstance(expected, str) or expected is None:
        return ["the plan has no price for this line (unpriced): add it to the catalog"]
    if pool is not None:
        planned_spot = any(option == "spot" and r["max"] > 0 for option, r in pool["nodes"].items())
        if planned_spot and actual.usd > 0 and actual.spot_usd / actual.usd < 0.05:
            causes.append("spot share not reached: its nodes ran on-demand (no spot capacity, or spot refused)")
        if isinstance(floor, (int, float)) and actual.usd > floor * 1.05:
            causes.append("nodes above the floor: the autoscaler kept more than minReplicas need")
        elif isinstance(floor, (int, float)) and actual.usd < floor * 0.95:
            causes.append("below the floor: fewer node-hours than minReplicas keep up (nodes started late, or spot)")
    if isinstance(ceiling, (int, float)) and actual.usd > ceiling * 1.05:
        causes.append("above the plan's ceiling: more capacity or usage than planned, or a price the catalog lacks")
    if actual.list_usd and actual.usd < actual.list_usd * 0.95:
        causes.append(f"discounts or commitments: list ${actual.list_usd:,.2f}, paid ${actual.usd:,.2f}")
    if pool is None and isinstance(expected, (int, float)) and expected and abs(actual.usd - expected) > 0.25 * expected:
        causes.append("usage differs from the plan's assumption (the usage section)")
    return causes


def compare(cost: dict[str, Any], actuals: dict[str, Actual]) -> list[Comparison]:
    """Every planned line and every line the export adds, actual against expected."""
    figures = _plan_figures(cost)
    out = []
    for line in dict.fromkeys([*figures, *actuals]):
        actual = actuals.get(line, Actual(line))
        floor, expected, ceiling, pool = figures.get(line, (None, None, None, None))
        drift = round(actual.usd - expected, 2) if isinstance(expected, (int, float)) else None
        causes = _causes(actual, floor, expected, ceiling, pool) if line in figures else ["not in the plan"]
        if line in figures and not actual.rows:
            causes = ["no rows in the export: not yet billed, or its resources lack the stack's tags"]
        out.append(Comparison(line, round(actual.usd, 2), floor, expected, ceiling, drift, causes))
    return out


MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def actual_report(config: Any, cost: dict[str, Any], export: Path, month: str) -> Report:
    """The stack's month from `export` against its plan's cost section."""
    if not MONTH.match(month):
        raise ExportError(f"--month {month!r}: use YYYY-MM, such as 2026-11")
    rows = read_export(export)
    account = getattr(config, "bucket_owner", "") or None
    actuals, untagged, currency, count = collect(rows, month, account, dict(config.tags), export)
    return Report(
        stack=config.stack,
        month=month,
        currency=currency,
        lines=compare(cost, actuals),
        untagged_usd=round(sum(u[2] for u in untagged), 2),
        untagged=untagged,
        rows=count,
        focus_version=focus_version(rows[0] if rows else ()),
    )


def _money(value: Any) -> str:
    return value if isinstance(value, str) else "-" if value is None else f"${value:,.2f}"


def report_lines(report: Report, width: int = 80) -> list[str]:
    """The report as plain lines wrapped to `width` (a line's own indent kept, its continuation indented more)."""
    from tritonfleet.plan.text import wrap

    return [
        wrapped.text
        for text in _report_text(report)
        for wrapped in wrap(text.lstrip(), width, _indent(text), _indent(text) + "    ")
    ] if width else _report_text(report)


def _indent(text: str) -> str:
    return " " * (len(text) - len(text.lstrip()))


def _report_text(report: Report) -> list[str]:
    lines = [
        f"tritonfleet cost actual: stack {report.stack}, {report.month} (FOCUS {report.focus_version}, {report.rows} rows "
        "of its account; actual = EffectiveCost, plan = list prices for 730 h)",
        "",
    ]
    for c in report.lines:
        drift = "" if c.drift_usd is None else f", drift {'+' if c.drift_usd >= 0 else '-'}${abs(c.drift_usd):,.2f}"
        lines.append(
            f"{c.line}: actual {_money(c.actual_usd)}; plan floor {_money(c.floor_usd)}, expected "
            f"{_money(c.expected_usd)}, ceiling {_money(c.ceiling_usd)}{drift}"
        )
        lines += [f"  - {cause}" for cause in c.causes]
    lines.append("")
    lines.append(f"Total actual {_money(report.actual_usd)} (the stack's tagged rows).")
    if report.untagged:
        lines.append(
            f"Untagged: {len(report.untagged)} row(s) of the account, {_money(report.untagged_usd)}, lack the stack's "
            "tags (tritonfleet:tags) and are not in the lines above:"
        )
        lines += [f"  - {rid} ({service}) {_money(usd)}" for rid, service, usd in report.untagged[:10]]
        if len(report.untagged) > 10:
            lines.append(f"  - and {len(report.untagged) - 10} more")
    return lines
