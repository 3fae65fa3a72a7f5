"""The node-local model cache in the cluster (tritonDeployments[].modelCache): its config rules, the prefetch
DaemonSet and the read identity it gets, the Triton chart's claim on the node folder (rendered by the real Helm
engine, kubernetes-validate --strict), the startup budget's cached figure, and the chart's start script run by a real
bash: the node's view when it is complete for the replica, the bucket otherwise, and why in the log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, engine_config, one_line

from components.contract import identity_requests
from components.k8s.model_cache import (
    CACHE_MOUNT,
    image_reference,
    network_policy,
    prefetch_daemonset,
    service_account,
    view_key,
)
from components.k8s.triton import triton_values
from components.k8s.values import tolerates
from tests.kube_validate import CUSTOM_RESOURCE_GROUPS, validate_strict
from tests.pod_security import violations
from tests.serving_helpers import by_kind, render
from tritonfleet.core import pins
from tritonfleet.core.cloud import cloud
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import MODEL_CACHE_NAMESPACE, model_cache_identity, triton_release_name
from tritonfleet.core.scheduling import pool_facts
from tritonfleet.core.startup import CACHE_WAIT_MIN_SECONDS, budget_lines, cache_wait_seconds, startup_budget
from tritonfleet.models import node_cache
from tritonfleet.plan.document import startup_section

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/tritonfleet-model-cache"
REPOSITORY = "s3://models/llm"


def _raw(stack: str, image: str | None = IMAGE, **changes: Any) -> dict[str, str]:
    data = dict(engine_config(stack))
    deployments = json.loads(data["tritonfleet:tritonDeployments"])
    deployments[0].update({"modelCache": True, **changes})
    data["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    if image:
        cluster = json.loads(data["tritonfleet:cluster"])
        data["tritonfleet:cluster"] = json.dumps({**cluster, "modelCacheImage": image})
    return data


def _problems(stack: str, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(ConfigError) as error:
        load_stack_config(_raw(stack, **kwargs), stack)
    return {p.key: one_line(f"{p.allowed} fix: {p.fix}") for p in error.value.problems}


# ---- config rules ----


def test_a_cache_larger_than_the_nodes_nvme_is_refused_with_the_fix():
    found = _problems("dev", repositoryGi=80)
    assert list(found) == ["tritonDeployments[0].repositoryGi"]
    # g6e.xlarge: 179 GiB of instance store for 2 x 80 + 1 GiB of cache and one replica's 81 GiB fallback reservation
    assert found["tritonDeployments[0].repositoryGi"] == (
        "at most 59 with modelCache: the cache holds up to 2 copies of the repository (161 GiB) and 1 replicas per "
        "g6e.xlarge node each reserve 81 GiB for the bucket fallback, 242 GiB in all, on the node's 179 GiB of local "
        "NVMe; or set modelCache false, or give the pool a type with more NVMe fix: pulumi config set --path "
        "'tritonfleet:tritonDeployments[0].repositoryGi' 59 --stack dev"
    )
    assert load_stack_config(_raw("dev", repositoryGi=59), "dev").triton_deployments[0].model_cache


def test_a_pool_without_local_nvme_is_refused():
    found = _problems("gcp-dev", image="us-docker.pkg.dev/p/r/tritonfleet-model-cache")
    assert found["tritonDeployments[0].modelCache"].startswith(
        "false: pool 'l4' runs g2-standard-8, which has no instance store or local SSD for the node-local model cache"
    )


def test_the_prefetch_image_must_be_named():
    found = _problems("dev", image=None)
    assert "build images/model-cache/Dockerfile" in found["cluster.modelCacheImage"]
    assert found["cluster.modelCacheImage"].endswith(
        "fix: pulumi config set --path 'tritonfleet:cluster.modelCacheImage' '<registry>/tritonfleet-model-cache' --stack dev"
    )
    assert image_reference(IMAGE) == f"{IMAGE}:{pins.MODEL_CACHE_IMAGE_TAG}"
    digest = f"{IMAGE}@sha256:{'0' * 64}"
    assert image_reference(digest) == digest and image_reference("registry:5000/cache:7") == "registry:5000/cache:7"


def test_the_prefetch_reads_the_same_prefix_as_triton_under_its_own_account():
    config = load_stack_config(_raw("prod"), "prod")
    requests = {r.deployment: r for r in identity_requests(config)}
    triton, prefetch = requests["llm"], requests[model_cache_identity("llm")]
    assert (prefetch.namespace, prefetch.service_account) == (MODEL_CACHE_NAMESPACE, "model-cache-llm")
    assert (prefetch.bucket, prefetch.model_prefix, prefetch.kms_key) == (triton.bucket, triton.model_prefix, triton.kms_key)
    stock = load_stack_config(engine_config("prod"), "prod")
    assert len(identity_requests(stock)) == len(stock.triton_deployments)  # off: nothing added


# ---- the prefetch DaemonSet ----


def _cached(stack: str = "prod", **changes: Any):
    config = load_stack_config(_raw(stack, **changes), stack)
    deployment = config.triton_deployments[0]
    pool = config.pool(deployment.pool)
    return config, deployment, pool_facts(config, pool), config.instance_type(pool)


@pytest.mark.parametrize("stack", ["prod", "gcp-prod"])
def test_the_prefetch_daemonset_runs_on_every_node_of_the_pool(stack):
    config, deployment, pool, _ = _cached(stack, modelVersions={"llm": 3})
    host_path = cloud(config.cloud).model_cache_host_path
    daemonset = prefetch_daemonset(deployment, pool, REPOSITORY, host_path, image_reference(IMAGE), {"AWS_DEFAULT_REGION": "x"})
    for obj in (daemonset, service_account(deployment), network_policy()):
        validate_strict(obj, pins.KUBERNETES_VERSION)
    spec = daemonset["spec"]["template"]["spec"]
    # The pool's own scheduling target: its nodes, minNodes and the warm placeholders' nodes alike.
    assert spec["nodeSelector"] == pool.node_selector
    assert all(tolerates(spec["tolerations"], taint) for taint in pool.taints)
    [container] = spec["containers"]
    assert container["args"] == ["$(MODEL_REPOSITORY)", f"--cache={CACHE_MOUNT}", f"--publish={view_key(deployment)}",
                                 "--every=60", "--version=llm=3"]  # fmt: skip
    assert container["env"][0] == {"name": "MODEL_REPOSITORY", "value": REPOSITORY}
    assert spec["volumes"][0]["hostPath"] == {"path": f"{host_path}/{view_key(deployment)}", "type": "DirectoryOrCreate"}
    # Ready once this node's view is published and fresh: the DaemonSet's ready count is the warm nodes.
    assert f"{CACHE_MOUNT}/views/{view_key(deployment)}/current/COMPLETE" in container["readinessProbe"]["exec"]["command"][-1]
    # Pod Security: the hostPath needs privileged, and it is the only thing baseline refuses.
    assert violations(spec, "baseline") == ["volume cache: hostPath"] and violations(spec, "privileged") == []
    # The command's own parser takes what the DaemonSet passes.
    assert node_cache._pinned([a.removeprefix("--version=") for a in container["args"] if a.startswith("--version=")]) == {"llm": 3}


def test_each_cloud_names_an_absolute_folder_of_the_caches_own():
    for name in ("aws", "gcp"):
        path = cloud(name).model_cache_host_path
        assert path.startswith("/") and path.endswith("/tritonfleet-model-cache")


# ---- the Triton chart ----


def _chart_values(stack: str = "prod", **changes: Any) -> tuple[dict[str, Any], str]:
    config, deployment, pool, itype = _cached(stack, **changes)
    values = triton_values(deployment, pool, itype, REPOSITORY.rsplit("/", 1)[0], {}, {}, True, None,
                           cloud(config.cloud).model_cache_host_path)  # fmt: skip
    return values, triton_release_name(deployment.name)


def test_values_name_the_view_the_models_and_the_wait():
    values, _ = _chart_values(requiredModels=["llm", "embed"], modelVersions={"llm": 2})
    cache = values["modelCache"]
    assert (cache["view"], cache["models"], cache["mountPath"]) == ("triton.triton-llm", ["llm:2", "embed"], CACHE_MOUNT)
    assert CACHE_MOUNT and CACHE_WAIT_MIN_SECONDS <= cache["waitSeconds"] <= values["modelLoadSeconds"] // 2
    stock = load_stack_config(engine_config("prod"), "prod")
    deployment = stock.triton_deployments[0]
    pool = stock.pool(deployment.pool)
    assert "modelCache" not in triton_values(deployment, pool_facts(stock, pool), stock.instance_type(pool), "s3://m", {}, {}, True)
    assert cache_wait_seconds(deployment.model_copy(update={"model_load_seconds": 100}), stock.instance_type(pool)) == 50


def test_the_chart_mounts_the_node_folder_through_a_claim_under_restricted():
    values, name = _chart_values()
    objects = by_kind(render(values, name=name, namespace="triton"))
    for obj in render(values, name=name, namespace="triton"):
        if not obj["apiVersion"].startswith(CUSTOM_RESOURCE_GROUPS):
            validate_strict(obj, pins.KUBERNETES_VERSION)
    volume, claim = objects["PersistentVolume"], objects["PersistentVolumeClaim"]
    assert volume["spec"]["claimRef"] == {"namespace": "triton", "name": claim["metadata"]["name"]}
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"] and claim["spec"]["storageClassName"] == ""
    # The deployment's own subfolder, the one its prefetch DaemonSet fills.
    config, deployment, pool, _ = _cached()
    daemonset = prefetch_daemonset(deployment, pool, REPOSITORY, values["modelCache"]["hostPath"], "i", {})
    assert volume["spec"]["hostPath"]["path"] == daemonset["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["path"]
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    [term] = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert {e["key"]: e["values"] for e in term["matchExpressions"]} == {k: [v] for k, v in values["nodeSelector"].items()}
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    assert violations(pod, "restricted") == [] and not any("hostPath" in v for v in pod["volumes"])
    triton = pod["containers"][0]
    assert triton["command"][:2] == ["bash", "/opt/tritonfleet/model-cache/model_cache_start.sh"]
    mount = next(m for m in triton["volumeMounts"] if m["name"] == "model-cache")
    assert mount == {"name": "model-cache", "mountPath": CACHE_MOUNT, "readOnly": True}
    env = {e["name"]: e["value"] for e in triton["env"]}
    assert env["MODEL_CACHE_VIEW"] == f"{CACHE_MOUNT}/views/triton.triton-llm"
    assert env["MODEL_CACHE_REPOSITORY"] == values["modelRepository"]


def test_the_start_script_wraps_the_restricted_api_command_too():
    values, name = _chart_values()
    values["restrictedApis"] = {"secretName": "keys", "groups": [
        {"apis": ["model-repository"], "header": "admin-key", "env": "TRITON_ADMIN_KEY", "secretKey": "admin"}]}
    triton = by_kind(render(values, name=name))["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert triton["command"][:4] == ["bash", "/opt/tritonfleet/model-cache/model_cache_start.sh", "bash", "-c"]
    off = by_kind(render({"modelRepository": REPOSITORY}))
    assert off["Deployment"]["spec"]["template"]["spec"]["containers"][0]["command"] == ["tritonserver"]
    assert "PersistentVolume" not in off


def test_the_start_script_wraps_the_openai_frontend_launcher_too():
    """The launcher takes --model-repository like tritonserver, so the script serves it the node's view the same way."""
    values, name = _chart_values()
    values["openaiFrontend"] = {"enabled": True, "port": 9000, "backend": "vllm", "tokenizer": ""}
    values["ingress"] = {**values.get("ingress", {}), "enabled": False}
    triton = by_kind(render(values, name=name))["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert triton["command"] == [
        "bash", "/opt/tritonfleet/model-cache/model_cache_start.sh", "python3", "/opt/tritonfleet-openai/openai_frontend.py"
    ]
    assert f"--model-repository={values['modelRepository']}" in triton["args"]
    assert {m["name"] for m in triton["volumeMounts"]} >= {"model-cache", "model-cache-start", "openai-frontend"}


