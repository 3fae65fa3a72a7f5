"""A deployment's modelVersions pins reach Triton: `models sync` with the deployment's pins writes each pinned model's
configs/<name>.pbtxt, the chart passes --model-config-name=<name>, and the real tritonserver then serves the pinned
version while config.pbtxt (what unpinned replicas read) serves another."""

from __future__ import annotations

import shutil

from tests.local_servers import stop
from tests.test_models_sync import BUCKET, MODEL, SAMPLE, add_version
from tests.test_models_sync import aws_env as aws_env  # noqa: F401 (fixtures)
from tests.test_models_sync import s3 as s3  # noqa: F401
from tests.test_models_triton import answer, http, log_tail, wait_for
from tests.test_models_triton import triton as triton  # noqa: F401
from tests.test_rollout import vision
from tritonfleet.clouds.aws.storage import S3Store
from tritonfleet.core.object_store import RepositoryUri
from tritonfleet.core.rollout import pinned_config_name
from tritonfleet.models.sync import execute, pinned_config, plan_sync, published_config
from tritonfleet.models.validate import parse_config, validate_repository


def test_the_config_name_follows_the_pins():
    name = pinned_config_name(vision(modelVersions={"resnet50": 3}))
    assert name and name.startswith("tfpin-") and name == pinned_config_name(vision(modelVersions={"resnet50": 3}))
    assert pinned_config_name(vision(modelVersions={"resnet50": 4})) != name
    assert pinned_config_name(vision()) is None


def test_sync_writes_the_pinned_configuration_after_the_version_files(s3, tmp_path):  # noqa: F811
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE, repo)
    add_version(repo, 2)
    store = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/pins"))
    plan = plan_sync(validate_repository(repo), store, pins={MODEL: 1}, pin_config="tfpin-x")
    order = [u.relative for u in plan.uploads]
    assert order.index(f"{MODEL}/configs/tfpin-x.pbtxt") > order.index(f"{MODEL}/2/model.py")
    execute(plan, store)
    text = s3.get_object(Bucket=BUCKET, Key=f"pins/{MODEL}/configs/tfpin-x.pbtxt")["Body"].read().decode()
    assert list(parse_config(text).version_policy.specific.versions) == [1]
    again = plan_sync(validate_repository(repo), store, pins={MODEL: 1}, pin_config="tfpin-x")
    assert again.uploads == []


def test_tritonserver_serves_the_pinned_version(triton, tmp_path):  # noqa: F811
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE, repo)
    add_version(repo, 2)
    [model] = validate_repository(repo).models
    (repo / MODEL / "config.pbtxt").write_bytes(published_config(model))  # serves the latest: 2
    (repo / MODEL / "configs").mkdir()
    (repo / MODEL / "configs" / "tfpin-test.pbtxt").write_bytes(pinned_config(model, 1))
    for args, version in ((("--model-config-name=tfpin-test",), "1"), ((), "2")):
        process, url, _, log = triton.start(str(repo), *args)
        try:
            ready = wait_for(lambda u=url: http("GET", f"{u}/v2/models/{MODEL}/ready")[0] == 200, 30, process)
            assert ready, log_tail(log)
            assert answer(url)[0] == version
            other = "2" if version == "1" else "1"
            assert http("GET", f"{url}/v2/models/{MODEL}/versions/{other}/ready")[0] != 200
        finally:
            stop(process)
