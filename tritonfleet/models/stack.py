"""Which bucket and prefix a stack's Triton reads, from the stack's config alone (no cloud call, no Pulumi state).

The bucket's physical name is `StackConfig.physical_bucket_name` (its `bucketName`, or the deterministic
tf-<stack>-<name>-<account or project>-<region>), which
the ModelBucket components set explicitly (no auto-naming suffix), so config and deployed bucket always agree.
"""

from __future__ import annotations

from pathlib import Path

from tritonfleet.core.cloud import cloud
from tritonfleet.core.config import StackConfig, TritonDeployment, load_stack_config
from tritonfleet.core.config.problems import both_ways, nearest, set_command
from tritonfleet.core.object_store import RepositoryUri, join_prefix
from tritonfleet.plan.project import load_project, stack_config


class TargetError(Exception):
    """The stack has no such bucket or deployment."""


def stack_repository(
    project_dir: Path, stack: str, *, bucket: str | None = None, deployment: str | None = None, prefix: str = ""
) -> RepositoryUri:
    """The repository URI for a stack: a deployment's bucket and modelPrefix, or a named bucket (default: the first)."""
    raw, _ = stack_config(load_project(project_dir), stack)
    config = load_stack_config(raw, stack)  # raises ConfigError listing every problem
    deployment_prefix = ""
    if deployment is not None:
        found = next((d for d in config.triton_deployments if d.name == deployment), None)
        if found is None:
            names = ", ".join(d.name for d in config.triton_deployments) or "none"
            raise TargetError(f"stack '{stack}' has no Triton deployment '{deployment}' (deployments: {names})")
        if bucket is not None and bucket != config.bucket_for(found).name:
            raise TargetError(f"deployment '{deployment}' reads bucket '{config.bucket_for(found).name}', not '{bucket}'")
        chosen = config.bucket_for(found)
        deployment_prefix = found.model_prefix
    elif bucket is not None:
        chosen = next((b for b in config.model_buckets if b.name == bucket), None)
        if chosen is None:
            names = ", ".join(b.name for b in config.model_buckets)
            raise TargetError(f"stack '{stack}' has no model bucket '{bucket}' (buckets: {names})")
    else:
        chosen = config.model_buckets[0]
    return RepositoryUri(
        cloud(config.cloud).uri_scheme, config.physical_bucket_name(chosen), join_prefix(deployment_prefix, prefix)
    )


def declared_models(project_dir: Path, stack: str, deployment: str) -> dict[str, str]:
    """The model names a deployment's config relies on (requiredModels, loadModels), by their config key."""
    raw, _ = stack_config(load_project(project_dir), stack)
    config = load_stack_config(raw, stack)
    index = next((i for i, d in enumerate(config.triton_deployments) if d.name == deployment), None)
    if index is None:
        names = ", ".join(d.name for d in config.triton_deployments) or "none"
        raise TargetError(f"stack '{stack}' has no Triton deployment '{deployment}' (deployments: {names})")
    found = config.triton_deployments[index]
    at = f"tritonDeployments[{index}]"
    declared = {f"{at}.requiredModels[{j}]": m for j, m in enumerate(found.required_models)}
    declared.update({f"{at}.loadModels[{j}]": m for j, m in enumerate(found.load_models)})
    return declared


def missing_models(declared: dict[str, str], available: set[str], stack: str) -> list[str]:
    """One message per declared model the repository does not have, naming the key and the fix two ways (the
    `pulumi config set` line and the stack file's edit): the model it most likely meant, else a placeholder."""
    have = ", ".join(sorted(available)) or "none"
    messages = []
    for key, name in declared.items():
        if name in available:
            continue
        fix = both_ways(set_command(key, nearest(name, available) or "<model>", stack))
        messages.append(
            f"tritonfleet:{key} = {name!r} is not a model of the repository (it has: {have}); a required model that "
            f"is missing keeps every replica unready. Fix: add the model, or {fix}"
        )
    return messages


def unheld_pins(
    config: StackConfig, deployment: TritonDeployment, held: dict[str, list[int]], unlisted: list[str], stack: str
) -> list[str]:
    """One message per modelVersions pin of `deployment` the bucket will not hold: `held` is model -> version folders
    after the sync; a model in `unlisted` (in the bucket, not in this repository) is not judged here."""
    at = f"tritonDeployments[{config.triton_deployments.index(deployment)}].modelVersions"
    out = []
    for model, version in sorted(deployment.model_versions.items()):
        if model in unlisted or version in held.get(model, []):
            continue
        have = held.get(model)
        holds = f"holds versions {have}" if have else "does not hold the model"
        fix = both_ways(set_command(f"{at}.{model}", have[-1] if have else "<version>", stack))
        out.append(
            f"tritonfleet:{at}.{model} = {version}: the bucket {holds}, so the rollout would have nothing to serve. "
            f"Fix: publish version {version} (tritonfleet models sync --no-live), or {fix}"
        )
    return out


def pin_lines(config: StackConfig) -> list[str]:
    """Per deployment: the versions it pins, the custom configuration that serves them, and how a change goes out."""
    from tritonfleet.core.conventions import triton_release_name
    from tritonfleet.core.rollout import pinned_config_name, steps

    lines = []
    for d in config.triton_deployments:
        pins = ", ".join(f"{m} v{v}" for m, v in sorted(d.model_versions.items())) or "no pins (the repository's policy)"
        name = pinned_config_name(d)
        lines.append(f"{d.name}: {pins}" + (f" (--model-config-name={name})" if name else ""))
        if d.rollout is None:
            lines.append("  a change replaces every replica at once (no rollout)")
        else:
            weights = ", ".join(f"{s.weight}%" for s in steps(d))
            lines.append(f"  a change rolls out: {weights}, then 100%, every {d.rollout.interval}")
            lines.append(f"  its state: kubectl argo rollouts get rollout {triton_release_name(d.name)} -n {d.namespace}")
    return lines