def test_the_chart_refuses_a_cache_without_its_folder():
    with pytest.raises(Exception, match="modelCache.enabled needs modelCache.hostPath"):
        render({"modelRepository": REPOSITORY, "modelCache": {"enabled": True}})


# ---- the start script, run by bash ----


@pytest.fixture(scope="module")
def start_script(tmp_path_factory) -> Path:
    values, name = _chart_values()
    script = tmp_path_factory.mktemp("script") / "model_cache_start.sh"
    [start] = [o for o in render(values, name=name) if o["metadata"]["name"] == f"{name}-model-cache-start"]
    script.write_text(start["data"]["model_cache_start.sh"])
    return script


def _view(cache: Path, key: str = "k", repository: str = REPOSITORY, versions: tuple[str, ...] = ("1",)) -> Path:
    """A published view as node_cache writes it: views/<key>/v-1 with COMPLETE, and `current` linking to it."""
    view = cache / "views" / key / "v-1"
    for version in versions:
        (view / "llm" / version).mkdir(parents=True, exist_ok=True)
    (view / "llm" / "config.pbtxt").write_text("")
    (view / node_cache.COMPLETE).write_text(f"{repository}\n")
    (cache / "views" / key / node_cache.CURRENT).symlink_to("v-1")
    return view


def _start(script: Path, cache: Path, models: str = "llm", wait: int = 0, stale: int = 300, command: tuple = ()) -> tuple[list[str], str]:
    env = {**os.environ, "MODEL_CACHE_VIEW": str(cache / "views" / "k"), "MODEL_CACHE_REPOSITORY": REPOSITORY,
           "MODEL_CACHE_MODELS": models, "MODEL_CACHE_WAIT_SECONDS": str(wait), "MODEL_CACHE_STALE_SECONDS": str(stale),
           "MODEL_CACHE_POLL_SECONDS": "0.1", "MODEL_CACHE_STATUS": str(cache / "choice")}  # fmt: skip
    command = command or ("printf", "%s\\n")
    done = subprocess.run(["bash", str(script), *command, f"--model-repository={REPOSITORY}", "--strict-readiness=true"],
                          env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), done.stderr


