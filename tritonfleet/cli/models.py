"""`tritonfleet models` (`validate`, `sync`, `pins`, `load`, `unload`): Triton model repositories checked, published to
a stack's bucket, and loaded or unloaded on every replica of a deployment."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from tritonfleet.cli.options import ProjectOption
from tritonfleet.cli.output import err, error_message, out, user_error
from tritonfleet.cli.stacks import deployment as stack_deployment
from tritonfleet.cli.stacks import load_config
from tritonfleet.exit_codes import EXIT_USAGE, EXIT_USER_ERROR
from tritonfleet.models.control import DEADLINE_SECONDS
from tritonfleet.terminal import print_labelled

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Check Triton model repositories and publish them to a stack's bucket.",
    short_help="check model repositories, publish them, load models",
)


def _validated(directory: Path, consequence: str = "", replica: Any = None):
    """Validate a repository (against a deployment's replica when given), print its findings, exit 1 on any error."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.validate import validate_repository

    report = validate_repository(directory, replica)
    for finding in report.findings:
        colour = "red" if finding.severity == "error" else "yellow"
        print_labelled(err, f"{finding.severity}:", colour, printable(f"{finding.path}: {finding.message}"))
    if not report.ok:
        err.print(f"{len(report.errors)} error(s) in {printable(str(directory))}{consequence}")
        raise typer.Exit(EXIT_USER_ERROR)
    return report


def _escaped_lines(error: Exception) -> str:
    """An error's lines with what does not print escaped: store answers and object keys come from outside."""
    from tritonfleet.core.config.problems import printable

    return "\n".join(printable(line) for line in str(error).split("\n"))


def _check_declared(stack: str, deployment: str, available: set[str], project_dir: Path | None, consequence: str) -> None:
    """Exit 1 when the deployment's requiredModels/loadModels name a model the repository does not have."""
    from tritonfleet.core.config import ConfigError
    from tritonfleet.models.stack import TargetError, declared_models, missing_models
    from tritonfleet.plan.project import ProjectError, find_project

    try:
        declared = declared_models(project_dir or find_project(Path.cwd()), stack, deployment)
    except (ConfigError, ProjectError, TargetError) as error:
        raise user_error(error) from None
    problems = missing_models(declared, available, stack)
    for problem in problems:
        error_message(f"{problem}")
    if problems:
        err.print(f"{len(problems)} declared model(s) missing{consequence}")
        raise typer.Exit(EXIT_USER_ERROR)


def _check_llm_layout(report, replica, stack: str, deployment: str, project_dir: Path | None) -> None:
    """Exit 1 when the repository does not serve the deployment's LLM as its `llm` declares (models/llm_layout.py)."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.llm_layout import check_llm_layout
    from tritonfleet.models.llm_layout import stack_deployment as declared_deployment
    from tritonfleet.plan.project import find_project

    found = declared_deployment(project_dir or find_project(Path.cwd()), stack, deployment)
    findings = check_llm_layout(report, found, replica) if found is not None else []
    for finding in findings:
        colour = "red" if finding.severity == "error" else "yellow"
        print_labelled(err, f"{finding.severity}:", colour, printable(f"{finding.path}: {finding.message}"))
    errors = sum(f.severity == "error" for f in findings)
    if errors:
        err.print(f"{errors} error(s): the repository does not serve deployment '{deployment}' as its llm declares")
        raise typer.Exit(EXIT_USER_ERROR)


@app.command("validate", short_help="check a model repository the way Triton reads it")
def models_validate(
    directory: Annotated[Path, typer.Argument(help="the model repository folder")],
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="with --deployment: check its declared models too")] = None,
    deployment: Annotated[str | None, typer.Option(help="with --stack: its requiredModels/loadModels must be here")] = None,
    project_dir: ProjectOption = None,
) -> None:
    """Check a Triton model repository the way Triton reads it; exit 1 on any error, 64 for --stack without
    --deployment or the other way round. With --stack and --deployment,
    instance groups' GPU ids are checked against the deployment's gpusPerReplica too."""
    from tritonfleet.core.config.problems import printable

    if (stack is None) != (deployment is None):
        raise user_error("--stack and --deployment go together", EXIT_USAGE)
    replica = None
    if stack is not None and deployment is not None:
        from tritonfleet.core.catalog import load_catalog
        from tritonfleet.models.validate import Replica

        config, found = stack_deployment(stack, deployment, project_dir)
        gpu = config.pool(found.pool).gpu
        replica = Replica(found.gpus_per_replica, gpu, load_catalog().gpus[gpu].compute_capability)
    report = _validated(directory, replica=replica)
    if stack is not None and deployment is not None:
        _check_declared(stack, deployment, {m.name for m in report.models}, project_dir, ".")
        _check_llm_layout(report, replica, stack, deployment, project_dir)
    versions = ", ".join(f"{m.name} {m.served_versions}" for m in report.models)
    out.print(f"{printable(str(directory))}: {len(report.models)} model(s) OK ({versions})")


@app.command("sync", short_help="validate, then upload what changed to the bucket")
def models_sync(
    directory: Annotated[Path, typer.Argument(help="the model repository folder")],
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="publish to this stack's model bucket")] = None,
    bucket: Annotated[str | None, typer.Option("--bucket", help="s3://BUCKET[/PREFIX] or gs://BUCKET[/PREFIX]")] = None,
    prefix: Annotated[str, typer.Option(help="folder inside the bucket (added after the URI's or deployment's prefix)")] = "",
    deployment: Annotated[str | None, typer.Option(help="with --stack: this Triton deployment's bucket and prefix")] = None,
    model_bucket: Annotated[str | None, typer.Option(help="with --stack: the modelBuckets[].name (default: the first)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print what would change; upload nothing")] = False,
    live: Annotated[
        bool,
        typer.Option(
            "--live/--no-live",
            help="--no-live: upload new versions without switching a published model's config.pbtxt to them "
            "(Triton keeps serving what it serves; a modelVersions pin and its rollout make them live)",
        ),
    ] = True,
    project_dir: ProjectOption = None,
) -> None:
    """Validate, then upload only what changed, publishing each model's config.pbtxt last (see docs/models.md)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from tritonfleet.core.config import ConfigError
    from tritonfleet.core.config.problems import printable
    from tritonfleet.core.object_store import RepositoryUri, StoreError, open_store
    from tritonfleet.models.stack import TargetError, stack_repository
    from tritonfleet.models.sync import SyncError, execute, plan_sync
    from tritonfleet.plan.project import ProjectError, find_project

    if (stack is None) == (bucket is None):
        raise user_error("give exactly one of --stack NAME or --bucket URI", EXIT_USAGE)
    if stack is None and (deployment or model_bucket):
        raise user_error("--deployment and --model-bucket need --stack", EXIT_USAGE)
    report = _validated(directory, "; nothing was published.")
    try:
        if stack is not None:
            uri = stack_repository(project_dir or find_project(Path.cwd()), stack, bucket=model_bucket, deployment=deployment,
                                   prefix=prefix)
        else:
            uri = RepositoryUri.parse(bucket or "", prefix)
        pins, pin_config = _pins(stack, deployment, project_dir)
        store = open_store(uri)
        store.check()
        plan = plan_sync(report, store, live=live, pins=pins, pin_config=pin_config)
    except (ConfigError, ProjectError, TargetError, StoreError, SyncError) as error:
        raise user_error(f"{_escaped_lines(error)}\nNothing was published.") from None
    if stack is not None and deployment is not None:
        # The repository after the sync: what is published here plus what the bucket already has.
        available = {m.model for m in plan.models} | set(plan.remote_only)
        _check_declared(stack, deployment, available, project_dir, "; nothing was published.")
        _check_pins(stack, deployment, plan, project_dir)

    for model in plan.models:
        before = "unpublished" if model.served_before is None else f"serves {model.served_before}"
        change = f"{len(model.uploads)} upload(s), {model.unchanged} unchanged" if model.uploads else "up to date"
        waiting = f"; published, not live: {model.published_unserved}" if model.published_unserved else ""
        out.print(f"{model.model}: {change}; {before} -> serves {model.served_after}{waiting}")
        for upload in model.uploads:
            out.print(f"  {upload.reason:8} {printable(upload.relative)} ({upload.size} bytes)")
    for name in plan.remote_only:  # from the bucket's keys: anyone with write access chose them
        out.print(f"{printable(name)}: in the bucket but not in {printable(str(directory))}; left as it is")
    if dry_run:
        out.print(f"Dry run: {len(plan.uploads)} file(s), {plan.total_bytes} bytes would be uploaded to {uri}")
        return
    if not plan.uploads:
        out.print(f"{uri} is up to date.")
        return
    # markup=False: a file name such as "a[link=x]b.bin" is text, not a style or a terminal hyperlink
    columns = (TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    try:
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task("uploading", total=plan.total_bytes)
            published = execute(
                plan,
                store,
                progress=lambda sent: bar.advance(task, sent),
                on_file=lambda upload: bar.update(task, description=upload.relative),
            )
    except SyncError as error:
        raise user_error(_escaped_lines(error)) from None
    except KeyboardInterrupt:
        err.print("interrupted: models whose config.pbtxt was not uploaded are unchanged for Triton; run again to resume")
        raise typer.Exit(130) from None
    out.print(f"Published {', '.join(published)} to {uri} (Triton: --model-repository={uri})")


def _pins(stack: str | None, deployment: str | None, project_dir: Path | None) -> tuple[dict[str, int], str | None]:
    """A deployment's modelVersions and the name of the custom configuration that serves them (none without both)."""
    from tritonfleet.core.rollout import pinned_config_name

    if stack is None or deployment is None:
        return {}, None
    _, found = stack_deployment(stack, deployment, project_dir)
    return dict(found.model_versions), pinned_config_name(found)


def _check_pins(stack: str, deployment: str, plan: Any, project_dir: Path | None) -> None:
    """Exit 1 before any upload when the deployment pins a version the bucket will not hold after this sync."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.stack import unheld_pins

    config, found = stack_deployment(stack, deployment, project_dir)
    held = {m.model: m.held_after for m in plan.models}
    problems = unheld_pins(config, found, held, plan.remote_only, stack)
    if problems:
        raise user_error(printable("\n".join(problems)) + "\nNothing was published.")


def _model_control(
    action: str, model: str, stack: str, deployment: str, replica: list[str] | None, project_dir, timeout: float
) -> None:
    from components.k8s.access import ADMIN, control_port
    from tritonfleet.core.config.problems import both_ways, printable, rm_command, set_command
    from tritonfleet.core.conventions import triton_release_name
    from tritonfleet.core.model_names import MODEL_NAME_RULE, is_model_name
    from tritonfleet.models.control import ControlError, fan_out, kubectl_replicas

    if not is_model_name(model):
        raise user_error(f"'{printable(model)}' is not a model name: {MODEL_NAME_RULE}")
    config, found = stack_deployment(stack, deployment, project_dir)
    at = f"tritonDeployments[{config.triton_deployments.index(found)}]"
    if action == "unload" and model in found.required_models:
        j = found.required_models.index(model)
        raise user_error(
            f"'{model}' is in {at}.requiredModels: every replica's readiness needs it, so unloading it takes every "
            f"replica out of service at once. Fix: take it out of requiredModels first "
            f"({both_ways(rm_command(f'{at}.requiredModels[{j}]', stack))}), run pulumi up, then unload it"
        )
    if found.model_control_mode != "explicit":
        raise user_error(
            f"deployment '{deployment}' runs modelControlMode {found.model_control_mode}: Triton refuses load/unload "
            f"requests. Fix: {both_ways(set_command(f'{at}.modelControlMode', 'explicit', stack))}"
        )
    headers = {}
    if found.access.restrict_model_control:
        key = os.environ.get(ADMIN.env)
        if not key:
            raise user_error(f"set {ADMIN.env} to the deployment's admin key (Secret key '{ADMIN.secret_key}')")
        headers[ADMIN.header] = key

    def waiting(pending: list[str], elapsed: float) -> None:
        names = printable(", ".join(pending))
        err.print(f"{action} {model}: waiting for {len(pending)} replica(s) ({names}), {elapsed:.0f} of {timeout:g} s")

    try:
        if replica:
            pairs = [r.partition("=") for r in replica]
            if any(not name or not url for name, _, url in pairs):
                raise ControlError("--replica takes NAME=URL, e.g. triton-llm-0=http://127.0.0.1:8000")
            results = fan_out(action, model, {name: url for name, _, url in pairs}, headers, deadline_seconds=timeout,
                              on_wait=waiting)
        else:
            with kubectl_replicas(found.namespace, triton_release_name(found.name), control_port(found.access)) as replicas:
                results = fan_out(action, model, replicas, headers, deadline_seconds=timeout, on_wait=waiting)
    except ControlError as error:
        raise user_error(printable(str(error))) from None
    for result in results:  # replica names and their error texts come from outside: escaped
        mark = ("ok", "green") if result.ok else ("FAILED", "red")
        out.print(Text.assemble(f"{printable(result.replica)}: ", mark, f" {printable(result.detail)}"))
    failed = [printable(r.replica) for r in results if not r.ok]
    if failed:
        err.print(f"{len(failed)} of {len(results)} replica(s) did not {action} {model}: {', '.join(failed)}")
        raise typer.Exit(EXIT_USER_ERROR)
    out.print(
        f"{model}: {action}ed on all {len(results)} replica(s). Until a replica restarts: make it lasting with "
        f"tritonDeployments[].loadModels in the stack config."
    )


_REPLICA_HELP = "NAME=URL of a replica's HTTP endpoint (repeat); default: every running pod, via kubectl port-forward"
_TIMEOUT_HELP = "seconds for all replicas together; a replica that has not answered by then is reported as failed"


@app.command("pins", short_help="the model versions each deployment pins, and how a change rolls out")
def models_pins(
    stack: Annotated[str, typer.Option("--stack", "-s", help="the stack")],
    project_dir: ProjectOption = None,
) -> None:
    """Per Triton deployment: its modelVersions pins and the custom model configuration that serves them, and its
    rollout's steps (or that a change replaces every replica at once)."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.stack import pin_lines

    for line in pin_lines(load_config(stack, project_dir)):
        out.print(printable(line))


def _control_command(action: str, help_text: str) -> Callable[..., None]:
    """The `models load` and `models unload` command: the same arguments and options, `action` on every replica."""

    def command(
        model: Annotated[str, typer.Argument(help="the model name")],
        stack: Annotated[str, typer.Option("--stack", "-s", help="the stack")],
        deployment: Annotated[str, typer.Option(help="the Triton deployment (modelControlMode explicit)")],
        replica: Annotated[list[str] | None, typer.Option(help=_REPLICA_HELP)] = None,
        timeout: Annotated[float, typer.Option(min=1, max=7200, help=_TIMEOUT_HELP)] = DEADLINE_SECONDS,
        project_dir: ProjectOption = None,
    ) -> None:
        _model_control(action, model, stack, deployment, replica, project_dir, timeout)

    command.__name__ = f"models_{action}"
    command.__doc__ = help_text
    return command


app.command("load", short_help="load a model on every replica of a deployment")(
    _control_command("load", "Load (or reload) a model on EVERY replica of a deployment and report each; exit 1 if any failed.")
)
app.command("unload", short_help="unload a model from every replica of a deployment")(
    _control_command("unload", "Unload a model from EVERY replica of a deployment and report each; exit 1 if any failed.")
)
