"""Run the real `__main__.py` under the Pulumi SDK's mock runtime and record every resource it registers.

This reproduces what the Python language host does (config as strings, `runpy` of the program) with a
recording resource monitor in place of the engine. It guards against the mock runtime's traps: duplicate URNs
are reported (the mocks overwrite silently), resource references are sent as plain URNs, nested ignore_changes
paths are kept verbatim, the root stack and program modules are reset between runs, and the run fails if the
program logs an error.
"""

from __future__ import annotations

import logging
import os
import runpy
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import resource_pb2, source_pb2

from tritonfleet.plan.fake_state import absent_call, fake_call, fake_outputs

SECRET_SIG = "4dabf18193072939515e22adb298388d"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


class PlanError(Exception):
    """The program could not be planned (bad config, duplicate names, a program error)."""


@dataclass
class Recorded:
    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    provider: str
    inputs: dict[str, Any]
    protect: bool
    ignore_changes: list[str]
    depends_on: list[str]
    retain_on_delete: bool
    delete_before_replace: bool
    version: str

    def document(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "custom": self.custom,
            "parent": self.parent,
            "provider": self.provider,
            "inputs": self.inputs,
            "protect": self.protect,
            "ignoreChanges": sorted(self.ignore_changes),
            "dependsOn": sorted(self.depends_on),
            "retainOnDelete": self.retain_on_delete,
            "deleteBeforeReplace": self.delete_before_replace,
            "version": self.version,
        }

    @classmethod
    def from_document(cls, resource: dict[str, Any]) -> Recorded:
        """The record back from a plan document's resource (the inverse of `document`)."""
        return cls(
            urn=resource["urn"],
            type=resource["type"],
            name=resource["name"],
            custom=resource["custom"],
            parent=resource["parent"],
            provider=resource["provider"],
            inputs=resource["inputs"],
            protect=resource["protect"],
            ignore_changes=resource["ignoreChanges"],
            depends_on=resource["dependsOn"],
            retain_on_delete=resource["retainOnDelete"],
            delete_before_replace=resource["deleteBeforeReplace"],
            version=resource["version"],
        )


