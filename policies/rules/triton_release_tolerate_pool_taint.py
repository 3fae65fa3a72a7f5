"""Each Triton release selects GPU nodes and tolerates exactly their taints: no less, no wildcard.

What it selects is every GPU pool whose nodes carry all labels of its nodeSelector (the pool label on EKS; the compute
class on GKE, whose node pools may belong to a pool and its fallback)."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import get, is_triton_release, items
from policies._pools import gpu_pools, release_node_selector, selected_pool_names, selected_pools


def _toleration(t) -> tuple[str, str, str, str]:
    return (str(get(t, "key", "")), str(get(t, "operator", "Equal")), str(get(t, "value", "")), str(get(t, "effect", "")))


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    pools = gpu_pools(args.resources)
    for release in args.resources:
        if not is_triton_release(release.resource_type, release.props):
            continue
        selector = release_node_selector(release.props)
        if not selector:
            report_violation(
                f"Triton release '{release.name}' has no nodeSelector, so it is not pinned to a GPU pool. Set "
                "values.nodeSelector to the labels of the pool it serves (the cloud adapter's PoolFacts.node_selector).",
                release.urn,
            )
            continue
        selected = [p for p in selected_pools(selector, pools) if p.taints]
        if not selected:
            report_violation(
                f"Triton release '{release.name}' selects {selector}, but no tainted GPU pool of the stack carries "
                "those labels. Point nodeSelector at a pool of this stack.",
                release.urn,
            )
            continue
        name = selected_pool_names(selected)
        taints = sorted({t for p in selected for t in p.taints})
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
                    f"Triton release '{release.name}' does not tolerate pool {name}'s taint {key}={value}:{effect} "
                    f"(tolerations: {len(tolerations)}), so its pods cannot schedule there. Add "
                    f"{{key: {key}, operator: Equal, value: {value}, effect: {effect}}} to values.tolerations.",
                    release.urn,
                )


POLICY = StackValidationPolicy(
    name="triton-release-tolerate-pool-taint",
    description="Triton releases must select GPU pools and tolerate exactly the taints of every node they select.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        "Build the release's tolerations from the pool's taints (components.k8s.values.taint_toleration) and its "
        "nodeSelector from PoolFacts.node_selector; never tolerate all taints."
    ),
)