def test_a_complete_view_serves_the_replica(start_script, tmp_path):
    _view(tmp_path, versions=("1", "2"))
    args, log = _start(start_script, tmp_path, models="llm:2")
    assert args == [f"--model-repository={tmp_path}/views/k/current", "--strict-readiness=true"]
    assert "model cache: HIT" in log and (tmp_path / "choice").read_text() == "hit\n"


@pytest.mark.parametrize(
    ("prepare", "models", "reason"),
    [
        (lambda cache: None, "llm", "no complete view at"),
        (lambda cache: (_view(cache) / node_cache.COMPLETE).unlink(), "llm", "no complete view at"),
        (lambda cache: _view(cache, repository="s3://other/llm"), "llm", "the view mirrors s3://other/llm, not s3://models/llm"),
        (lambda cache: _view(cache), "llm:2", "model llm has no version 2 in the view"),
        (lambda cache: _view(cache), "embed", "model embed is not in the view"),
        (lambda cache: os.utime(_view(cache) / node_cache.COMPLETE, (0, 0)), "llm", "the view was last checked"),
    ],
    ids=["absent", "partial", "other-bucket", "missing-version", "missing-model", "stale"],
)
def test_anything_short_of_a_complete_fresh_view_reads_the_bucket(start_script, tmp_path, prepare, models, reason):
    prepare(tmp_path)
    args, log = _start(start_script, tmp_path, models=models)
    assert args == [f"--model-repository={REPOSITORY}", "--strict-readiness=true"]
    assert f"model cache: MISS, Triton reads the bucket {REPOSITORY}: {reason}" in log
    assert (tmp_path / "choice").read_text().startswith(f"miss {reason}")


