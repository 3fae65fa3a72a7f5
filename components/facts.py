"""The cloud-neutral facts a cloud adapter hands to the Kubernetes layer. Nothing above this says aws or gcp."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core.exposure import ExposureFacts
from tritonfleet.core.scheduling import PoolFacts


@dataclass
class ClusterFacts:
    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]
    model_repositories: dict[str, pulumi.Output[str]]  # bucket name -> s3://bucket or gs://bucket
    # deployment name -> ServiceAccount annotations that grant read on its bucket (IRSA / Workload Identity)
    service_account_annotations: dict[str, dict[str, pulumi.Input[str]]] = field(default_factory=dict)
    # extra container environment for Triton (AWS_DEFAULT_REGION on AWS)
    triton_env: dict[str, str] = field(default_factory=dict)
    # cloud-specific GPU Operator values (driver/toolkit mode, GKE paths), decided by the adapter
    gpu_operator_values: dict = field(default_factory=dict)
    # how the cloud's load balancers expose a Service (annotations, ingress class, traffic sources), decided by the adapter
    exposure: ExposureFacts = field(default_factory=ExposureFacts)
