"""Does a deployment's startup budget (modelLoadSeconds: the startup probe's patience) cover pulling its model
repository from object storage? Triton copies an s3:// or gs:// repository to local disk before loading it, so the
copy alone takes at least repositoryGi over the node's sustained network bandwidth (the catalog's `network`, sourced).
Loading into GPU memory comes on top, so this is a floor, and the plan warns when the budget is below it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tritonfleet.core.config import StackConfig, TritonDeployment

GIB_IN_GIGABITS = 8 * 2**30 / 1e9


@dataclass(frozen=True)
class StartupBudget:
    deployment: str
    repository_gi: int
    network_gbps: float | None  # None: the catalog does not know the node's bandwidth
    network_source: str | None
    download_seconds: int | None  # at the node's sustained bandwidth; None when that is unknown
    model_load_seconds: int

    @property
    def short(self) -> bool:
        return self.download_seconds is not None and self.model_load_seconds < self.download_seconds


def startup_budget(config: StackConfig, deployment: TritonDeployment) -> StartupBudget:
    network = config.instance_type(config.pool(deployment.pool)).network
    seconds = math.ceil(deployment.repository_gi * GIB_IN_GIGABITS / network.gbps) if network else None
    return StartupBudget(
        deployment=deployment.name,
        repository_gi=deployment.repository_gi,
        network_gbps=network.gbps if network else None,
        network_source=network.source if network else None,
        download_seconds=seconds,
        model_load_seconds=deployment.model_load_seconds,
    )


def startup_warnings(config: StackConfig) -> list[str]:
    warnings = []
    for i, deployment in enumerate(config.triton_deployments):
        budget = startup_budget(config, deployment)
        if budget.short:
            at = f"tritonDeployments[{i}]"
            warnings.append(
                f"{at}.modelLoadSeconds: {budget.model_load_seconds} s is less than copying {budget.repository_gi} GiB at the "
                f"node's sustained {budget.network_gbps:g} Gbps ({budget.download_seconds} s, before any model loads): "
                f"the startup probe would restart the pod mid-copy. Fix: pulumi config set --path "
                f"'tritonfleet:{at}.modelLoadSeconds' {min(7200, math.ceil(budget.download_seconds * 2 / 60) * 60)}"
            )
    return warnings