def test_a_fill_in_progress_is_waited_for_and_a_dead_one_is_not(start_script, tmp_path):
    filling = tmp_path / "views" / "k" / node_cache.FILLING
    filling.parent.mkdir(parents=True)
    filling.touch()
    threading.Timer(0.5, _view, args=(tmp_path,)).start()  # the node's fill completes while the replica waits
    args, log = _start(start_script, tmp_path, wait=20)
    assert args[0] == f"--model-repository={tmp_path}/views/k/current"
    assert "waiting for this node's fill to finish" in log and "model cache: HIT" in log
    other = tmp_path / "dead"
    (other / "views" / "k").mkdir(parents=True)
    (other / "views" / "k" / node_cache.FILLING).touch()
    os.utime(other / "views" / "k" / node_cache.FILLING, (time.time() - 600, time.time() - 600))
    args, log = _start(start_script, other, wait=20)
    assert args[0] == f"--model-repository={REPOSITORY}" and "waiting" not in log


def test_the_rewrite_reaches_a_command_run_through_bash_c(start_script, tmp_path):
    _view(tmp_path)
    args, _ = _start(start_script, tmp_path, command=("bash", "-c", 'printf "%s\\n" "$@"', "tritonserver"))
    assert args[0] == f"--model-repository={tmp_path}/views/k/current"


