"""The control proxy's code (charts/triton-inference-server/files/control_proxy.py) as a module: which paths it
forwards. Model-control routes pass; inference, health of the server and anything not a plain path do not. The live
behaviour (keys, forwarding, 401/403/404) is proven in tests/test_control_proxy_live.py."""

from __future__ import annotations

import importlib.util

import pytest

from components.k8s.triton import CHART_DIR


@pytest.fixture(scope="module")
def proxy(monkeypatch_module):
    monkeypatch_module.setenv("CONTROL_PROXY_HEADER", "admin-key")
    monkeypatch_module.setenv("CONTROL_PROXY_KEY", "k")
    spec = importlib.util.spec_from_file_location("control_proxy", CHART_DIR / "files" / "control_proxy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


FORWARDED = [
    "/v2/repository/index",
    "/v2/repository/models/resnet-50.v2/load",
    "/v2/repository/models/resnet/unload",
    "/v2/models/resnet/ready",
    "/v2/models/resnet/versions/3/ready",
    "/v2/models/resnet/config",
    "/v2/systemsharedmemory/status",
    "/v2/cudasharedmemory/region/r0/register",
    "/v2/trace/setting",
    "/v2/models/resnet/trace/setting",
    "/v2/logging",
]
REFUSED = [
    "/v2/models/resnet/infer",
    "/v2/models/resnet/versions/1/infer",
    "/v2/models/resnet/generate",
    "/v2/models/resnet/generate_stream",
    "/v2/models/resnet",
    "/v2/models/resnet/stats",
    "/v2/health/ready",
    "/v2",
    "/v2/repository/models/resnet/load/extra",
    "/v2/repository/models/a/b/load",
    "http://elsewhere.example.com/v2/repository/index",
    "//elsewhere.example.com/v2/repository/index",
    "/v2/repository/index/",
]


@pytest.mark.parametrize("path", FORWARDED)
def test_model_control_routes_are_forwarded(proxy, path):
    assert proxy.ROUTES.fullmatch(path)


@pytest.mark.parametrize("path", REFUSED)
def test_inference_and_other_routes_are_not(proxy, path):
    assert not proxy.ROUTES.fullmatch(path)
