"""Scale-to-zero rules: the first request after idle must be an accepted wait (required in prod), and only where
the KEDA HTTP add-on's interceptor sees that request (in-cluster exposure, no rollout)."""

from __future__ import annotations

import math

from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config.problems import MISSING
from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.config.schema import GpuPool, TritonDeployment

# Where an acknowledgement is required: a prod deployment's users meet the cold start, dev and staging users are
# the team itself (docs/serving.md "Idle capacity to zero").
ACKNOWLEDGED_IN = ("prod",)


def check_scale_to_zero(
    ctx: RuleContext, deployment: TritonDeployment, pool: GpuPool, instance_type: InstanceType | None, at: str
) -> None:
    idle = deployment.scale_to_zero
    if idle is None:
        return
    from tritonfleet.core.startup import first_request_wait  # startup imports the config package

    key = f"{at}.scaleToZero"
    if deployment.access.exposure != "cluster":
        ctx.remove(
            key, {"idleMinutes": idle.idle_minutes},
            f"only with access.exposure cluster (this deployment is {deployment.access.exposure}): the first request "
            "must reach KEDA's HTTP interceptor, which wakes the deployment; a load balancer sends it to no pod",
        )  # fmt: skip
    if deployment.rollout is not None:
        ctx.remove(
            key, {"idleMinutes": idle.idle_minutes},
            "not with a rollout: a canary split needs running replicas (remove one of the two)",
        )  # fmt: skip
    wait = first_request_wait(deployment, instance_type, new_node=pool.min_nodes == 0)
    accepted = idle.accepted_first_request_seconds
    suggestion = max(60, math.ceil(wait.seconds * 1.5 / 60) * 60)
    needs = (
        f"the first request after {idle.idle_minutes} min idle waits {wait.text} (a replica's start on a "
        f"{'new' if wait.new_node else 'running'} node: {wait.steps}"
        + (f"; latencyTarget {deployment.latency_target} does not hold for it" if deployment.latency_target else "")
        + ")"
    )
    environment = ctx.data.get("environment")
    if accepted is None and environment in ACKNOWLEDGED_IN:
        ctx.add(
            f"{key}.acceptedFirstRequestSeconds", MISSING,
            f"in {environment}, the wait you accept for the first request after idle, in seconds: {needs}; or "
            "remove scaleToZero",
            suggestion,
        )  # fmt: skip
    elif accepted is not None and accepted < wait.seconds:
        ctx.add(
            f"{key}.acceptedFirstRequestSeconds", accepted,
            f"at least {wait.seconds}: {needs}; or use the caches, or remove scaleToZero",
            suggestion,
        )  # fmt: skip