def test_the_model_state_exporter_reports_the_choice_as_a_metric(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("model_state", ROOT / "charts/triton-inference-server/files/model_state.py")
    model_state = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model_state)
    monkeypatch.setattr(model_state, "repository_index", lambda: [])
    assert "model_cache_hit" not in model_state.exposition()  # no cache (the chart sets no file)
    monkeypatch.setattr(model_state, "CACHE_FILE", str(tmp_path / "choice"))
    assert "model_cache_hit" not in model_state.exposition()  # the start has not chosen yet
    (tmp_path / "choice").write_text('miss the view mirrors s3://"x", not s3://y\n')
    assert 'tritonfleet_triton_model_cache_hit{reason="the view mirrors s3://\\"x\\", not s3://y"} 0\n' in model_state.exposition()
    (tmp_path / "choice").write_text("hit\n")
    assert 'tritonfleet_triton_model_cache_hit{reason=""} 1\n' in model_state.exposition()


def test_the_script_reads_the_files_node_cache_writes():
    text = (ROOT / "charts/triton-inference-server/files/model_cache_start.sh").read_text()
    assert f'"$current/{node_cache.COMPLETE}"' in text and f'"$MODEL_CACHE_VIEW/{node_cache.FILLING}"' in text
    assert f'"$MODEL_CACHE_VIEW/{node_cache.CURRENT}"' in text or 'current="$MODEL_CACHE_VIEW/current"' in text
    fresh = int(re.search(r"FILL_FRESH_SECONDS=(\d+)", text).group(1))
    assert fresh >= 2 * node_cache.HEARTBEAT_SECONDS


# ---- the startup budget ----


def test_the_spike_check_counts_the_cache_and_the_plan_says_so():
    config = load_stack_config(_raw("prod", startup={"spikeRampSeconds": 600, "measured": {"nodeSeconds": 90}}), "prod")
    deployment = config.triton_deployments[0]
    budget = startup_budget(config, deployment)
    spike = next(c for c in budget.checks if c.against.startswith("spike"))
    fetch, pull = budget.step("model fetch").seconds, budget.step("image pull").seconds
    assert spike.against == "spike ramp (maxReplicas serving, model cache)"
    assert spike.needs_seconds == budget.hpa_seconds_to_max + budget.totals["model cache"] + max(0, fetch - pull)
    row = next(r for r in startup_section(config)["deployments"] if r["deployment"] == deployment.name)
    assert row["modelCache"] is True and "  model cache on: a node it pre-warmed skips the model fetch; a new node" in budget_lines(row)
    stock = load_stack_config(engine_config("prod"), "prod")
    assert all("modelCache" not in r for r in startup_section(stock)["deployments"])


# ---- the image ----


def test_the_image_installs_what_node_cache_imports():
    dockerfile = (ROOT / "images/model-cache/Dockerfile").read_text()
    assert f"ARG BASE={pins.MODEL_CACHE_BASE_IMAGE}\n" in dockerfile
    probe = (
        "import sys, importlib.metadata as m\n"
        "before = set(sys.modules)\n"
        "import tritonfleet.models.node_cache, tritonfleet.models.sync\n"
        "import tritonfleet.clouds.aws.storage, tritonfleet.clouds.gcp.storage\n"
        "dists, found, files = m.packages_distributions(), set(), {}\n"
        "for name in set(sys.modules) - before:\n"
        "    where = getattr(sys.modules[name], '__file__', None) or ''\n"
        "    for d in dists.get(name.split('.')[0], []):\n"
        "        if d not in files:\n"
        "            dist = m.distribution(d)\n"
        "            files[d] = (str(dist.locate_file('')) + '/', {str(f) for f in dist.files or []})\n"
        "        if where.removeprefix(files[d][0]) in files[d][1]:\n"
        "            found.add(d)\n"
        "print(sorted(found - {'tritonfleet'}))\n"
    )
    needed = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                                       cwd=ROOT).stdout.replace("'", '"'))  # fmt: skip
    installed = re.search(r"-c constraints.txt \\\n(.*?)\\\n", dockerfile, re.S).group(1).split()
    # Each distribution node_cache needs is installed by name or required by one that is.
    reachable = {re.sub(r"\[.*", "", n.strip('"')).lower().replace("_", "-") for n in installed}
    while more := {d for n in reachable for d in _deps(n)} - reachable:
        reachable |= more
    missing = {d.lower().replace("_", "-") for d in needed} - reachable
    assert not missing, f"images/model-cache/Dockerfile does not install {sorted(missing)}"


