"""On GKE, the node pool's driver setting, node image, device-plugin label and GPU Operator values agree.

Two combinations work (shared/reference/gpu-kubernetes-facts.md §3.2, §4.2):
  GKE-managed: gpuDriverVersion DEFAULT or LATEST, no device-plugin label, and any GPU Operator with
               driver.enabled=false and devicePlugin.enabled=false (GKE installs the driver and runs the plugin);
  operator-managed: gpuDriverVersion INSTALLATION_DISABLED, label gke-no-default-nvidia-gpu-device-plugin=true,
               imageType UBUNTU_CONTAINERD and a GPU Operator that installs the driver (driver.enabled true).
Anything else leaves nodes with no driver, two drivers or two device plugins, and no GPU pod schedules.
"""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import GKE_NODE_POOL, get, is_gpu_operator_release, items
from policies._pools import gpu_pool
from tritonfleet.clouds.gcp.facts import GKE_NO_DEVICE_PLUGIN_LABEL

GKE_MANAGED = ("DEFAULT", "LATEST")
OPERATOR_MANAGED = "INSTALLATION_DISABLED"
CHOICES = (
    "either GKE-managed drivers (gpuDriverVersion DEFAULT/LATEST, no device-plugin label, operator driver and device "
    f"plugin off) or operator-managed drivers (INSTALLATION_DISABLED, {GKE_NO_DEVICE_PLUGIN_LABEL}=true, "
    "imageType UBUNTU_CONTAINERD, operator driver on)"
)


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    operators = [r for r in args.resources if is_gpu_operator_release(r.resource_type, r.props)]
    for resource in args.resources:
        if (
            resource.resource_type != GKE_NODE_POOL
            or gpu_pool(resource.resource_type, resource.props, resource.urn, resource.name) is None
        ):
            continue
        props, name = resource.props, resource.name

        def report(problem: str) -> None:
            report_violation(f"GKE GPU node pool '{name}': {problem}. Choose {CHOICES}.", resource.urn)  # noqa: B023

        versions = sorted(
            {
                str(get(a, "gpuDriverInstallationConfig.gpuDriverVersion", ""))
                for a in items(get(props, "nodeConfig.guestAccelerators"))
            }
        )
        version = versions[0] if len(versions) == 1 else ""
        label = str((get(props, "nodeConfig.labels", {}) or {}).get(GKE_NO_DEVICE_PLUGIN_LABEL, "")).lower() == "true"
        image = str(get(props, "nodeConfig.imageType", "COS_CONTAINERD")).upper()
        if version in GKE_MANAGED:
            if label:
                report(
                    f"gpuDriverVersion {version} asks GKE to install the driver, but the label {GKE_NO_DEVICE_PLUGIN_LABEL}=true "
                    "turns off GKE's device plugin and driver install, leaving the nodes with no driver"
                )
            for operator in operators:
                if get(operator.props, "values.driver.enabled", True) is not False:
                    report(
                        f"GKE installs the driver, and GPU Operator release '{operator.name}' would install a second one "
                        "(driver.enabled is not false)"
                    )
                if get(operator.props, "values.devicePlugin.enabled", True) is not False:
                    report(
                        f"GKE runs its device plugin, and GPU Operator release '{operator.name}' would run a second one "
                        "(devicePlugin.enabled is not false)"
                    )
        elif version == OPERATOR_MANAGED:
            if not label:
                report(
                    f"gpuDriverVersion {OPERATOR_MANAGED} without the label {GKE_NO_DEVICE_PLUGIN_LABEL}=true keeps GKE's "
                    "device plugin on a node with no GKE driver"
                )
            if image != "UBUNTU_CONTAINERD":
                report(f"the GPU Operator can only install its driver on UBUNTU_CONTAINERD, not imageType {image}")
            if not operators:
                report(
                    f"gpuDriverVersion {OPERATOR_MANAGED} leaves driver installation to a GPU Operator, and the stack has none"
                )
            for operator in operators:
                if get(operator.props, "values.driver.enabled", True) is False:
                    report(
                        f"gpuDriverVersion {OPERATOR_MANAGED} and GPU Operator release '{operator.name}' with "
                        "driver.enabled=false: nothing installs the driver"
                    )
        else:
            shown = "/".join(v or "unset" for v in versions) or "unset"
            report(
                f"gpuDriverVersion is {shown}; set it explicitly and the same on every accelerator "
                "(GKE's default has changed over time)"
            )


POLICY = StackValidationPolicy(
    name="gke-gpu-driver-mode-consistent",
    description=(
        "GKE GPU node pools must use one consistent driver mode across driver setting, node image, device-plugin label "
        "and GPU Operator values."
    ),
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=CHOICES[0].upper() + CHOICES[1:] + ".",
)
