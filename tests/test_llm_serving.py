"""LLM deployments get the right server: their backend's pinned image, a larger /dev/shm, TensorRT-LLM's orchestrator
mode across a replica's GPUs; the shipped prod (TensorRT-LLM) and gcp-prod (vLLM) releases render through Helm and
kubernetes-validate --strict with them."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from components.k8s.triton import llm_env
from tests.kube_validate import validate_strict
from tests.serving_helpers import by_kind, planned_values, render
from tritonfleet.core import pins
from tritonfleet.core.config import ConfigError, TritonDeployment, load_stack_config
from tritonfleet.monitoring.autoscaling import LLM_SIGNALS


def test_llm_images_are_the_backends_variants_of_the_pinned_release():
    release = pins.TRITON_IMAGE_TAG.split("-")[0]
    assert pins.TRITON_LLM_IMAGE_TAGS == {
        "tensorrtllm": f"{release}-trtllm-python-py3",
        "vllm": f"{release}-vllm-python-py3",
    }


def _deployment(backend: str, gpus: int) -> TritonDeployment:
    llm = {"backend": backend, "model": "Llama-3.1-8B", "precision": "bf16", "maxContext": 4096, "maxSequences": 8}
    return TritonDeployment.model_validate({"name": "llm", "pool": "h200", "gpusPerReplica": gpus, "llm": llm})


@pytest.mark.parametrize(
    ("backend", "gpus", "env"),
    [("tensorrtllm", 1, {}), ("tensorrtllm", 2, {"TRTLLM_ORCHESTRATOR": "1"}), ("vllm", 4, {})],
)
def test_tensorrt_llm_runs_orchestrator_mode_across_gpus(backend, gpus, env):
    assert llm_env(_deployment(backend, gpus)) == env
    assert llm_env(TritonDeployment.model_validate({"name": "cv", "pool": "l40s", "gpusPerReplica": 2})) == {}


@pytest.mark.parametrize(
    ("stack", "backend", "gpus", "env"),
    [("prod", "tensorrtllm", 2, {"TRTLLM_ORCHESTRATOR": "1"}), ("gcp-prod", "vllm", 2, {})],
)
def test_shipped_llm_releases_render_and_validate_strict(stack, backend, gpus, env):
    values = planned_values(stack, "triton-llm")
    assert values["image"]["tag"] == pins.TRITON_LLM_IMAGE_TAGS[backend]
    # /dev/shm: NCCL's size for a multi-GPU replica (tritonfleet.core.sizing.shm_gi), within the replica's memory.
    shm = values["shmSize"]
    assert int(shm.removesuffix("Gi")) >= 2 and values["gpusPerReplica"] == gpus
    objects = render(values, name="triton-llm")
    for obj in objects:
        if not obj["apiVersion"].startswith(("monitoring.coreos.com/", "argoproj.io/")):  # CRD kinds: own tests
            validate_strict(obj, pins.KUBERNETES_VERSION)
    pod = by_kind(objects)["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == f"{pins.TRITON_IMAGE_REPOSITORY}:{pins.TRITON_LLM_IMAGE_TAGS[backend]}"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == gpus
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}} in pod["volumes"]
    assert {e["name"]: e.get("value") for e in container["env"]}.items() >= env.items()
    # Ready means the engine is loaded: Triton's strict readiness (every model of the repository, the TensorRT-LLM
    # or vLLM model among them, READY), and the startup probe waits the deployment's whole model load time.
    assert container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert "--strict-readiness=true" in container["args"]
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= values["modelLoadSeconds"] == 1200
    # The HPA scales on what the layout exports of sequences and KV-cache use (targetUtilization of each), with its
    # TTFT guard last.
    metrics = [m["pods"]["metric"]["name"] for m in by_kind(objects)["HorizontalPodAutoscaler"]["spec"]["metrics"]]
    signals = LLM_SIGNALS[{"prod": "llmapi", "gcp-prod": "vllm"}[stack]]
    assert metrics[-len(signals):] == list(signals.values())


def _prod_with(**changes) -> dict:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    doc["config"]["tritonfleet:tritonDeployments"][0].update(changes)
    return doc


def _load(doc: dict):
    from tritonfleet.plan.project import engine_string

    return load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, "prod")


def test_an_llm_deployment_gets_its_backends_image_unless_it_names_one():
    assert _load(_prod_with()).triton_deployments[0].image_tag == "26.07-trtllm-python-py3"
    given = _load(_prod_with(imageTag="26.08-trtllm-python-py3"))
    assert given.triton_deployments[0].image_tag == "26.08-trtllm-python-py3"


@pytest.mark.parametrize("tag", ["26.07-py3", "26.07-vllm-python-py3"])
def test_an_image_without_the_backend_is_refused(tag):
    with pytest.raises(ConfigError) as err:
        _load(_prod_with(imageTag=tag))
    text = " ".join(str(err.value).split())
    assert f'tritonDeployments[0].imageTag = "{tag}"' in text
    assert "a tensorrtllm image tag, <YY.MM>-trtllm-python-py3 (unset: the pinned 26.07-trtllm-python-py3)" in text


def test_a_layout_for_a_vllm_deployment_is_refused():
    """llm.layout tells TensorRT-LLM's two layouts apart; vLLM has one."""
    doc = _prod_with()
    llm = doc["config"]["tritonfleet:tritonDeployments"][0]["llm"]
    llm.update(backend="vllm", layout="engine", precision="fp8")
    llm.pop("kvCachePrecision")
    with pytest.raises(ConfigError) as err:
        _load(doc)
    text = " ".join(str(err.value).split())
    assert 'tritonDeployments[0].llm.layout = "engine"' in text
    assert "unset for backend vllm (one layout: model.json); llmapi or engine are TensorRT-LLM's" in text
    assert "fix: pulumi config rm --path 'tritonfleet:tritonDeployments[0].llm.layout' --stack prod" in text
    assert _load(_prod_with(llm={**llm, "backend": "tensorrtllm"})).triton_deployments[0].llm.layout == "engine"
