"""Cost-bearing GCP resources carry the cost-allocation labels (their own labels or the provider's defaultLabels)."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import get, string_map
from policies._settings import schema, settings
from tritonfleet.clouds.gcp.resources import GCS_BUCKET, GKE_CLUSTER, GKE_NODE_POOL
from tritonfleet.clouds.gcp.resources import PROVIDER as GCP_PROVIDER

# Where each type keeps its billing labels (a node pool's nodeConfig.labels are Kubernetes node labels, not these).
LABELS_AT = {GKE_CLUSTER: "resourceLabels", GKE_NODE_POOL: "nodeConfig.resourceLabels", GCS_BUCKET: "labels"}

SCHEMA = schema(
    requiredLabels={
        "type": "array",
        "items": {"type": "string"},
        "default": ["team", "cost-center"],
        "description": "label keys every covered resource carries",
    },
    resourceTypes={
        "type": "array",
        "items": {"type": "string", "enum": sorted(LABELS_AT)},
        "default": sorted(LABELS_AT),
        "description": "GCP resource type tokens that must carry the labels",
    },
)


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = settings(args, SCHEMA)
    if args.resource_type not in config["resourceTypes"]:
        return
    field = LABELS_AT[args.resource_type]
    labels = string_map(get(args.props, field))
    if args.provider is not None and args.provider.resource_type == GCP_PROVIDER:
        labels = string_map(get(args.provider.props, "defaultLabels")) | labels
    missing = [key for key in config["requiredLabels"] if not labels.get(key)]
    if missing:
        report_violation(
            f"'{args.name}' ({args.resource_type}) lacks cost-allocation label(s) {', '.join(missing)} in {field} "
            f"(has: {', '.join(sorted(labels)) or 'none'}). Set them in tritonfleet:tags and pass them as {field}.",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="gcp-resource-require-cost-labels",
    description="Cost-bearing GCP resources must carry the required cost-allocation labels.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    config_schema=SCHEMA,
    remediation_steps="Add the missing keys to tritonfleet:tags; the program must pass them as resourceLabels/labels.",
)