def clean(value: Any) -> Any:
    """Wire-form property values made stable: secrets hidden, unknowns named, integral floats as ints."""
    if isinstance(value, dict):
        if value.get(SECRET_SIG) == "1b47061264138c4ac30d75fd1eb44270":
            return "[secret]"
        return {k: clean(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == UNKNOWN:
        return "<unknown>"
    return value


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", fake_outputs(args.typ, args.name, dict(args.inputs))

    def call(self, args: pulumi.runtime.MockCallArgs):
        absent = absent_call(args.token)
        if absent is not None:  # a failed data source, as the provider reports it (the program may catch it)
            return {}, [("name", absent)]
        answer = fake_call(args.token)
        if answer is None:
            raise PlanError(f"the program called {args.token}, which the offline plan does not answer")
        return answer


class RecordingMonitor(mocks.MockMonitor):
    """A mock monitor that keeps every registration request, and the duplicate URNs the base class overwrites."""

    def __init__(self, mock: pulumi.runtime.Mocks):
        super().__init__(mock)
        self.records: dict[str, Recorded] = {}
        self.duplicates: list[str] = []

    def SupportsFeature(self, request):
        # Resource references arrive as plain URN/ID strings (avoids the event-loop trap T5).
        supported = request.id not in ("outputValues", "resourceReferences")
        return type("SupportsFeatureResponse", (object,), {"hasSupport": supported})

    def GetDeploymentInfo(self, request):
        info = super().GetDeploymentInfo(request)
        features = [f for f in info.supportedFeatures if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type != "pulumi:pulumi:Stack":
            if urn in self.records:
                self.duplicates.append(urn)
            self.records[urn] = Recorded(
                urn=urn,
                type=request.type,
                name=request.name,
                custom=request.custom,
                parent=request.parent,
                provider=request.provider.rsplit("::", 1)[0] if request.provider else "",
                inputs=clean(json_format.MessageToDict(request.object)),
                protect=request.protect,
                ignore_changes=list(request.ignoreChanges),
                depends_on=sorted(set(request.dependencies)),
                retain_on_delete=request.retainOnDelete,
                delete_before_replace=request.deleteBeforeReplace,
                version=request.version,
            )
        return super().RegisterResource(request)


class _ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@dataclass
class ProgramRun:
    resources: list[Recorded]
    outputs: dict[str, Any]
    modules: list[str] = field(default_factory=list)  # top-level modules loaded after the run


def _purge_program_modules(project_dir: Path) -> None:
    """Forget the program's own modules so a second run in this process registers resources again (T9).

    Only the project's top-level packages and modules are purged (e.g. `components`), never `__main__`, the
    core, or anything installed in a virtualenv inside the project folder.
    """
    own = {p.stem for p in project_dir.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    own -= {"__main__", "tritonfleet"}
    for name in list(sys.modules):
        if name.split(".")[0] in own:
            del sys.modules[name]


@contextmanager
def _no_source_positions() -> Iterator[None]:
    """Skip the SDK's per-registration walk of the Python stack (a source position and stack trace for the engine's
    diagnostics, about half the SDK's time per resource): the recording monitor records neither."""
    walk = sdk_resource._get_stack_trace
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = walk


def run_program(project_dir: Path, project: str, stack: str, config: dict[str, str], secret_keys: list[str]) -> ProgramRun:
    """Run `<project_dir>/__main__.py` for one stack under mocks; raise PlanError on any failure."""
    project_dir = project_dir.resolve()
    _purge_program_modules(project_dir)
    if str(project_dir) not in sys.path:
        sys.path.insert(0, str(project_dir))
    logger = logging.getLogger(f"tritonfleet.plan.{stack}")
    logger.propagate = False
    errors = _ErrorLog()
    logger.handlers = [errors]

    settings.ROOT.set(None)
    pulumi.runtime.set_all_config(config, secret_keys)
    monitor = RecordingMonitor(_Mocks())
    pulumi.runtime.set_mocks(monitor.mocks, project=project, stack=stack, preview=False, monitor=monitor, logger=logger)
    outputs: dict[str, Any] = {}
    failure: list[BaseException] = []
    cwd = os.getcwd()

    @pulumi.runtime.test
    async def _run():
        try:
            runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")
        except BaseException as exc:  # noqa: BLE001 - reported below as a PlanError
            failure.append(exc)
            return
        root = pulumi.runtime.get_root_resource()
        for key, value in sorted(root.outputs.items()):
            out = pulumi.Output.from_input(value)
            known = await out.is_known()
            secret = await out.is_secret()
            outputs[key] = "[secret]" if secret else (clean(await out.future()) if known else "<unknown>")

    try:
        os.chdir(project_dir)
        with _no_source_positions():
            _run()
    except PlanError:
        raise
    except Exception as exc:  # noqa: BLE001
        failure.append(exc)
    finally:
        os.chdir(cwd)
        settings.ROOT.set(None)

    if failure:
        exc = failure[0]
        if isinstance(exc, PlanError):
            raise exc
        if isinstance(exc, pulumi.RunError):
            raise PlanError(str(exc)) from None
        if isinstance(exc, SystemExit):
            raise PlanError(f"the program exited with {exc.code}") from None
        raise PlanError(f"the program failed: {type(exc).__name__}: {exc}") from exc
    if monitor.duplicates:
        names = "\n".join(f"  - {urn}" for urn in sorted(set(monitor.duplicates)))
        raise PlanError(f"duplicate resource URNs (the real engine refuses these):\n{names}")
    if errors.messages:
        raise PlanError("the program logged errors:\n" + "\n".join(f"  - {m}" for m in errors.messages))
    return ProgramRun(resources=sorted(monitor.records.values(), key=lambda r: r.urn), outputs=outputs)
