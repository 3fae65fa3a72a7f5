"""The stack config schema: the shipped stacks load, and bad configs fail with one clear message through the CLI."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, STACKS, one_line, run_cli

from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.config import ConfigError, load_stack_config


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_validate(stack, stack_config):
    config = stack_config(stack)
    assert config.stack == stack
    for pool in config.enabled_pools:
        split = split_capacity(pool)
        assert sum(r.min for r in split.purchase.values()) == pool.min_nodes
        assert sum(r.max for r in split.purchase.values()) == pool.max_nodes


def test_environments_are_realistic(stack_config):
    dev, prod = stack_config("dev"), stack_config("prod")
    assert all(set(split_capacity(p).purchase) == {"spot"} for p in dev.enabled_pools)
    assert {p.gpu for p in dev.enabled_pools} == {"L40S"}
    h200 = prod.pool("h200")
    assert split_capacity(h200).purchase["on-demand"].min >= 1 and "spot" in split_capacity(h200).purchase
    b200 = prod.pool("b200")
    assert b200.gpu == "B200" and not b200.enabled
    assert stack_config("gcp-prod").cloud == "gcp"
    budgets = {s: stack_config(s).budget.monthly_usd for s in STACKS}
    assert len(set(budgets.values())) == len(budgets)


def _dev() -> dict:
    return yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())


def _load(doc: dict):
    """The stack config of a stack document, validated as the engine would hand it over."""
    from tritonfleet.plan.project import engine_string

    return load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, "dev")


def _set(doc: dict, key: str, value) -> None:
    doc["config"][f"tritonfleet:{key}"] = value


def _pool(doc: dict, **changes) -> None:
    doc["config"]["tritonfleet:gpuPools"][0].update(changes)


def _deployment(doc: dict, **changes) -> None:
    doc["config"]["tritonfleet:tritonDeployments"][0].update(changes)


def _drop(doc: dict, key: str) -> None:
    del doc["config"][f"tritonfleet:{key}"]


# (case id, mutation, key the message must name, text the message must contain)
BAD_CONFIGS = [
    ("unknown-gpu", lambda d: _pool(d, gpu="A100", instanceType=None), "gpuPools[0].gpu", "L40S"),
    (
        "gpu-not-on-cloud",
        lambda d: (
            _set(d, "cloud", "gcp"),
            _set(d, "gcpProject", "acme-ml-dev"),
            _set(d, "region", "us-central1"),
            _set(d, "cluster", {}),
            _pool(d, instanceType=None),
        ),
        "gpuPools[0].gpu",
        "nearest alternatives: L4",
    ),
    ("type-without-that-gpu", lambda d: _pool(d, instanceType="g6.xlarge"), "gpuPools[0].instanceType", "carries L4"),
    ("type-not-in-catalog", lambda d: _pool(d, instanceType="m5.large"), "gpuPools[0].instanceType", "g6e.xlarge"),
    ("min-above-max", lambda d: _pool(d, minNodes=3, maxNodes=2), "gpuPools[0].minNodes", "<= maxNodes"),
    ("base-above-max", lambda d: _pool(d, onDemandBase=5, spotShare=0.5), "gpuPools[0].maxNodes", ">= onDemandBase"),
    ("spot-share-above-1", lambda d: _pool(d, spotShare=1.5), "gpuPools[0].spotShare", "0..1"),
    ("spot-share-negative", lambda d: _pool(d, spotShare=-0.1), "gpuPools[0].spotShare", "0..1"),
    ("negative-budget", lambda d: _set(d, "budget", {"monthlyUsd": -5}), "budget.monthlyUsd", ">= 0"),
    ("deployment-on-missing-pool", lambda d: _deployment(d, pool="h100"), "tritonDeployments[0].pool", "l40s"),
    ("replica-larger-than-node", lambda d: _deployment(d, gpusPerReplica=2), "tritonDeployments[0].gpusPerReplica", "at most 1"),
    ("missing-required-key", lambda d: _drop(d, "gpuLimit"), "gpuLimit", "(missing)"),
    ("wrong-type", lambda d: _set(d, "gpuLimit", "lots"), "gpuLimit", "integer"),
    ("unknown-top-level-key", lambda d: _set(d, "gpuCeiling", 4), "gpuCeiling", "pulumi config rm"),
    ("unknown-nested-key", lambda d: _pool(d, minNode=1), "gpuPools[0].minNode", "pulumi config rm"),
    ("bad-environment", lambda d: _set(d, "environment", "qa"), "environment", "dev, staging or prod"),
    ("bad-cloud", lambda d: _set(d, "cloud", "azure"), "cloud", "aws or gcp"),
    (
        "spot-on-capacity-block-only-type",
        lambda d: _pool(d, gpu="H200", instanceType="p5e.48xlarge"),
        "gpuPools[0].spotShare",
        "capacity-block",
    ),
    (
        "capacity-block-without-id",
        lambda d: _pool(d, gpu="B200", instanceType="p6-b200.48xlarge", capacity="capacity-block", spotShare=0),
        "gpuPools[0].reservationId",
        "capacity-block",
    ),
    ("flex-start-on-aws", lambda d: _pool(d, capacity="flex-start", spotShare=0), "gpuPools[0].capacity", "GCP purchase option"),
    # Keys the pool's purchase option does not use are refused (with a `pulumi config rm` fix), never ignored.
    ("reservation-on-mixed-pool", lambda d: _pool(d, reservationId="cr-0123"), "gpuPools[0].reservationId", "config rm"),
    (
        "on-demand-base-on-capacity-block",
        lambda d: _pool(
            d,
            gpu="B200",
            instanceType="p6-b200.48xlarge",
            capacity="capacity-block",
            spotShare=0,
            reservationId="cr-1",
            onDemandBase=1,
        ),
        "gpuPools[0].onDemandBase",
        "config rm",
    ),
    (
        "gcp-without-project",
        lambda d: (
            _set(d, "cloud", "gcp"),
            _set(d, "region", "us-central1"),
            _set(d, "cluster", {}),
            _pool(d, gpu="L4", instanceType="g2-standard-8"),
        ),
        "gcpProject",
        "required when cloud is gcp",
    ),
    (
        "zone-of-another-region",
        lambda d: _set(d, "cluster", {"zones": ["us-west-2a", "us-east-1b"]}),
        "cluster.zones[0]",
        "a zone of us-east-1",
    ),
    (
        "duplicate-pool-names",
        lambda d: d["config"]["tritonfleet:gpuPools"].append(copy.deepcopy(d["config"]["tritonfleet:gpuPools"][0])),
        "gpuPools[1].name",
        "not used by another pool",
    ),
    (
        "replicas-min-above-max",
        lambda d: _deployment(d, minReplicas=3, maxReplicas=2),
        "tritonDeployments[0].maxReplicas",
        ">= minReplicas",
    ),
    ("deployment-on-missing-bucket", lambda d: _deployment(d, bucket="weights"), "tritonDeployments[0].bucket", "models"),
    ("small-disk", lambda d: _pool(d, diskGi=20), "gpuPools[0].diskGi", "at least 100"),
    ("bad-pool-name", lambda d: _pool(d, name="L40S_Pool"), "gpuPools[0].name", "lower-case"),
    ("bad-image-tag", lambda d: _deployment(d, imageTag="latest"), "tritonDeployments[0].imageTag", "pinned NGC tag"),
    ("no-pools", lambda d: (_set(d, "gpuPools", []), _set(d, "tritonDeployments", [])), "gpuPools", "list of GPU pools"),
    (
        "bad-bucket-name",
        lambda d: d["config"]["tritonfleet:modelBuckets"][0].update(bucketName="Acme_Models"),
        "modelBuckets[0].bucketName",
        "valid on S3 and GCS",
    ),
    ("bad-budget-basis", lambda d: _set(d, "budget", {"monthlyUsd": 10, "basis": "average"}), "budget.basis", "floor"),
    # Serving under faults: model lists that cannot work, a repository the node disk cannot hold, a useless budget.
    (
        "load-models-outside-explicit",
        lambda d: _deployment(d, loadModels=["resnet"]),
        "tritonDeployments[0].loadModels",
        "explicit",
    ),
    (
        "required-model-never-loaded",
        lambda d: _deployment(d, modelControlMode="explicit", loadModels=["resnet"], requiredModels=["resnet", "bert"]),
        "tritonDeployments[0].requiredModels[1]",
        "a model in loadModels (resnet)",
    ),
    (
        "bad-model-name",
        lambda d: _deployment(d, requiredModels=["a b"]),
        "tritonDeployments[0].requiredModels[0]",
        "string should match",
    ),
    (
        "repository-larger-than-nvme",
        lambda d: _deployment(d, repositoryGi=500),
        "tritonDeployments[0].repositoryGi",
        "at most 178: 1 replicas per g6e.xlarge node",
    ),
    ("budget-of-zero", lambda d: _deployment(d, maxUnavailable=0), "tritonDeployments[0].maxUnavailable", ">= 1"),
    (
        "budget-stops-every-replica",
        lambda d: _deployment(d, minReplicas=2, maxReplicas=4, maxUnavailable=2),
        "tritonDeployments[0].maxUnavailable",
        "below minReplicas (2)",
    ),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    return tmp_path


@pytest.mark.parametrize("case,mutate,key,expected", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_fails_with_a_clear_message(project, case, mutate, key, expected):
    doc = _dev()
    mutate(doc)
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(project))
    message = one_line(result.stderr)  # messages are wrapped to the terminal's 80 columns
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in message + result.stdout
    assert f"tritonfleet:{key} = " in message
    assert one_line(expected) in message
    assert "allowed:" in message
    assert f"'tritonfleet:{key}" in message and "--stack dev" in message  # the fix names the key and the stack


def test_all_problems_are_reported_at_once():
    doc = _dev()
    _pool(doc, spotShare=2, minNodes=5, maxNodes=1, gpu="H300")
    _set(doc, "environment", "qa")
    _set(doc, "budget", {"monthlyUsd": -1})
    with pytest.raises(ConfigError) as caught:
        _load(doc)
    keys = {p.key for p in caught.value.problems}
    assert {"gpuPools[0].spotShare", "gpuPools[0].gpu", "gpuPools[0].minNodes", "environment", "budget.monthlyUsd"} <= keys
    assert f"{len(caught.value.problems)} configuration problems" in str(caught.value)


def test_every_list_refuses_a_name_used_twice_with_one_rule():
    doc = _dev()
    config = doc["config"]
    config["tritonfleet:tritonDeployments"].append(copy.deepcopy(config["tritonfleet:tritonDeployments"][0]))
    receiver = {"name": "ops", "kind": "webhook", "url": "https://hooks.example/a"}
    config["tritonfleet:monitoring"] = {**config.get("tritonfleet:monitoring", {}), "alertReceivers": [receiver, receiver]}
    with pytest.raises(ConfigError) as caught:
        _load(doc)
    found = {p.key: p for p in caught.value.problems}
    name = config["tritonfleet:tritonDeployments"][0]["name"]
    assert found["tritonDeployments[1].name"].allowed == "a deployment name not used by another deployment"
    assert f"tritonDeployments[1].name' {name}-2" in found["tritonDeployments[1].name"].fix
    assert found["monitoring.alertReceivers[1].name"].allowed == "a receiver name not used by another receiver"


@pytest.mark.parametrize(
    ("edit", "key", "allowed", "fix"),
    [
        (lambda d: _pool(d, gpu=7), "gpuPools[0].gpu", "a GPU offered on aws, spelt as here: B200, H100, H200, L4, L40S", "'<B200|H100|H200|L4|L40S>'"),
        (lambda d: _pool(d, instanceType=[1]), "gpuPools[0].instanceType", "an instance type on aws that carries L40S: g6e.xlarge,", "g6e.xlarge"),
        (lambda d: _deployment(d, pool={"a": 1}), "tritonDeployments[0].pool", "one of the stack's GPU pools: l40s", "l40s"),
    ],
    ids=["gpu", "instance-type", "deployment-pool"],
)
def test_a_value_that_is_not_text_where_a_name_is_due_gets_the_choices(edit, key, allowed, fix):
    """The schema alone could only say "input should be a valid string" and leave the fix a placeholder."""
    doc = _dev()
    edit(doc)
    with pytest.raises(ConfigError) as caught:
        _load(doc)
    [problem] = [p for p in caught.value.problems if p.key == key]
    assert allowed in problem.allowed and problem.fix.endswith(f"'tritonfleet:{key}' {fix} --stack dev")


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), "1e400"], ids=["inf", "-inf", "nan", "1e400"])
def test_numbers_that_are_not_finite_are_problems(value):
    """YAML's .inf and .nan (and 1e400, which a float parse makes infinite) once passed `> 0` and crashed the sizing."""
    doc = _dev()
    _deployment(doc, throughputPerReplica=value, targetLoad={"peak": value, "average": 1, "unit": "requests/s"})
    _pool(doc, spotShare=value)
    _set(doc, "budget", {"monthlyUsd": value})
    with pytest.raises(ConfigError) as caught:
        _load(doc)
    finite = {p.key for p in caught.value.problems if "finite number" in p.allowed}
    keys = {"tritonDeployments[0].throughputPerReplica", "tritonDeployments[0].targetLoad.peak", "gpuPools[0].spotShare", "budget.monthlyUsd"}
    assert finite == keys


