"""Cost-bearing GCP resources carry the cost-allocation labels (their own labels or the provider's defaultLabels)."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._cost_keys import check_cost_keys, cost_key_schema, provider_defaults
from policies._match import get
from policies._settings import settings
from tritonfleet.clouds.gcp.resources import GCS_BUCKET, GKE_CLUSTER, GKE_NODE_POOL
from tritonfleet.clouds.gcp.resources import PROVIDER as GCP_PROVIDER

# Where each type keeps its billing labels (a node pool's nodeConfig.labels are Kubernetes node labels, not these).
LABELS_AT = {GKE_CLUSTER: "resourceLabels", GKE_NODE_POOL: "nodeConfig.resourceLabels", GCS_BUCKET: "labels"}

SCHEMA = cost_key_schema("label", "GCP", sorted(LABELS_AT), closed=True)


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = settings(args, SCHEMA)
    if args.resource_type not in config["resourceTypes"]:
        return
    field = LABELS_AT[args.resource_type]
    defaults = provider_defaults(args, GCP_PROVIDER, lambda props: get(props, "defaultLabels"))
    check_cost_keys(
        args, report_violation, "label", config["requiredLabels"], get(args.props, field), defaults,
        where=f" in {field}", fix=f" and pass them as {field}.",
    )  # fmt: skip


POLICY = ResourceValidationPolicy(
    name="gcp-resource-require-cost-labels",
    description="Cost-bearing GCP resources must carry the required cost-allocation labels.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    config_schema=SCHEMA,
    remediation_steps="Add the missing keys to tritonfleet:tags; the program must pass them as resourceLabels/labels.",
)
