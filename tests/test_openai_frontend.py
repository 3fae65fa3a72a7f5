"""Triton's OpenAI-compatible frontend (docs/serving.md "The OpenAI-compatible frontend"): the chart runs it through
files/openai_frontend.py behind the inference key, with /v1 as the Service's only port, KServe on the pod's loopback,
metrics on 8002 and probes that pass once the engine is built; the config refuses what it cannot serve. The launcher
is exercised against stand-ins with the signatures of the pinned release's modules (tag v2.71.0): the real ones need
the vLLM image and a GPU (VERIFY)."""

from __future__ import annotations

import importlib.util
import signal
import sys
import types

import helm_python
import pytest

from components.k8s.triton import CHART_DIR
from tests.conftest import one_line
from tests.kube_validate import validate_strict
from tests.serving_helpers import by_kind, planned_values, render
from tritonfleet.core import pins

INFERENCE_GROUP = {"apis": ["inference"], "header": "inference-key", "env": "TRITON_INFERENCE_KEY",
                   "secretKey": "inference-key"}  # fmt: skip
OPENAI = {"enabled": True, "port": 9000, "backend": "vllm", "tokenizer": "/models/llama/tokenizer"}


def _openai_values(**changes) -> dict:
    """gcp-prod's vLLM release with the frontend on (its plan's values; the ingress off, which the frontend excludes)."""
    values = planned_values("gcp-prod", "triton-llm")
    values = {**values, "openaiFrontend": OPENAI, "ingress": {**values.get("ingress", {}), "enabled": False},
              "gateway": {**values.get("gateway", {}), "enabled": False}}  # fmt: skip
    groups = [*values["restrictedApis"]["groups"], INFERENCE_GROUP]
    return {**values, "restrictedApis": {**values["restrictedApis"], "groups": groups}, **changes}


def test_the_frontend_release_renders_validates_and_serves_only_v1():
    values = _openai_values(requiredModels=[])
    objects = render(values, name="triton-llm")
    for obj in objects:
        if not obj["apiVersion"].startswith(("monitoring.coreos.com/", "argoproj.io/")):
            validate_strict(obj, pins.KUBERNETES_VERSION)
    kinds = by_kind(objects)
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"] == ["python3", "/opt/tritonfleet-openai/openai_frontend.py"]
    args = container["args"]
    assert f"--exit-timeout-secs={values['shutdown']['exitTimeoutSeconds']}" in args
    assert "--strict-readiness=true" in args and "--backend=vllm" in args
    assert "--tokenizer=/models/llama/tokenizer" in args
    # The inference key by its env var's name only: the launcher reads it; the Deployment never holds it.
    assert "--restricted-api=inference,model-repository:inference-key:TRITON_INFERENCE_KEY" in args
    assert not any(a.startswith(("--http-restricted-api", "--grpc-restricted-protocol")) for a in args)
    assert {"name": "PYTHONPATH", "value": "/opt/tritonserver/python/openai/openai_frontend"} in container["env"]
    assert {p["name"]: p["containerPort"] for p in container["ports"]}["openai"] == 9000
    # Ready once the engine is built: the OpenAI port opens only then; alive while it accepts.
    assert container["readinessProbe"]["httpGet"] == {"path": "/health/ready", "port": "openai"}
    assert container["startupProbe"]["httpGet"] == {"path": "/health/ready", "port": "openai"}
    assert container["livenessProbe"]["tcpSocket"] == {"port": "openai"}
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    assert [p["name"] for p in services["triton-llm"]["spec"]["ports"]] == ["openai"]
    assert [p["name"] for p in services["triton-llm-metrics"]["spec"]["ports"]] == ["metrics"]
    assert kinds["NetworkPolicy"]["spec"]["ingress"][0]["ports"] == [{"port": "openai", "protocol": "TCP"}]
    launcher = next(o for o in objects if o["metadata"]["name"] == "triton-llm-openai-frontend")
    assert launcher["data"]["openai_frontend.py"] == (CHART_DIR / "files" / "openai_frontend.py").read_text()
    mounted = {v["name"]: v for v in pod["volumes"]}["openai-frontend"]["configMap"]["name"]
    assert mounted == "triton-llm-openai-frontend"


