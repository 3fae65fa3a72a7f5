"""Block a stack whose GPU pools cost more per month than its budget (floor or ceiling basis), and, where the
environment demands it (prod), a stack whose cost cannot be known: a pool without a published price must state an
acknowledged assumed price (gpuPools[].assumedPrice), which the budget then counts, never below the floor of its GPU
class where the policy config sets floors (assumedPriceFloors, prod): an assumption below it is a violation."""

import math

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._fixes import config_fix
from policies._platform import platform_lines
from policies._pools import GpuPool, gpu_pools, stack_spend
from policies._settings import schema, settings

BUDGET_PROPERTIES = {
    "monthlyUsd": {"type": "number", "minimum": 0, "default": 0, "description": "the monthly budget in USD (GPU pools and every other line of the plan's bill)"},
    "basis": {
        "type": "string",
        "enum": ["floor", "ceiling"],
        "default": "ceiling",
        "description": "floor: every pool at its minimum size; ceiling: every pool at its maximum size",
    },
    "assumedPriceFloors": {
        "type": "object",
        "additionalProperties": {"type": "number", "exclusiveMinimum": 0},
        "default": {},
        "description": "USD per GPU-hour by catalog GPU (B200, H200...): an acknowledged assumed price counts at least "
        "this times the pool's GPUs per node, and one below it, or one no floor applies to, is a violation (prod)",
    },
}
UNKNOWN_PRICES = {
    "type": "string",
    "enum": ["fail", "report"],
    "default": "report",
    "description": "fail: a pool without a published price and without gpuPools[].assumedPrice is a violation "
    "(prod); report: cost-stack-warn-monthly-budget says the budget cannot be verified",
}
SCHEMA = schema(**BUDGET_PROPERTIES, unknownPrices=UNKNOWN_PRICES)


def assumed_price_problems(pools: list[GpuPool], basis: str, floors: dict[str, float]) -> list[str]:
    """An assumed price that the budget relies on must not undercut what its GPUs cost at least (the floor), and a
    floor must apply to it: a self-declared $0.01 for eight B200 would otherwise turn an overrun into a pass."""
    found = []
    for pool in pools:
        if not pool.priced_by_assumption(basis):
            continue
        stated, floor = pool.assumed_usd_per_hour, pool.assumed_floor_usd_per_hour(floors)
        if floor is None:
            what = f"GPU {pool.gpu_class}" if pool.gpu_class else "an unknown GPU class or count"
            found.append(
                f"GPU pool '{pool.name}' assumes ${stated:,.2f}/node-hour for {what}, and assumedPriceFloors has no "
                f"floor for it (floors: {', '.join(sorted(floors))}). Use a catalogued type, or add a floor in this "
                "stack's policy config after review."
            )
        elif stated < floor:
            found.append(
                f"GPU pool '{pool.name}' assumes ${stated:,.2f}/node-hour, below the floor of ${floor:,.2f} "
                f"({pool.gpus_per_node} {pool.gpu_class} at ${floors[pool.gpu_class]:,.2f}/GPU-hour, "
                "assumedPriceFloors); the budget counts the floor. State a dated quote at or above it. "
                + config_fix(
                    pool.urn,
                    {"gpuPools[<i>].assumedPrice.usdPerHour": math.ceil(floor * 100) / 100,
                     "gpuPools[<i>].assumedPrice.note": "<quote, date, who>"},
                    f" (<i>: pool '{pool.pool}'; the quote's price if higher)",
                )  # fmt: skip
            )
    return found


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = settings(args, SCHEMA)
    budget, basis, floors = float(config["monthlyUsd"]), str(config["basis"]), dict(config["assumedPriceFloors"])
    pools = gpu_pools(args.resources)
    if floors:
        for problem in assumed_price_problems(pools, basis, floors):
            report_violation(problem, None)
    spend = stack_spend(pools, basis, floors, platform_lines(args.resources))
    if config["unknownPrices"] == "fail" and not spend.complete:
        report_violation(
            f"The stack's monthly cost on the {basis} basis is unknown: {'; '.join(spend.unpriced)}. This "
            "environment does not accept an unknown price. Add the dated, sourced price to tritonfleet/core/catalog.yaml, "
            "or acknowledge an assumed price in the stack. "
            + config_fix(
                args.resources[0].urn,
                {"gpuPools[<i>].assumedPrice.usdPerHour": "<usd>", "gpuPools[<i>].assumedPrice.note": "<quote, date, who>"},
                " (<i>: each unpriced pool)",
            ),
            None,
        )
    # With prices missing, only a known part that is already over budget proves an overrun; the rest is reported
    # by cost-stack-warn-monthly-budget as "cannot verify", never priced as 0.
    if spend.known_usd > budget:
        part = "" if spend.complete else " for the lines that could be priced alone"
        report_violation(
            f"The stack costs ${spend.known_usd:,.2f}/month on the {basis} basis{part} ({spend.parts}), over the "
            f"budget of ${budget:,.2f}/month. Lower gpuPools[].maxNodes (or minNodes for the floor), move nodes to spot, "
            "check the `usage` assumptions the plan shows, or raise monthlyUsd in this stack's policy config after "
            "review.",
            None,
        )


POLICY = StackValidationPolicy(
    name="cost-stack-enforce-monthly-budget",
    description="The stack's monthly cost (GPU pools and the rest of the bill), from the shared cost model, must not exceed its budget.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    config_schema=SCHEMA,
    remediation_steps=(
        "Run `tritonfleet plan --stack <stack>` to see each pool's monthly floor and ceiling; lower maxNodes/minNodes or "
        "shift capacity to spot, or raise monthlyUsd in policies/config/<stack>.json through review. For an unknown "
        "price: add it to the catalog with its source and date, or set gpuPools[].assumedPrice {usdPerHour, note}."
    ),
)