def test_a_config_error_survives_pickling_as_it_was():
    """Tests plan in a forked child and get its ConfigError back pickled: the same report, an absent key still absent."""
    import pickle

    from tritonfleet.core.config.problems import MISSING, Problem

    error = ConfigError("dev", [Problem("gcpProject", MISSING, "a project id", "my-project-id"), Problem("x", "[/y]", "z", "w")])
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.stack, again.problems) == (ConfigError, str(error), "dev", error.problems)
    assert again.problems[0].value is MISSING and "= (missing)" in str(again)


@pytest.mark.parametrize("key", ["monitoring", "tags", "cluster"])
def test_a_section_given_as_plain_text_is_a_problem_not_a_traceback(key):
    """Sections with a default object (monitoring, tags, cluster) once crashed the report when given a string."""
    doc = _dev()
    _set(doc, key, "oops")
    with pytest.raises(ConfigError) as caught:
        _load(doc)
    problem = next(p for p in caught.value.problems if p.key == key)
    assert problem.value == "oops"
    assert problem.fix == f"pulumi config set 'tritonfleet:{key}' '<value>' --stack dev"


def test_missing_stack_file_is_a_user_error():
    result = run_cli("plan", "--stack", "nope")
    assert result.returncode == 1
    assert "no stack 'nope'" in result.stderr and "Traceback" not in result.stderr


