"""Every GPU pool carries the cloud's one GPU taint, so only pods that tolerate it land on GPU nodes."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._pools import gpu_pool
from tritonfleet.core.conventions import gpu_taint


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    pool = gpu_pool(args.resource_type, args.props, args.urn, args.name)
    if pool is None:
        return
    want = gpu_taint(pool.cloud)
    expected = (want["key"], want["value"], want["effect"])
    if expected not in pool.taints:
        found = ", ".join(f"{k}={v}:{e}" for k, v, e in pool.taints) or "none"
        report_violation(
            f"GPU pool '{args.name}' lacks the GPU taint {want['key']}={want['value']}:{want['effect']} (taints: {found}); "
            "without it any pod can land on GPU nodes and hold them. Add that taint to the NodePool template / node pool.",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="gpu-pool-require-gpu-taint",
    description="GPU pools must carry the platform's nvidia.com/gpu NoSchedule taint.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        "Give the Karpenter NodePool (spec.template.spec.taints) / GKE node pool the taint from tritonfleet.core.conventions.gpu_taint(cloud): "
        "nvidia.com/gpu=true:NoSchedule on AWS, nvidia.com/gpu=present:NoSchedule on GCP (API effect NO_SCHEDULE)."
    ),
)
