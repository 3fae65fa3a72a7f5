"""Warn before a stack reaches its budget, and say so when its cost cannot be verified (an unknown price)."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._platform import platform_lines
from policies._pools import gpu_pools, stack_spend
from policies._settings import schema, settings
from policies.rules.cost_stack_enforce_monthly_budget import BUDGET_PROPERTIES

SCHEMA = schema(
    **BUDGET_PROPERTIES,
    warnFraction={
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": 1,
        "default": 0.8,
        "description": "warn above this fraction of the budget",
    },
)


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = settings(args, SCHEMA)
    budget, basis, fraction = float(config["monthlyUsd"]), str(config["basis"]), float(config["warnFraction"])
    spend = stack_spend(gpu_pools(args.resources), basis, dict(config["assumedPriceFloors"]), platform_lines(args.resources))
    if not spend.complete:
        report_violation(
            f"Cannot verify the monthly budget of ${budget:,.2f} on the {basis} basis: "
            f"{'; '.join(spend.unpriced)}. The lines that could be priced cost ${spend.known_usd:,.2f}/month. "
            "Add the missing prices to tritonfleet/core/catalog.yaml (with source and date) or give the pools known bounds.",
            None,
        )
    if spend.assumed:
        report_violation(
            f"Part of the budget check on the {basis} basis rests on acknowledged assumed prices, not published ones: "
            f"{'; '.join(spend.assumed)}. Replace them with dated, sourced prices in tritonfleet/core/catalog.yaml "
            "when the cloud publishes them.",
            None,
        )
    threshold = budget * fraction
    if threshold < spend.known_usd <= budget:
        report_violation(
            f"The stack costs ${spend.known_usd:,.2f}/month on the {basis} basis ({spend.parts}), "
            f"{spend.known_usd / budget:.0%} of the ${budget:,.2f} budget (warning above {fraction:.0%}). "
            "Plan the next change with that headroom in mind.",
            None,
        )


POLICY = StackValidationPolicy(
    name="cost-stack-warn-monthly-budget",
    description="The stack's monthly cost (GPU pools and the rest) should stay below the warning fraction of its budget and be verifiable.",
    validate=validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
    config_schema=SCHEMA,
    remediation_steps=(
        "Keep headroom below the budget; for 'cannot verify', add the missing dated price to the catalog or give the "
        "pool explicit total node bounds."
    ),
)
