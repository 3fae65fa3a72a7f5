"""On GKE, the node pool's driver setting, node image, device-plugin label and GPU Operator values agree.

The documented combinations (tritonfleet/clouds/gcp/drivers.py cites them):
  GKE-managed: gpuDriverVersion LATEST (COS only) or DEFAULT, no device-plugin label, and no GPU Operator driver or
               device plugin (GKE installs the driver and runs the plugin);
  operator on COS: gpuDriverVersion INSTALLATION_DISABLED, label gke-no-default-nvidia-gpu-device-plugin=true, Google's
               driver-installer DaemonSet, and a GPU Operator with driver.enabled=false (NVIDIA's GKE guide);
  operator on Ubuntu: INSTALLATION_DISABLED, the label, imageType UBUNTU_CONTAINERD and a GPU Operator that installs
               the driver (driver.enabled true).
Anything else leaves nodes with no driver, two drivers or two device plugins, and no GPU pod schedules.
"""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import get, is_gpu_operator_release, items
from policies._pools import gpu_pool
from tritonfleet.clouds.gcp.accelerators import tpu
from tritonfleet.clouds.gcp.facts import GKE_NO_DEVICE_PLUGIN_LABEL
from tritonfleet.clouds.gcp.resources import GKE_NODE_POOL

GKE_MANAGED = ("DEFAULT", "LATEST")
OPERATOR_MANAGED = "INSTALLATION_DISABLED"
LATEST_IMAGES = ("COS_CONTAINERD",)  # the GKE API documents LATEST for COS only
DRIVER_INSTALLER = ("kubernetes:apps/v1:DaemonSet", "nvidia-driver-installer")  # Google's COS installer
CHOICES = (
    "GKE-managed drivers (gpuDriverVersion LATEST on COS or DEFAULT, no device-plugin label, no operator driver or "
    f"device plugin), or operator-managed drivers (INSTALLATION_DISABLED, {GKE_NO_DEVICE_PLUGIN_LABEL}=true; on COS "
    "Google's driver-installer DaemonSet and operator driver off, on UBUNTU_CONTAINERD operator driver on)"
)


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    operators = [r for r in args.resources if is_gpu_operator_release(r.resource_type, r.props)]
    installer = any(
        (r.resource_type, get(r.props, "metadata.name", "")) == DRIVER_INSTALLER for r in args.resources
    )
    for resource in args.resources:
        if (
            resource.resource_type != GKE_NODE_POOL
            or gpu_pool(resource.resource_type, resource.props, resource.urn, resource.name) is None
            or tpu(str(get(resource.props, "nodeConfig.machineType", "")))
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
            if version == "LATEST" and image not in LATEST_IMAGES:
                report(f"gpuDriverVersion LATEST is documented for COS only, not imageType {image}: use DEFAULT")
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
            if not operators:
                report(f"gpuDriverVersion {OPERATOR_MANAGED} needs a GPU Operator for the device plugin, and the stack has none")
            for operator in operators:
                operator_driver = get(operator.props, "values.driver.enabled", True) is not False
                if image == "UBUNTU_CONTAINERD" and not operator_driver:
                    report(
                        f"gpuDriverVersion {OPERATOR_MANAGED} on UBUNTU_CONTAINERD and GPU Operator release "
                        f"'{operator.name}' with driver.enabled=false: nothing installs the driver"
                    )
                elif image != "UBUNTU_CONTAINERD" and operator_driver:
                    report(
                        f"the GPU Operator's driver container does not run on imageType {image}; on COS, Google's driver "
                        f"installer builds the driver and GPU Operator release '{operator.name}' needs driver.enabled=false"
                    )
            if image != "UBUNTU_CONTAINERD" and not installer:
                report(
                    f"gpuDriverVersion {OPERATOR_MANAGED} on imageType {image} needs Google's driver-installer DaemonSet "
                    "(kube-system/nvidia-driver-installer), and the stack has none: nothing installs the driver"
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
