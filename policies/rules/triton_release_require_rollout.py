"""A prod Triton release takes new model versions and images through a canary rollout: Argo Rollouts shifts traffic
step by step and aborts on the canary's own metrics, instead of every replica changing at once.

Read from the release's chart values: `rollout.enabled` with steps and analysis metrics (tritonfleet sets them from
tritonDeployments[].rollout, components/k8s/rollout.py). Mandatory in prod's policy config, disabled elsewhere.
"""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import get, is_list, is_triton_release


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not is_triton_release(args.resource_type, args.props):
        return
    rollout = get(args.props, "values.rollout", {}) or {}
    enabled = get(rollout, "enabled") is True
    steps, metrics = get(rollout, "steps"), get(rollout, "analysis.metrics")
    if enabled and is_list(steps) and steps and is_list(metrics) and metrics:
        return
    why = "has no analysis metrics" if enabled and is_list(steps) and steps else "has no canary rollout"
    report_violation(
        f"Triton release '{args.name}' {why}: a new model version or image reaches every replica at once. Set "
        "tritonDeployments[].rollout (steps, interval, analysis) with monitoring enabled; tritonfleet renders an "
        "Argo Rollouts canary judged on Triton's metrics."
    )


POLICY = ResourceValidationPolicy(
    name="triton-release-require-rollout",
    description="A Triton release changes model versions and images through a judged canary rollout.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    remediation_steps=(
        "Declare tritonDeployments[].rollout, e.g. {steps: [10, 25, 50, 100], interval: 5m}, keep monitoring enabled "
        "and minReplicas at 2 or more (docs/serving.md \"Model rollouts\")."
    ),
)
