"""One Triton Inference Server release per configured deployment, from our chart in charts/triton-inference-server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core import pins
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.conventions import TRITON_CHART_NAME
from tritonfleet.core.scheduling import PoolFacts

CHART_DIR = Path(__file__).resolve().parents[2] / "charts" / TRITON_CHART_NAME


def triton_values(deployment: TritonDeployment, pool: PoolFacts, model_repository: str, env: dict[str, str]) -> dict[str, Any]:
    """The chart values for one deployment (plain data; tested without Pulumi)."""
    return {
        "image": {"repository": pins.TRITON_IMAGE_REPOSITORY, "tag": deployment.image_tag},
        "modelRepository": model_repository,
        "modelControlMode": deployment.model_control_mode,
        "gpusPerReplica": deployment.gpus_per_replica,
        "replicas": {"min": deployment.min_replicas, "max": deployment.max_replicas},
        "nodeSelector": pool.node_selector,
        "tolerations": [{"operator": "Equal", **pool.taint}],
        "env": env,
    }


class TritonRelease(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        deployment: TritonDeployment,
        pool: PoolFacts,
        model_repository: pulumi.Output[str],
        env: dict[str, str],
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:k8s:TritonRelease", name, None, opts)
        values = model_repository.apply(
            lambda uri: triton_values(deployment, pool, uri + "/" + deployment.model_prefix.rstrip("/"), env)
        )
        self.release = k8s.helm.v3.Release(
            name,
            name=deployment.name,
            chart=str(CHART_DIR),
            namespace=deployment.namespace,
            create_namespace=True,
            values=values,
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.register_outputs({"status": self.release.status})
