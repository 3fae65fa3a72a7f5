"""Every container image named in Helm values or workload specs has a fixed tag or digest, never `latest`."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import HELM_CHART_V4, HELM_RELEASE, K8S_WORKLOADS, get, is_mapping, walk

FLOATING = {"latest"}


def _reference_problem(image: str) -> str | None:
    """Why an image reference like repo/name:tag or repo/name@sha256:... is not pinned; None when it is."""
    if "@sha256:" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "has no tag (means latest)"
    if last.rsplit(":", 1)[1].lower() in FLOATING:
        return "uses the floating tag latest"
    return None


def problems(values) -> list[str]:
    """`path: why` for every unpinned image: `image: ref` strings, and {repository, tag|version} objects."""
    found = []
    for path, key, value in walk(values):
        if is_mapping(value):
            tag = value.get("tag", value.get("version")) if ("repository" in value or "image" in value) else None
            if isinstance(tag, str) and tag.lower() in FLOATING:
                found.append(f"{path}: tag {tag}")
        elif key == "image" and isinstance(value, str) and value:
            parent_path = path.rsplit(".", 1)[0] if "." in path else ""
            parent = get(values, parent_path) if parent_path and "[" not in parent_path else None
            if is_mapping(parent) and any(k in parent for k in ("tag", "version", "digest")):
                continue  # image is a bare name here; its tag sits beside it and is checked above
            why = _reference_problem(value)
            if why:
                found.append(f"{path}: {value} {why}")
    return found


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type in (HELM_RELEASE, HELM_CHART_V4):
        watched = get(args.props, "values")
    elif args.resource_type in K8S_WORKLOADS:
        watched = get(args.props, "spec")
    else:
        return
    if not is_mapping(watched):
        return
    found = problems(watched)
    if found:
        report_violation(
            f"'{args.name}' runs unpinned images ({'; '.join(found)}); required: a fixed tag or a digest. "
            "Pin the tag in tritonfleet/core/pins.py (or the stack's imageTag).",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="k8s-image-require-pinned-tag",
    description="Container images must be pinned to a fixed tag or digest, never latest.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps="Set an explicit version tag (or @sha256 digest) for every image; keep tags in tritonfleet/core/pins.py.",
)
