"""Every chart from a repository or registry is pinned to an exact version, so a preview shows what will deploy."""

import re

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import HELM_CHART_V4, HELM_RELEASE, get

EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$")


def is_local(chart: str) -> bool:
    """A chart in this repository (a path or a packaged .tgz) is pinned by the commit that holds it."""
    return chart.startswith(("/", "./", "../")) or chart.endswith(".tgz")


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in (HELM_RELEASE, HELM_CHART_V4):
        return
    chart = str(get(args.props, "chart", ""))
    if not chart or is_local(chart) or "@sha256:" in chart:
        return
    version = str(get(args.props, "version", ""))
    if not EXACT_VERSION.match(version):
        report_violation(
            f"Helm chart '{chart}' of '{args.name}' has version '{version or 'unset'}'; required: an exact version such "
            "as 1.2.3 (no range, no latest), so every deploy installs the reviewed chart. "
            "Pin it in tritonfleet/core/pins.py and pass version=.",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="helm-release-require-pinned-chart",
    description="Helm releases and charts from a repository must pin an exact chart version.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps="Add the chart's exact version to tritonfleet/core/pins.py and pass it as the release's version.",
)