def test_with_required_models_ready_means_each_of_them_and_the_engine():
    container = by_kind(render(_openai_values(requiredModels=["llama"]), name="triton-llm"))["Deployment"]
    container = container["spec"]["template"]["spec"]["containers"][0]
    assert "--required-model=llama" in container["args"] and "--strict-readiness=false" in container["args"]
    # The KServe port the check asks answers only once the engine is built (the launcher starts it then).
    assert "/dev/tcp/127.0.0.1/8000" in container["readinessProbe"]["exec"]["command"][2]


def test_without_the_frontend_the_release_is_unchanged():
    values = planned_values("gcp-prod", "triton-llm")
    assert "openaiFrontend" not in values
    container = by_kind(render(values, name="triton-llm"))["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][0] == "bash" and "9000" not in str(container["ports"])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"modelControlMode": "poll", "loadModels": []}, "modelControlMode poll"),
        ({"scaleToZero": {"enabled": True}}, "ingress, gateway or scaleToZero"),
        ({"tuningArgs": ["--rate-limit=execution_count"]}, "modelConfigName, tuningArgs or extraArgs"),
    ],
)
def test_the_chart_refuses_what_the_frontend_cannot_serve(changes, message):
    values = _openai_values(**changes)
    if "scaleToZero" in changes:
        values["scaleToZero"] = {**planned_values("gcp-prod", "triton-llm").get("scaleToZero", {}), "enabled": True}
    with pytest.raises(helm_python.HelmError, match=f"openaiFrontend.enabled excludes {message}"):
        render(values, name="triton-llm")


@pytest.mark.parametrize("port", [8000, 8002, 80])
def test_the_frontend_port_is_its_own(port):
    with pytest.raises(helm_python.HelmValuesError):
        render(_openai_values(openaiFrontend={**OPENAI, "port": port}), name="triton-llm")


# The launcher, against stand-ins of the image's modules.


