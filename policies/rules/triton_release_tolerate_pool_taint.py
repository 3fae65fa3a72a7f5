"""Each Triton release selects one GPU pool and tolerates exactly that pool's taint: no less, no wildcard."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import get, is_triton_release, items, served_pool
from policies._pools import gpu_pools
from tritonfleet.core.conventions import POOL_LABEL


def _toleration(t) -> tuple[str, str, str, str]:
    return (str(get(t, "key", "")), str(get(t, "operator", "Equal")), str(get(t, "value", "")), str(get(t, "effect", "")))


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    pools = gpu_pools(args.resources)
    for release in args.resources:
        if not is_triton_release(release.resource_type, release.props):
            continue
        name = served_pool(release.props)
        if name is None:
            report_violation(
                f"Triton release '{release.name}' has no nodeSelector {POOL_LABEL}, so it is not pinned to a GPU pool. "
                f"Set values.nodeSelector['{POOL_LABEL}'] to the pool it serves.",
                release.urn,
            )
            continue
        taints = sorted({t for p in pools if p.pool == name for t in p.taints})
        if not taints:
            report_violation(
                f"Triton release '{release.name}' selects pool '{name}', but the stack has no tainted GPU pool of that "
                "name. Point nodeSelector at a pool of this stack.",
                release.urn,
            )
            continue
        tolerations = [_toleration(t) for t in items(get(release.props, "values.tolerations"))]
        for key, operator, _value, _effect in tolerations:
            if operator == "Exists" and not key:
                report_violation(
                    f"Triton release '{release.name}' tolerates every taint (operator Exists with no key); it must "
                    f"tolerate exactly its pool's taint {', '.join(f'{k}={v}:{e}' for k, v, e in taints)}. Remove it.",
                    release.urn,
                )
        for key, value, effect in taints:
            if (key, "Equal", value, effect) not in tolerations:
                report_violation(
                    f"Triton release '{release.name}' does not tolerate pool '{name}''s taint {key}={value}:{effect} "
                    f"(tolerations: {len(tolerations)}), so its pods cannot schedule there. Add "
                    f"{{key: {key}, operator: Equal, value: {value}, effect: {effect}}} to values.tolerations.",
                    release.urn,
                )


POLICY = StackValidationPolicy(
    name="triton-release-tolerate-pool-taint",
    description="Triton releases must select a GPU pool and tolerate exactly that pool's taint.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        "Build the release's tolerations from the pool's taint (components.k8s.values.taint_toleration) and its "
        "nodeSelector from the pool label; never tolerate all taints."
    ),
)