def test_secure_values_stay_secret_placeholders(project):
    doc = _dev()
    doc["config"]["tritonfleet:tags"] = {"team": "ml", "cost-center": {"secure": "v1:AAAAbase64"}}
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    from tritonfleet.plan.project import SECRET_PLACEHOLDER, load_project, stack_config

    raw, secret_keys = stack_config(load_project(project), "dev")
    assert secret_keys == ["tritonfleet:tags"]
    assert "v1:AAAAbase64" not in raw["tritonfleet:tags"] and SECRET_PLACEHOLDER in raw["tritonfleet:tags"]


def _gcp_dev() -> dict:
    return yaml.safe_load((ROOT / "stacks" / "Pulumi.gcp-dev.yaml").read_text())


def _rename_pool_key(doc: dict, old: str, new: str) -> None:
    pool = doc["config"]["tritonfleet:gpuPools"][0]
    pool[new] = pool.pop(old)


# Fixes that give the value the user meant or the nearest valid one, never an arbitrary first choice.
# (case id, stack, mutation, the one problem's key, text the report must contain, texts it must not contain)
MEANT_FIXES = [
    (
        "misspelt-key",
        "dev",
        lambda d: _rename_pool_key(d, "maxNodes", "maxNode"),
        "gpuPools[0].maxNode",
        "did you mean maxNodes?",
        ["maxNodes = (missing)", "no valid pools"],
    ),
    (
        "misspelt-key-with-fix",
        "dev",
        lambda d: _rename_pool_key(d, "maxNodes", "maxnodes"),
        "gpuPools[0].maxnodes",
        "'tritonfleet:gpuPools[0].maxnodes' --stack dev && pulumi config set --path 'tritonfleet:gpuPools[0].maxNodes' 2 --stack dev",
        [],
    ),
    (
        "misspelt-top-level-key",
        "dev",
        lambda d: d["config"].__setitem__("tritonfleet:gpuLimt", d["config"].pop("tritonfleet:gpuLimit")),
        "gpuLimt",
        "no such key at the top level; did you mean gpuLimit?",
        ["gpuLimit = (missing)"],
    ),
    (
        "gpu-lower-case",
        "dev",
        lambda d: _pool(d, gpu="l40s"),
        "gpuPools[0].gpu",
        "'tritonfleet:gpuPools[0].gpu' L40S --stack",
        ["B200 --stack"],
    ),
    ("gpu-misspelt", "dev", lambda d: _pool(d, gpu="L40X"), "gpuPools[0].gpu", "did you mean L40S?", ["B200 --stack"]),
    ("spot-share-above-1", "dev", lambda d: _pool(d, spotShare=1.5), "gpuPools[0].spotShare", "spotShare' 1.0 --stack", ["0.0"]),
    ("disk-below-minimum", "dev", lambda d: _pool(d, diskGi=20), "gpuPools[0].diskGi", "diskGi' 100 --stack", []),
    (
        "environment-case",
        "dev",
        lambda d: _set(d, "environment", "Prod"),
        "environment",
        "'tritonfleet:environment' prod --stack",
        [],
    ),
    (
        "environment-unknown",
        "dev",
        lambda d: _set(d, "environment", "qa"),
        "environment",
        "'<dev|staging|prod>'",
        ["environment' dev"],
    ),
    (
        "pool-name-pattern",
        "dev",
        lambda d: _pool(d, name="L40S_Pool"),
        "gpuPools[0].name",
        "name' l40s-pool --stack",
        ["<value>"],
    ),
    (
        "deployment-pool-misspelt",
        "dev",
        lambda d: _deployment(d, pool="l40"),
        "tritonDeployments[0].pool",
        "pool' l40s --stack",
        [],
    ),
    (
        "deployment-bucket-misspelt",
        "dev",
        lambda d: _deployment(d, bucket="model"),
        "tritonDeployments[0].bucket",
        "bucket' models --stack",
        [],
    ),
    (
        "gcp-region-on-aws",
        "dev",
        lambda d: _set(d, "region", "us-central1"),
        "region",
        "us-central1 is a GCP region, not an AWS one; one of the AWS regions: ",
        ["us-central1a", "eu-central-1 --stack"],
    ),
    (
        "gcp-spelling-on-aws",
        "dev",
        lambda d: _set(d, "region", "us-east1"),
        "region",
        "'tritonfleet:region' us-east-1 --stack",
        [],
    ),
    (
        "aws-region-on-gcp",
        "gcp-dev",
        lambda d: _set(d, "region", "us-east-1"),
        "region",
        "'tritonfleet:region' us-east1 --stack",
        ["cluster.zones"],
    ),
    (
        "region-gcp-lacks",
        "gcp-dev",
        lambda d: _set(d, "region", "us-central9"),
        "region",
        "one of the GCP regions: ",
        ["cluster.zones"],
    ),
    # A key an earlier version read: the way forward, never its old value moved into a key of another meaning.
    (
        "retired-existing-vpc-cidr",
        "dev",
        lambda d: d["config"]["tritonfleet:cluster"].__setitem__("existingVpcCidr", "10.20.0.0/16"),
        "cluster.existingVpcCidr",
        "replaced by cluster.existingLoadBalancerCidrs",
        ["did you mean", "existingVpcId' 10.20.0.0/16"],
    ),
    # A pool that fails is reported once; the deployment on it is not a second problem.
    (
        "no-valid-pools",
        "dev",
        lambda d: _pool(d, gpu=5),
        "gpuPools[0].gpu",
        "'<B200|H100|H200|L4|L40S>'",
        ["no valid pools", "tritonDeployments"],
    ),
]