def _launcher():
    spec = importlib.util.spec_from_file_location("openai_launcher", CHART_DIR / "files" / "openai_frontend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Recorder:
    calls: list = []

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        _Recorder.calls.append((type(self).__name__, "init", args, kwargs))

    def start(self):
        _Recorder.calls.append((type(self).__name__, "start"))

    def stop(self):
        _Recorder.calls.append((type(self).__name__, "stop"))


def _stand_ins(monkeypatch, ready_after: int = 2):
    """tritonserver, tritonfrontend, uvicorn and the frontend's engine/frontend modules, recording what is called."""
    _Recorder.calls = []
    polls = {"n": 0}

    class Server(_Recorder):
        def ready(self):
            polls["n"] += 1
            return polls["n"] >= ready_after

        def model(self, name):
            return types.SimpleNamespace(ready=lambda: True)

    def options(**fields):
        return fields

    tritonserver = types.SimpleNamespace(
        Server=Server, Options=options,
        ModelControlMode=types.SimpleNamespace(NONE="NONE", EXPLICIT="EXPLICIT"),
        LogFormat=types.SimpleNamespace(DEFAULT="DEFAULT", ISO8601="ISO8601"),
    )  # fmt: skip

    class Frontend(_Recorder):
        Options = staticmethod(lambda **kw: kw)

    frontends = {name: type(name, (Frontend,), {}) for name in ("KServeHttp", "KServeGrpc", "Metrics")}

    def parse_lora(repository, name, version, backend):
        raise ValueError(f"Invalid model name: '{name}'")  # upstream's answer for an s3:// path since 2026-03

    class TritonLLMEngine(_Recorder):
        def __init__(self, server, tokenizer, default_max_tokens, backend=None, **rest):
            super().__init__(server=server, tokenizer=tokenizer, backend=backend)
            self.lora = engine._parse_lora_configs("s3://bucket/llm", "llama", 1, "vllm")

    engine = types.SimpleNamespace(TritonLLMEngine=TritonLLMEngine, _parse_lora_configs=parse_lora)

    def route(path):
        return types.SimpleNamespace(path=path)

    upstream_routes = ["/metrics", "/health/ready", "/v1/models", "/v1/models/{model_name}",
                       "/v1/models/{model_name}/load", "/v1/models/{model_name}/unload", "/v1/completions",
                       "/v1/chat/completions", "/v1/embeddings", "/docs"]  # fmt: skip

    class FastApiFrontend(_Recorder):
        def __init__(self, engine, host, port, log_level="info", restricted_apis=None, http_max_input_size=1 << 26):
            super().__init__(restricted_apis=restricted_apis)
            self.app = types.SimpleNamespace(router=types.SimpleNamespace(routes=[route(p) for p in upstream_routes]))

    class UvicornServer(_Recorder):
        def run(self):
            _Recorder.calls.append(("uvicorn", "run", sorted(r.path for r in self.args[0]["app"].router.routes)))

    modules = {
        "tritonserver": tritonserver,
        "tritonfrontend": types.SimpleNamespace(**frontends),
        "uvicorn": types.SimpleNamespace(Config=lambda **kw: kw, Server=UvicornServer),
        "engine": types.SimpleNamespace(triton_engine=engine),
        "engine.triton_engine": engine,
        "frontend": types.SimpleNamespace(),
        "frontend.fastapi_frontend": types.SimpleNamespace(FastApiFrontend=FastApiFrontend),
    }
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(_launcher_module(), "time", types.SimpleNamespace(sleep=lambda s: None))
    monkeypatch.setattr(signal, "signal", lambda *a: None)


_LAUNCHER = []


def _launcher_module():
    if not _LAUNCHER:
        _LAUNCHER.append(_launcher())
    return _LAUNCHER[0]


ARGS = ["--model-repository=s3://bucket/llm", "--model-control-mode=explicit", "--load-model=llama",
        "--strict-readiness=true", "--exit-timeout-secs=25", "--log-format=ISO8601",
        "--metrics-config=histogram_latencies=true", "--backend=vllm", "--tokenizer=/models/tok",
        "--restricted-api=inference,model-repository:inference-key:TRITON_INFERENCE_KEY"]  # fmt: skip


def test_the_launcher_builds_upstreams_parts_in_order_and_drains(monkeypatch):
    launcher = _launcher_module()
    _stand_ins(monkeypatch)
    monkeypatch.setenv("TRITON_INFERENCE_KEY", "k" * 48)
    assert launcher.main(ARGS) == 0
    import os

    assert "TRITON_INFERENCE_KEY" not in os.environ  # model code started by Triton does not inherit the key
    calls = [c[:2] if c[1] != "run" else c for c in _Recorder.calls]
    options = _Recorder.calls[0][2][0]
    assert options["exit_timeout"] == 25 and options["strict_readiness"] is True and options["exit_on_error"] is False
    assert options["startup_models"] == ["llama"] and options["model_control_mode"] == "EXPLICIT"
    assert options["metrics_configuration"] == {"": {"histogram_latencies": "true"}}
    assert options["log_format"] == "ISO8601"
    order = [c[0] + "." + c[1] for c in calls]
    assert order == [
        "Server.init", "Server.start", "Metrics.init", "Metrics.start", "TritonLLMEngine.init",
        "KServeHttp.init", "KServeHttp.start", "KServeGrpc.init", "KServeGrpc.start", "FastApiFrontend.init",
        "UvicornServer.init", "uvicorn.run", "KServeGrpc.stop", "KServeHttp.stop", "Metrics.stop", "Server.stop",
    ]  # fmt: skip
    inits = {c[0]: c[3] for c in _Recorder.calls if c[1] == "init"}
    assert inits["KServeHttp"] == {} and _Recorder.calls[5][2][1] == {"address": "127.0.0.1", "port": 8000}
    assert _Recorder.calls[2][2][1] == {"address": "0.0.0.0", "port": 8002}
    assert inits["FastApiFrontend"]["restricted_apis"] == [("inference,model-repository", "inference-key", "k" * 48)]
    assert inits["TritonLLMEngine"]["tokenizer"] == "/models/tok"
    config = next(c for c in _Recorder.calls if c[0] == "UvicornServer")[2][0]
    assert (config["host"], config["port"], config["timeout_graceful_shutdown"]) == ("0.0.0.0", 9000, 25)
    served = next(c for c in _Recorder.calls if c[1] == "run")[2]
    assert served == ["/health/ready", "/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models",
                      "/v1/models/{model_name}"]  # fmt: skip


def test_the_launcher_refuses_a_group_whose_key_is_missing(monkeypatch):
    launcher = _launcher_module()
    _stand_ins(monkeypatch)
    monkeypatch.delenv("TRITON_INFERENCE_KEY", raising=False)
    with pytest.raises(SystemExit, match=r"restricted group inference,model-repository: no key in \$TRITON_INFERENCE_KEY"):
        launcher.main(ARGS)
    assert _Recorder.calls == []  # nothing started


def test_lora_lookup_stays_upstreams_for_a_local_repository():
    launcher = _launcher_module()
    seen = []
    engine = types.SimpleNamespace(_parse_lora_configs=lambda repo, *rest: seen.append(repo) or ["lora"])
    launcher.keep_lora_parsing_local(engine)
    assert engine._parse_lora_configs("gs://bucket/llm", "m", 1, "vllm") is None
    assert engine._parse_lora_configs("/tmp/repo", "m", 1, "vllm") == ["lora"] and seen == ["/tmp/repo"]


def test_bad_launcher_arguments_are_refused_before_anything_starts(capsys):
    launcher = _launcher_module()
    with pytest.raises(SystemExit):
        launcher.parse_args(["--model-repository=s3://b/m", "--model-control-mode=poll"])
    assert "invalid choice: 'poll'" in one_line(capsys.readouterr().err)


# The config: llm.openaiFrontend where it can serve, refused with the key, what is allowed and the fix elsewhere.


def _gcp_prod(llm: dict | None = None, **changes):
    import yaml

    from tests.conftest import ROOT
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.plan.project import engine_string

    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.gcp-prod.yaml").read_text())
    deployment = doc["config"]["tritonfleet:tritonDeployments"][0]
    deployment["llm"] = {**deployment["llm"], **(llm or {})}
    deployment.update(changes)
    return load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, "gcp-prod")


