"""Triton's OpenAI-compatible frontend as tritonfleet runs it (docs/serving.md "The OpenAI-compatible frontend").

Upstream's `openai_frontend/main.py` (triton-inference-server/server python/openai, tag v2.71.0: the 26.07 images)
starts the KServe HTTP/gRPC frontends beside /v1 on the same address, but those take no restricted-API key (its
tritonfrontend passes an empty RestrictedFeatures), it starts no metrics port, and it stops Triton with the default
30 s exit timeout. This launcher builds the same parts from the image's own modules (PYTHONPATH names
/opt/tritonserver/python/openai/openai_frontend) with the chart's settings:

- the in-process Triton with the chart's options (exit timeout, strict readiness, metrics configuration, ...);
- Triton's metrics on all addresses, port 8002, from the start (Prometheus, the HPA);
- once the required models (every model under strict readiness) are READY: the engine, the KServe frontends on
  127.0.0.1 only (for the control proxy, the model-state exporter and the probes of this pod), then the OpenAI routes
  on all addresses, port 9000: /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models[/<m>] and
  /health/ready. Model control (/v1/models/<m>/load|unload) and /metrics are not served there. A restricted group
  is `<apis>:<header>:<env var holding the key>`, read from this process's environment, never its command line;
- SIGTERM: uvicorn stops accepting and lets the requests in flight finish (at most the exit timeout), then Triton
  stops (waiting its own exit timeout for what is left).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

# The routes the OpenAI port serves; upstream's others (model load/unload, /metrics) stay off it.
OFFERED_ROUTES = frozenset(
    {"/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models", "/v1/models/{model_name}",
     "/health/ready"}
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-repository", required=True)
    parser.add_argument("--model-control-mode", choices=["none", "explicit"], default="none")
    parser.add_argument("--load-model", action="append", default=[])
    parser.add_argument("--strict-readiness", choices=["true", "false"], default="true")
    parser.add_argument("--required-model", action="append", default=[])
    parser.add_argument("--exit-timeout-secs", type=int, default=30)
    parser.add_argument("--model-load-thread-count", type=int)
    parser.add_argument("--log-verbose", type=int, default=0)
    parser.add_argument("--log-format", choices=["default", "ISO8601"], default="default")
    parser.add_argument("--metrics-config", action="append", default=[], help="<setting>=<value>")
    parser.add_argument("--tokenizer", help="a directory in the pod (or a Hugging Face ID) for chat templates")
    parser.add_argument("--backend", choices=["vllm", "tensorrtllm"])
    parser.add_argument("--openai-port", type=int, default=9000)
    parser.add_argument("--kserve-http-port", type=int, default=8000)
    parser.add_argument("--kserve-grpc-port", type=int, default=8001)
    parser.add_argument("--metrics-port", type=int, default=8002)
    parser.add_argument("--restricted-api", action="append", default=[], help="<apis>:<header>:<ENV>")
    return parser.parse_args(argv)


def restricted_apis(groups: list[str], environ: dict[str, str]) -> list[tuple[str, str, str]]:
    """(apis, header, key) per group, as upstream's FastApiFrontend takes them; the key from the named env var."""
    restricted = []
    for group in groups:
        apis, header, env = group.split(":")
        key = environ.get(env, "")
        if not key:
            raise SystemExit(f"restricted group {apis}: no key in ${env}")
        restricted.append((apis, header, key))
    return restricted


def server_options(args: argparse.Namespace, tritonserver) -> dict:
    """The in-process server's options (tritonserver.Options fields) for the chart's Triton arguments."""
    metrics_settings = dict(setting.split("=", 1) for setting in args.metrics_config)
    options = {
        "model_repository": args.model_repository,
        "model_control_mode": getattr(tritonserver.ModelControlMode, args.model_control_mode.upper()),
        "startup_models": args.load_model if args.model_control_mode == "explicit" else [],
        # A model that fails to load must not stop the server: readiness decides what must be served.
        "exit_on_error": False,
        "strict_readiness": args.strict_readiness == "true",
        "exit_timeout": args.exit_timeout_secs,
        "log_info": True,
        "log_warn": True,
        "log_error": True,
        "log_verbose": args.log_verbose,
        "log_format": getattr(tritonserver.LogFormat, args.log_format.upper()),
        "metrics": True,
        "gpu_metrics": True,
        "cpu_metrics": True,
        "metrics_configuration": {"": metrics_settings} if metrics_settings else {},
    }
    if args.model_load_thread_count:
        options["model_load_thread_count"] = args.model_load_thread_count
    return options


def engine_ready(server, required: list[str]) -> bool:
    """The server is ready (every model, under strict readiness) and so is each required model."""
    return server.ready() and all(server.model(name).ready() for name in required)


def keep_lora_parsing_local(triton_engine) -> None:
    """Upstream's LoRA lookup reads the repository's files and, since its path checks of 2026-03 (server PR 8669),
    raises for an s3:// or gs:// repository (normpath folds the '//'): a remote repository has no local LoRA files,
    so it answers None there, as upstream's own "Cloud path?" branch intends."""
    parse = triton_engine._parse_lora_configs

    def parse_local(repository, *rest):
        paths = [repository] if isinstance(repository, str) else list(repository)
        return None if any("://" in path for path in paths) else parse(repository, *rest)

    triton_engine._parse_lora_configs = parse_local


def offered_app(app):
    """The FastAPI app with only OFFERED_ROUTES left."""
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", None) in OFFERED_ROUTES]
    return app


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    restricted = restricted_apis(args.restricted_api, dict(os.environ))
    for group in args.restricted_api:  # Model code started below does not inherit the keys.
        os.environ.pop(group.split(":")[2], None)

    import tritonserver
    import uvicorn
    from engine import triton_engine
    from frontend.fastapi_frontend import FastApiFrontend
    from tritonfrontend import KServeGrpc, KServeHttp, Metrics

    serving = False

    def stop_before_serving(signum, frame):
        if not serving:  # Loading models: nothing to drain. Serving: uvicorn has its own handler.
            raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop_before_serving)
    signal.signal(signal.SIGINT, stop_before_serving)

    server = tritonserver.Server(tritonserver.Options(**server_options(args, tritonserver)))
    frontends = []
    server.start()
    try:
        frontends.append(Metrics(server, Metrics.Options(address="0.0.0.0", port=args.metrics_port)))
        frontends[-1].start()
        while not engine_ready(server, args.required_model):
            time.sleep(1)
        keep_lora_parsing_local(triton_engine)
        engine = triton_engine.TritonLLMEngine(
            server=server, tokenizer=args.tokenizer, backend=args.backend, default_max_tokens=16
        )
        for kind, port in ((KServeHttp, args.kserve_http_port), (KServeGrpc, args.kserve_grpc_port)):
            frontends.append(kind(server, kind.Options(address="127.0.0.1", port=port)))
            frontends[-1].start()
        openai = FastApiFrontend(engine=engine, host="0.0.0.0", port=args.openai_port, restricted_apis=restricted)
        config = uvicorn.Config(
            app=offered_app(openai.app), host="0.0.0.0", port=args.openai_port, timeout_keep_alive=5,
            timeout_graceful_shutdown=args.exit_timeout_secs,
        )
        serving = True
        uvicorn.Server(config).run()  # returns once SIGTERM's drain is done
    finally:
        for frontend in reversed(frontends):
            frontend.stop()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