@pytest.mark.parametrize("case,stack,mutate,key,expected,absent", MEANT_FIXES, ids=[c[0] for c in MEANT_FIXES])
def test_fix_gives_the_value_meant(project, case, stack, mutate, key, expected, absent):
    doc = _gcp_dev() if stack == "gcp-dev" else _dev()
    mutate(doc)
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(doc))
    result = run_cli("plan", "--stack", stack, "--project-dir", str(project))
    message = one_line(result.stderr)  # messages are wrapped to the terminal's 80 columns
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"has 1 configuration problem: 1. tritonfleet:{key} = " in message, message
    assert one_line(expected) in message, message
    for text in absent:
        assert one_line(text) not in message, message


# Values no one should write, each a clean problem with exit 1.
UGLY = [
    ("brackets-in-pool-name", lambda d: _pool(d, name="a[b]{c}"), "gpuPools[0].name"),
    ("quotes", lambda d: _deployment(d, name='it\'s "quoted"'), "tritonDeployments[0].name"),
    ("unicode", lambda d: _pool(d, gpu="Л40S"), "gpuPools[0].gpu"),
    ("invisible-character", lambda d: _set(d, "region", "us-east-1\u200b"), "region"),
    ("very-long-value", lambda d: _pool(d, gpu="x" * 5000), "gpuPools[0].gpu"),
    ("list-where-text", lambda d: _pool(d, gpu=["L40S"]), "gpuPools[0].gpu"),
    ("number-where-text", lambda d: _deployment(d, pool=7), "tritonDeployments[0].pool"),
    ("object-where-text", lambda d: _set(d, "region", {"name": "us-east-1"}), "region"),
    ("null-where-text", lambda d: _pool(d, name=None), "gpuPools[0].name"),
    ("json-looking-text", lambda d: _set(d, "region", "[us-east-1"), "region"),
    ("text-where-number", lambda d: _pool(d, maxNodes="two"), "gpuPools[0].maxNodes"),
    ("bool-where-list", lambda d: _set(d, "gpuPools", True), "gpuPools"),
    ("rich-closing-tag", lambda d: _pool(d, name="[/x]"), "gpuPools[0].name"),
]


@pytest.mark.parametrize("case,mutate,key", UGLY, ids=[c[0] for c in UGLY])
def test_ugly_values_are_clean_problems(project, case, mutate, key):
    doc = _dev()
    mutate(doc)
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(project))
    message = result.stderr
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in message + result.stdout and "configuration problem" in message, message
    if key is not None:
        assert f"tritonfleet:{key} = " in one_line(message), message
    assert all(len(line) < 1200 for line in message.splitlines()), "a 5,000-character value is shown cut"
    assert "\u200b" not in message
