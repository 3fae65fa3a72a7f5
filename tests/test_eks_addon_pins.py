"""EKS add-on versions are pinned per Kubernetes version (tritonfleet/core/pins.py): every version EKS supports has an
entry for every add-on the cluster installs, each add-on names its source, the plan's add-ons carry the pins, and
preflight says whether a pin is offered and what EKS would pick where none is pinned."""

from __future__ import annotations

import re
from datetime import date

import boto3
import pytest
from botocore.stub import Stubber

from components.aws.cluster import NODE_ADDONS, WORKLOAD_ADDONS
from tritonfleet.clouds.aws.facts import EKS_VERSIONS, supported_eks_versions
from tritonfleet.clouds.aws.preflight import check_addon_versions
from tritonfleet.core import pins

INSTALLED = (*NODE_ADDONS, *WORKLOAD_ADDONS)
EKS_ADDON_VERSION = re.compile(r"v\d+\.\d+\.\d+-eksbuild\.\d+")


@pytest.mark.parametrize("on", [date(2026, 12, 5), date.today()])
def test_every_supported_kubernetes_version_has_an_entry_for_every_addon(on):
    missing = [
        (addon, version)
        for addon in INSTALLED
        for version in supported_eks_versions(on)
        if version not in pins.EKS_ADDON_VERSIONS.get(addon, {})
    ]
    assert missing == []


def test_the_pins_cover_the_installed_addons_each_with_its_source_and_the_ami_versions():
    assert set(pins.EKS_ADDON_VERSIONS) == set(INSTALLED) == set(pins.EKS_ADDON_SOURCES)
    dated = [addon for addon, source in pins.EKS_ADDON_SOURCES.items() if re.search(r"read \d{4}-\d{2}-\d{2}", source)]
    undated = [addon for addon, source in pins.EKS_ADDON_SOURCES.items() if "VERIFY" in source]
    assert sorted(dated + undated) == sorted(INSTALLED)
    for addon in undated:  # nothing unsourced is pinned
        assert set(pins.EKS_ADDON_VERSIONS[addon].values()) == {None}
    for versions in pins.EKS_ADDON_VERSIONS.values():
        assert set(versions) <= set(EKS_VERSIONS) and set(versions) == set(pins.EKS_AMI_RELEASES["al2023"])


def test_pinned_versions_have_the_eks_addon_shape_and_kube_proxy_follows_the_minor():
    for addon, versions in pins.EKS_ADDON_VERSIONS.items():
        for kubernetes, version in versions.items():
            assert version is None or EKS_ADDON_VERSION.fullmatch(version), (addon, kubernetes, version)
    for kubernetes, version in pins.EKS_ADDON_VERSIONS["kube-proxy"].items():
        assert version.startswith(f"v{kubernetes}."), (kubernetes, version)
    # NetworkPolicy enforcement (enableNetworkPolicy) needs the VPC CNI at v1.14.0 or later.
    for version in filter(None, pins.EKS_ADDON_VERSIONS["vpc-cni"].values()):
        assert tuple(map(int, version[1:].split("-")[0].split("."))) >= (1, 14, 0)


def test_unknown_addon_or_version_is_left_to_eks():
    assert pins.eks_addon_version("coredns", "1.35") == "v1.14.3-eksbuild.3"
    assert pins.eks_addon_version("coredns", "1.99") is None
    assert pins.eks_addon_version("no-such-addon", "1.35") is None


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_plans_addons_carry_the_pins_of_the_stacks_version(stock_plan, stack, stack_config):
    version = stack_config(stack).cluster.kubernetes_version
    addons = {r["inputs"]["addonName"]: r["inputs"] for r in stock_plan(stack)["resources"] if r["type"] == "aws:eks/addon:Addon"}
    assert set(addons) == set(INSTALLED)
    for addon, inputs in addons.items():
        assert inputs.get("addonVersion") == pins.eks_addon_version(addon, version), addon


def _eks():
    return boto3.client("eks", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")


def _offered(addon: str, versions: list[str], default: str | None) -> dict:
    return {
        "addons": [
            {
                "addonName": addon,
                "addonVersions": [
                    {"addonVersion": v, "compatibilities": [{"clusterVersion": "1.35", "defaultVersion": v == default}]}
                    for v in versions
                ],
            }
        ]
    }


def test_preflight_reports_offered_missing_and_unpinned_addons(stack_config):
    config = stack_config("prod")
    k8s = config.cluster.kubernetes_version
    eks = _eks()
    with Stubber(eks) as stub:
        for addon in sorted(pins.EKS_ADDON_VERSIONS):  # the order preflight asks in
            pinned = pins.eks_addon_version(addon, k8s)
            if addon == "aws-ebs-csi-driver":
                stub.add_client_error("describe_addon_versions", "AccessDeniedException", "eks:DescribeAddonVersions denied")
                continue
            # coredns: its pin withdrawn in the region; the others: the pin (or, unpinned, a default) offered
            versions = ["v1.99.0-eksbuild.1"] if addon == "coredns" else [v for v in (pinned, "v1.2.3-eksbuild.4") if v]
            expected = {"addonName": addon, "kubernetesVersion": k8s}
            stub.add_response("describe_addon_versions", _offered(addon, versions, versions[-1]), expected)
        findings = {f.subject.split(" ")[0]: f for f in check_addon_versions(eks, config)}
        stub.assert_no_pending_responses()
    assert set(findings) == set(INSTALLED)
    assert findings["kube-proxy"].status == "ok"
    assert findings["coredns"].status == "blocker"
    assert f"{pins.eks_addon_version('coredns', k8s)} is not offered" in findings["coredns"].detail
    assert "default v1.99.0-eksbuild.1" in findings["coredns"].detail
    assert findings["vpc-cni"].status == "warning" and "default, v1.2.3-eksbuild.4" in findings["vpc-cni"].detail
    assert findings["aws-ebs-csi-driver"].status == "unknown" and "denied" in findings["aws-ebs-csi-driver"].detail
