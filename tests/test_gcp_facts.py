"""GcpCloud alone under set_mocks: the ClusterFacts it hands to the Kubernetes layer."""

from __future__ import annotations

import pulumi
import pytest
from pulumi.runtime import mocks, settings

from tests.gcp_helpers import decoded, encoded
from tritonfleet.clouds.gcp.drivers import gke_gpu_operator_values, gpu_driver_setup, gpu_operator_resource_quota
from tritonfleet.core.config import load_stack_config
from tritonfleet.plan.fake_state import fake_call, fake_outputs


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", fake_outputs(args.typ, args.name, dict(args.inputs))

    def call(self, args: pulumi.runtime.MockCallArgs):
        answer = fake_call(args.token)
        if answer is None or not args.token.startswith("gcp:organizations/"):
            raise AssertionError(f"unexpected invoke {args.token}")
        return answer


@pytest.fixture
def gcp_dev():
    settings.ROOT.set(None)
    pulumi.runtime.set_all_config({}, [])
    monitor = mocks.MockMonitor(_Mocks())
    pulumi.runtime.set_mocks(monitor.mocks, project="tritonfleet", stack="gcp-dev", preview=False, monitor=monitor)
    yield load_stack_config(encoded(decoded("gcp-dev")), "gcp-dev")
    settings.ROOT.set(None)


@pulumi.runtime.test
async def test_facts_for_the_kubernetes_layer(gcp_dev):
    from components.gcp.cloud import GcpCloud

    cloud = GcpCloud("t", gcp_dev)
    facts = cloud.facts
    assert set(facts.pools) == {"l4"} and facts.pools["l4"].taints[0]["value"] == "present"
    assert facts.pools["l4"].node_selector == {"cloud.google.com/compute-class": "tritonfleet-l4"}
    assert await facts.model_repositories["models"].future() == "gs://tf-gcp-dev-models-acme-ml-dev-us-central1"
    annotations = facts.service_account_annotations["resnet"]
    assert await pulumi.Output.from_input(annotations["tritonfleet.io/workload-identity-principal"]).future() == (
        "principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/"
        "acme-ml-dev.svc.id.goog/subject/ns/triton/sa/triton-resnet"
    )
    assert facts.gpu_operator_values == gke_gpu_operator_values(gpu_driver_setup(gcp_dev), "1.33")
    assert facts.gpu_operator_values["driver"] == {"enabled": True}
    assert facts.gpu_operator_resource_quota == gpu_operator_resource_quota(gcp_dev)
    assert await facts.kubeconfig.is_secret()
    text = await facts.kubeconfig.future()
    # People's kubeconfig: the DNS-based endpoint through gke-gcloud-auth-plugin, no credential in it.
    assert "command: gke-gcloud-auth-plugin" in text and "server: https://gke-t-gke-0000.us-central1.gke.goog" in text
    assert "token" not in text and "client-key" not in text and "203.0.113.10" not in text