def test_an_llm_deployment_asks_for_the_frontend_and_gets_it():
    from components.k8s.triton import openai_frontend_values

    config = _gcp_prod({"openaiFrontend": True, "tokenizer": "/models/qwen/tokenizer"})
    llm = config.triton_deployments[0]
    assert openai_frontend_values(llm) == {
        "openaiFrontend": {"enabled": True, "backend": "vllm", "tokenizer": "/models/qwen/tokenizer"}
    }
    assert openai_frontend_values(config.triton_deployments[1]) == {}  # not an LLM: unchanged values
    assert openai_frontend_values(_gcp_prod().triton_deployments[0]) == {}


@pytest.mark.parametrize(
    ("llm", "changes", "reason"),
    [
        ({"backend": "tensorrtllm"}, {"imageTag": "26.07-trtllm-python-py3"}, "backend tensorrtllm (its 26.07 image"),
        ({}, {"modelControlMode": "poll"}, "modelControlMode poll (the frontend serves the models loaded at its start"),
        ({}, {"access": {"exposure": "internal", "loadBalancer": "application", "hostname": "llm.example.com",
                         "tls": {"preSharedCert": "llm"}}}, "access mode internal-application"),  # fmt: skip
        ({}, {"modelVersions": {"qwen": 2}}, "modelVersions (the in-process server takes no --model-config-name)"),
        ({}, {"tuning": {"rateLimit": "execution_count"}}, "tuning rateLimit (tritonserver flags"),
    ],
)
def test_the_frontend_is_refused_where_it_cannot_serve(llm, changes, reason):
    from tritonfleet.core.config import ConfigError

    with pytest.raises(ConfigError) as err:
        _gcp_prod({"openaiFrontend": True, **llm}, **changes)
    text = one_line(str(err.value))
    assert "tritonfleet:tritonDeployments[0].llm.openaiFrontend = true allowed: false with " in text
    assert reason in text
    assert "fix: pulumi config set --path 'tritonfleet:tritonDeployments[0].llm.openaiFrontend' false" in text


def test_a_tokenizer_without_the_frontend_is_refused():
    from tritonfleet.core.config import ConfigError

    with pytest.raises(ConfigError) as err:
        _gcp_prod({"tokenizer": "/models/qwen/tokenizer"})
    text = one_line(str(err.value))
    assert 'tritonDeployments[0].llm.tokenizer = "/models/qwen/tokenizer" allowed: a tokenizer only with ' in text
    assert "pulumi config rm --path 'tritonfleet:tritonDeployments[0].llm.tokenizer'" in text
