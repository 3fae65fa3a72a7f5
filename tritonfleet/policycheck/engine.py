"""Drive the real policy pack over gRPC, as the Pulumi CLI does during `pulumi preview --policy-pack`.

Start the pack with the language host's command (`python -u -m pulumi.policy ADDRESS PACK_DIR`), read the port it
prints, call GetAnalyzerInfo, Configure (the reconciled stack policy config), Analyze for every resource and
AnalyzeStack for the whole plan, then stop the process by its pid.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from tritonfleet.policycheck import pack_config
from tritonfleet.policycheck.verdicts import LEVEL_NAMES, LEVEL_NUMBERS, PREVIEW_PREFIX, SEVERITY_NAMES, Verdict, ordered
from tritonfleet.policycheck.wire import PlanResource, plan_resources

START_TIMEOUT_S = 60
CALL_TIMEOUT_S = 60


class PackError(Exception):
    """The pack process did not start or answer."""


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


class PackProcess:
    """The pack as a child process serving the Analyzer service on 127.0.0.1."""

    def __init__(self, pack_dir: Path, project: str, stack: str):
        env = {**os.environ, "PULUMI_PROJECT": project, "PULUMI_STACK": stack, "PULUMI_DRY_RUN": "true"}
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack_dir)],
            cwd=pack_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.channel: grpc.Channel | None = None
        try:
            port = self._read_port()
            self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT_S)
        except BaseException:
            self.close()
            raise
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)

    def _read_port(self) -> int:
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        text = line[0].strip() if line else ""
        if not text.isdigit():
            self.process.kill()
            _, stderr = self.process.communicate(timeout=10)
            raise PackError(f"the policy pack did not start (printed {text!r}):\n{stderr.strip()[-4000:]}")
        return int(text)

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()

    def __enter__(self) -> PackProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _described(resource: PlanResource, by_urn: dict[str, PlanResource]) -> dict[str, Any]:
    """What an AnalyzeRequest and an AnalyzerResource both say of a resource."""
    return {
        "type": resource.type,
        "properties": _struct(resource.props),
        "urn": resource.urn,
        "name": resource.name,
        "options": _options(resource),
        "provider": _provider(resource, by_urn),
    }


def _options(resource: PlanResource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=resource.protect,
        ignoreChanges=list(resource.ignore_changes),
        deleteBeforeReplace=resource.delete_before_replace,
        deleteBeforeReplaceDefined=resource.delete_before_replace,
        parent=resource.parent,
    )


def _provider(resource: PlanResource, by_urn: dict[str, PlanResource]) -> analyzer_pb2.AnalyzerProviderResource | None:
    provider = by_urn.get(resource.provider_urn)
    if provider is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, properties=_struct(provider.props), urn=provider.urn, name=provider.name
    )


def _verdict(diagnostic: analyzer_pb2.AnalyzeDiagnostic, urn: str) -> Verdict:
    message = diagnostic.message
    prefix = diagnostic.description + "\n"
    if message.startswith(prefix):
        message = message[len(prefix) :]
    elif " during preview: " in message:
        message = PREVIEW_PREFIX + message.split(" during preview: ", 1)[1]
    return Verdict(
        policy=diagnostic.policyName,
        enforcement=LEVEL_NAMES[diagnostic.enforcementLevel],
        severity=SEVERITY_NAMES.get(diagnostic.severity, ""),
        urn=diagnostic.urn or urn,
        message=message,
    )


def pack_policies(info: analyzer_pb2.AnalyzerInfo) -> list[pack_config.PolicyMeta]:
    return [
        pack_config.PolicyMeta(
            name=p.name,
            enforcement=LEVEL_NAMES[p.enforcementLevel],
            schema_properties=json_format.MessageToDict(p.configSchema.properties),
            required=tuple(p.configSchema.required),
        )
        for p in info.policies
    ]


def analyze(
    pack: PackProcess, plan: dict[str, Any], config: dict[str, Any], config_source: str = "policy config"
) -> list[Verdict]:
    """Configure a running pack for the plan's stack and collect its verdicts on every resource and on the stack."""
    resources = plan_resources(plan)
    by_urn = {r.urn: r for r in resources}
    info = pack.stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=CALL_TIMEOUT_S)
    configured = pack_config.reconcile(pack_policies(info), config, config_source)
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, entry in configured.items():
        request.policyConfig[name].CopyFrom(
            analyzer_pb2.PolicyConfig(enforcementLevel=LEVEL_NUMBERS[entry.enforcement], properties=_struct(entry.properties))
        )
    pack.stub.Configure(request, timeout=CALL_TIMEOUT_S)
    verdicts: list[Verdict] = []
    for resource in resources:
        response = pack.stub.Analyze(analyzer_pb2.AnalyzeRequest(**_described(resource, by_urn)), timeout=CALL_TIMEOUT_S)
        verdicts.extend(_verdict(d, resource.urn) for d in response.diagnostics)
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(**_described(r, by_urn), parent=r.parent, dependencies=list(r.dependencies))
            for r in resources
        ]
    )
    response = pack.stub.AnalyzeStack(stack, timeout=CALL_TIMEOUT_S)
    verdicts.extend(_verdict(d, "") for d in response.diagnostics)
    return ordered(verdicts)


def run_pack(pack_dir: Path, plan: dict[str, Any], config: dict[str, Any], config_source: str = "policy config") -> list[Verdict]:
    """Start the pack, analyze the plan under the stack's policy config, stop the pack."""
    with PackProcess(pack_dir, plan["project"], plan["stack"]) as pack:
        return analyze(pack, plan, config, config_source)
