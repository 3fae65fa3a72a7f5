"""Every container image named in Helm values or workload specs is pinned: a well-formed digest, or a tag that is no
moving name (latest, main, nightly...), never empty. Where the policy config asks for digests (prod), an image
without one must match a reviewed tag pattern of that config (release tags a registry does not move)."""

import re

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import HELM_CHART_V4, HELM_RELEASE, K8S_WORKLOADS, get, is_mapping, walk
from policies._settings import schema, settings

# Tags that name a branch or a channel, not a build: what they point at changes without the plan changing.
FLOATING = {"latest", "main", "master", "nightly", "edge", "dev", "develop", "head", "canary", "stable", "release", "rolling"}
# OCI image-spec digests: sha256 is 64 lower-case hex digits, sha512 128 (https://github.com/opencontainers/image-spec/blob/main/descriptor.md#digests).
DIGEST = re.compile(r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$")
SCHEMA = schema(
    requireDigest={
        "type": "boolean",
        "default": False,
        "description": "true: every image needs a digest (@sha256:...) unless it matches allowedTagPatterns (prod)",
    },
    allowedTagPatterns={
        "type": "array",
        "items": {"type": "string", "format": "regex"},
        "default": [],
        "description": "with requireDigest: regular expressions over the whole repository:tag that may go without a "
        "digest (reviewed release tags, e.g. ^nvcr\\.io/nvidia/tritonserver:\\d{2}\\.\\d{2}-py3$)",
    },
)


def _split(reference: str) -> tuple[str, str | None, str | None]:
    """(name, tag, digest) of repo/name[:tag][@digest]; tag/digest None when absent ('' when written empty)."""
    name, _, digest = reference.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else None
    name = name[: len(name) - len(tag) - 1] if tag is not None else name
    return name, tag, (digest if "@" in reference else None)


def _admits(pattern: str, reference: str) -> bool:
    try:
        return re.fullmatch(pattern, reference) is not None
    except re.error:
        return False  # a pattern that does not compile admits nothing


def reference_problem(name: str, tag: str | None, digest: str | None, strict: bool, patterns: list[str]) -> str | None:
    """Why an image is not pinned (None when it is). `strict`: a digest is required unless `patterns` admit the tag."""
    if digest is not None:
        return None if DIGEST.match(digest) else f"has a malformed digest '{digest}' (sha256: and 64 hex digits)"
    if tag is None:
        return "has no tag (means latest)"
    if not tag:
        return "has an empty tag"
    if tag.lower() in FLOATING:
        return f"uses the moving tag {tag}"
    if strict and not any(_admits(p, f"{name}:{tag}") for p in patterns):
        return "has no digest, and its tag matches none of allowedTagPatterns"
    return None


def _object_image(value) -> tuple[str, str | None, str | None] | None:
    """(name, tag, digest) of an image object {repository and/or image, tag|version, digest}, or None."""
    if not ("repository" in value or "image" in value):
        return None
    parts = [str(value[k]) for k in ("repository", "image") if isinstance(value.get(k), str) and value.get(k)]
    tag = value.get("tag", value.get("version"))
    digest = value.get("digest")
    if not parts or (tag is None and digest is None):
        return None  # a bare reference in `image` is read as one below
    return "/".join(parts), None if tag is None else str(tag), None if digest in (None, "") else str(digest)


def problems(values, strict: bool = False, patterns: list[str] | None = None) -> list[str]:
    """`path: why` for every unpinned image: `image: ref` strings, and {repository, tag|version|digest} objects."""
    found, patterns = [], patterns or []
    for path, key, value in walk(values):
        if is_mapping(value):
            image = _object_image(value)
            if image:
                why = reference_problem(*image, strict, patterns)
                if why:
                    found.append(f"{path}: {image[0]}:{image[1] or ''} {why}")
        elif key == "image" and isinstance(value, str) and value:
            parent_path = path.rsplit(".", 1)[0] if "." in path else ""
            parent = get(values, parent_path) if parent_path and "[" not in parent_path else None
            if is_mapping(parent) and any(k in parent for k in ("tag", "version", "digest")):
                continue  # image is a bare name here; its tag sits beside it and is checked above
            why = reference_problem(*_split(value), strict, patterns)
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
    config = settings(args, SCHEMA)
    strict, patterns = bool(config["requireDigest"]), [str(p) for p in config["allowedTagPatterns"]]
    found = problems(watched, strict, patterns)
    if found:
        required = "a digest or a tag allowedTagPatterns admits" if strict else "a fixed tag or a well-formed digest"
        report_violation(
            f"'{args.name}' runs unpinned images ({'; '.join(found)}); required: {required}. "
            "Pin the image in tritonfleet/core/pins.py (or the stack's imageTag).",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="k8s-image-require-pinned-tag",
    description="Container images must be pinned to a fixed tag or digest (a digest or a reviewed tag in prod).",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=SCHEMA,
    remediation_steps=(
        "Set an explicit release tag or an @sha256 digest (64 hex digits) for every image, never latest/main/nightly "
        "or an empty tag; keep tags in tritonfleet/core/pins.py. In prod add a digest, or a reviewed pattern to "
        "allowedTagPatterns in policies/config/<stack>.json."
    ),
)