def _deps(name: str) -> set[str]:
    """The distributions `name` requires (with tritonclient's http extra, which the Dockerfile asks for)."""
    import importlib.metadata as metadata

    try:
        requires = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return set()
    return {re.split(r"[ ;<>=!\[(~]", r)[0].lower().replace("_", "-") for r in requires
            if "extra ==" not in r or 'extra == "http"' in r}  # fmt: skip


def test_a_deployment_named_like_a_prefetch_identity_is_refused():
    data = _raw("dev")
    deployments = json.loads(data["tritonfleet:tritonDeployments"])
    deployments.append({**deployments[0], "name": "resnet-model-cache", "modelCache": False})
    data["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    with pytest.raises(ConfigError) as error:
        load_stack_config(data, "dev")
    [problem] = [p for p in error.value.problems if p.key == "tritonDeployments[1].name"]
    assert "whose prefetch identity takes this one" in problem.allowed


def test_a_short_spike_ramp_suggests_the_model_cache_where_it_is_off():
    from tritonfleet.core.startup import startup_warnings

    def spike_warning(**changes: Any) -> str:
        data = dict(engine_config("prod"))
        deployments = json.loads(data["tritonfleet:tritonDeployments"])
        deployments[0].update(startup={"spikeRampSeconds": 30}, **changes)
        data["tritonfleet:tritonDeployments"] = json.dumps(deployments)
        if changes:
            data["tritonfleet:cluster"] = json.dumps({**json.loads(data["tritonfleet:cluster"]), "modelCacheImage": IMAGE})
        config = load_stack_config(data, "prod")
        return next(w for w in startup_warnings(config) if "spike ramp" in w)

    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].modelCache' true" in spike_warning()
    cached = spike_warning(modelCache=True)
    assert "spike ramp (maxReplicas serving, model cache)" in cached and "modelCache' true" not in cached


# ---- the alert on nodes whose cache stays cold ----


def test_nodes_without_a_warm_cache_alert_after_half_an_hour_and_only_then(tmp_path):
    """promtool over the cached stack's own rules: a prefetch that stays unready fires, a first fill that ends within
    the window and a warm DaemonSet stay silent; a stack without the cache has no such alert."""
    from tests.monitoring_support import firing, run, series, silent, tool, write_rules
    from tritonfleet.monitoring import rules

    config = load_stack_config(_raw("prod"), "prod")
    write_rules(rules.rule_groups(config), tmp_path)
    daemonset = {"namespace": MODEL_CACHE_NAMESPACE, "daemonset": "model-cache-llm"}

    def case(ready: str) -> list[dict[str, str]]:
        return [series("kube_daemonset_status_desired_number_scheduled", daemonset, "3x60"),
                series("kube_daemonset_status_number_ready", daemonset, ready)]  # fmt: skip

    alert = "ModelCacheNodesCold"
    tests = [
        {"interval": "1m", "input_series": case("1x60"),
         "promql_expr_test": [firing(alert, {**daemonset, "severity": "warning"}, "35m")],
         "alert_rule_test": [silent(alert, "25m")]},
        {"interval": "1m", "input_series": case("1x20 3x40"), "alert_rule_test": [silent(alert, "35m")]},
        {"interval": "1m", "input_series": case("3x60"), "alert_rule_test": [silent(alert, "35m")]},
    ]
    unit = tmp_path / "cache-alert.yaml"
    unit.write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}))
    result = run(tool("promtool"), "test", "rules", str(unit))
    assert result.returncode == 0, result.stdout + result.stderr
    stock = load_stack_config(engine_config("prod"), "prod")
    assert alert not in {r["alert"] for r in rules.alert_rules(stock)}
