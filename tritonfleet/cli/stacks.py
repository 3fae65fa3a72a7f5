"""A stack's config and one of its Triton deployments, for the commands that take --stack and --deployment; exit 1
with the problem when the stack does not load or has no such deployment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonfleet.cli.output import user_error


def load_config(stack: str, project_dir: Path | None) -> Any:
    """The stack's validated config (the project found from here upwards unless `project_dir` names it)."""
    from tritonfleet.core.config import ConfigError, load_stack_config
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        raw, _ = stack_config(load_project(project_dir or find_project(Path.cwd())), stack)
        return load_stack_config(raw, stack)
    except (ConfigError, ProjectError) as error:
        raise user_error(error) from None


def deployment(stack: str, name: str, project_dir: Path | None) -> tuple[Any, Any]:
    """The stack's config and its Triton deployment of that name; exit 1 naming the deployments when there is none."""
    from tritonfleet.core.config.problems import printable

    config = load_config(stack, project_dir)
    found = next((d for d in config.triton_deployments if d.name == name), None)
    if found is None:
        names = ", ".join(d.name for d in config.triton_deployments) or "none"
        raise user_error(f"stack '{stack}' has no Triton deployment '{printable(name)}' (deployments: {names})")
    return config, found
