"""The cloud-neutral facts a cloud adapter hands to the Kubernetes layer. Nothing above this says aws or gcp."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core.exposure import ExposureFacts
from tritonfleet.core.scheduling import PoolFacts


@dataclass
class ClusterFacts:
    """What the Kubernetes layer may rely on. Each field states who fills it and what the consumer must do with it.

    service_account_annotations: deployment name -> annotations for that Triton deployment's Kubernetes
        ServiceAccount. The cloud adapter grants read on the deployment's bucket (and nothing else) to the
        ServiceAccount named `conventions.triton_service_account(deployment.name)` in namespace `<deployment.namespace>`; the Kubernetes layer
        must run Triton under that ServiceAccount and put these annotations on it (IRSA role ARN on AWS,
        `iam.gke.io/gcp-service-account` on GKE). No keys or credential files are involved. The adapter makes each
        annotation resolve only after its grants exist, so a release that takes it waits for them.
    gpu_operator_values: Helm values the GPU Operator release must merge over its own (driver/toolkit mode, host
        paths, toolkit env). They follow from how the adapter built the GPU nodes, so the consumer must not override
        these keys.
    gpu_operator_resource_quota: when not None, the `spec` of a ResourceQuota the Kubernetes layer must create in the
        GPU Operator's namespace BEFORE the release (GKE admits pods with the system-node-critical /
        system-cluster-critical priority classes outside kube-system only under such a quota; without it every
        operator pod is rejected and the release times out). The consumer adds metadata (name, namespace).
    exports: stack outputs the adapter wants users to see (pool names, identity bindings), exported as given.
    """

    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]
    model_repositories: dict[str, pulumi.Output[str]]  # bucket name -> s3://bucket or gs://bucket
    service_account_annotations: dict[str, dict[str, pulumi.Input[str]]] = field(default_factory=dict)
    # extra container environment for Triton (AWS_DEFAULT_REGION on AWS)
    triton_env: dict[str, str] = field(default_factory=dict)
    gpu_operator_values: dict[str, Any] = field(default_factory=dict)
    gpu_operator_resource_quota: dict[str, Any] | None = None
    exports: dict[str, pulumi.Input[Any]] = field(default_factory=dict)
    # how the cloud's load balancers expose a Service (annotations, ingress class, traffic sources), decided by the adapter
    exposure: ExposureFacts = field(default_factory=ExposureFacts)
