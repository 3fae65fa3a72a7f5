"""NVIDIA's GenAI-Perf (perf_analyzer underneath) and `tritonfleet loadtest --llm` side by side, on one real server.

A real tritonserver (the nvidia-pytriton wheel, CPU) serves the live test's decoupled Python-backend "LLM"
(tests/test_loadtest_llm_live.py: 4 sequence slots, 40 ms to the first token plus 0.1 ms a prompt word, 10 ms a
token after it, one streamed response a token). Both tools drive it over Triton's gRPC streaming API the way
GenAI-Perf's `--service-kind triton --backend tensorrtllm` does (text_input, max_tokens, stream), at the same load
(a concurrency, or a request rate with constant or Poisson gaps), the same prompts (one GenAI-Perf input file, which
loadtest --llm reads too), the same output length, no warm-up, and a measurement of about the same length; each round
runs both tools, in alternating order. The table has the median over the rounds of each figure (and its range), and
the difference from GenAI-Perf. docs/cost.md ("`loadtest --llm` and GenAI-Perf side by side") explains why the
figures differ.

GenAI-Perf counts tokens with a Hugging Face tokenizer and no hub can be reached here: the script builds a word-level
one in the tools' virtualenv (one whitespace-separated word = one token, `tok` = one token even when the responses are
joined), which is how loadtest --llm counts, so the token counts agree and the comparison isolates timing and
definitions. (Its synthetic prompts are not used: with this tokenizer, 0.0.8's generator looped forever on one seed.)

Not part of the test suite. Set up the tools OUTSIDE the project's virtualenv (perf_analyzer 2.51.0, from the
tritonclient wheel, is the newest whose binary runs on glibc 2.36; genai-perf 0.0.8 drives it); from the project root:
  python3 -m venv /tmp/gp-venv
  /tmp/gp-venv/bin/pip install genai-perf==0.0.8 'tritonclient[all]==2.51.0'
  mkdir /tmp/gp-libs && (cd /tmp/gp-libs && apt-get download libb64-0d && dpkg-deb -x libb64-0d_*.deb x \
    && cp x/usr/lib/x86_64-linux-gnu/libb64.so.0d .)
  ln -s "$PWD"/venv/lib/python3.11/site-packages/nvidia_pytriton.libs/libcudart-*.so.12* /tmp/gp-libs/libcudart.so.12
Run: venv/bin/python benchmarks/genai_perf_compare.py [--tools /tmp/gp-venv] [--libs /tmp/gp-libs] [--rounds 3]
It prints "skipped: <why>" and exits 0 when a tool is missing; every server it starts is stopped by its pid.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import ROOT

sys.path.insert(0, str(ROOT))
import pytest  # noqa: E402  (tests.triton_wheel skips with pytest's exception)

from tests.live_stack import STARTUP_SECONDS, start_triton, wait_until_ready  # noqa: E402
from tests.local_servers import free_port, stop  # noqa: E402
from tests.test_loadtest_llm_live import LLM_CODE, LLM_CONFIG  # noqa: E402
from tritonfleet.loadtest import grpc_available, percentile  # noqa: E402
from tritonfleet.loadtest_llm import WORDS, LlmPlan, read_prompts, run  # noqa: E402

INPUT_TOKENS, OUTPUT_TOKENS = 32, 24
PROMPTS = "prompts.jsonl"
WINDOW_MS = 3000  # perf_analyzer measures 3 windows at GenAI-Perf's stability 999 %: about 10 s
DURATION_S = 10.0
SCENARIOS = (  # (label, GenAI-Perf's load options, loadtest --llm's)
    ("concurrency 2", ["--concurrency", "2"], {"concurrency": 2}),
    ("concurrency 8 (4 slots)", ["--concurrency", "8"], {"concurrency": 8}),
    ("rate 8/s constant", ["--request-rate", "8"], {"rate": 8.0, "arrivals": "uniform"}),
    ("rate 8/s Poisson", ["--request-rate", "8", "--", "--request-distribution", "poisson"],
     {"rate": 8.0, "arrivals": "poisson"}),
)  # fmt: skip
FIGURES = (  # (row, GenAI-Perf's JSON metric and statistic, loadtest --llm's result field and statistic)
    ("TTFT p50 ms", ("time_to_first_token", "p50"), ("ttftMs", "p50")),
    ("TTFT p90 ms", ("time_to_first_token", "p90"), ("ttftMs", "p90")),
    ("TTFT p99 ms", ("time_to_first_token", "p99"), ("ttftMs", "p99")),
    ("ITL p50 ms", ("inter_token_latency", "p50"), ("itlMs", "p50")),
    ("ITL p99 ms", ("inter_token_latency", "p99"), ("itlMs", "p99")),
    ("e2e p50 ms", ("request_latency", "p50"), ("e2eMs", "p50")),
    ("e2e p99 ms", ("request_latency", "p99"), ("e2eMs", "p99")),
    ("output tok/s", ("output_token_throughput", "avg"), ("outputTokensPerSecond", None)),
    ("requests/s", ("request_throughput", "avg"), ("requestsPerSecond", None)),
    ("output tokens/request", ("output_sequence_length", "avg"), ("outputTokens", "mean")),
    ("requests measured", ("requests", None), ("requests", None)),
)
TOKENIZER = """import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
words = sorted(set(sys.argv[2:]) | {"tok", "##tok", "!"})
vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(words)}}
tokenizer = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=10000))
tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tokenizer.decoder = decoders.WordPiece()
PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(sys.argv[1])
"""
VERSIONS = "import importlib.metadata as m; print(m.version('genai-perf'), m.version('tritonclient'))"


def missing(tools: Path, libs: Path) -> str | None:
    """Why the comparison cannot run here, or None."""
    for name in ("genai-perf", "perf_analyzer", "python"):
        if not (tools / "bin" / name).exists():
            return f"no {tools}/bin/{name} (see this script's docstring for the setup)"
    check = subprocess.run([tools / "bin" / "perf_analyzer", "--version"], env=tool_env(tools, libs),
                           capture_output=True, text=True)  # fmt: skip
    if check.returncode != 0:
        said = (check.stderr or check.stdout).strip().splitlines()
        return f"perf_analyzer does not run: {said[-1] if said else f'exit {check.returncode}'}"
    if not grpc_available():
        return "tritonclient.grpc does not import in this virtualenv (loadtest --llm's gRPC path)"
    return None


def tool_env(tools: Path, libs: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{tools / 'bin'}:{os.environ.get('PATH', '')}", "LD_LIBRARY_PATH": str(libs),
            "PYTHONPATH": ""}  # fmt: skip


def genai_perf(tools: Path, libs: Path, grpc: str, tmp: Path, load: list[str], out: Path) -> dict:
    """One GenAI-Perf profile; its JSON export, plus the request count of perf_analyzer's own export."""
    split = load.index("--") if "--" in load else len(load)  # after "--": perf_analyzer's own options
    own, extra = load[:split], load[split:]
    command = [
        "genai-perf", "profile", "-m", "llm", "--service-kind", "triton", "--backend", "tensorrtllm", "--streaming",
        "-u", grpc, *own, "--input-file", str(tmp / PROMPTS),
        "--output-tokens-mean", str(OUTPUT_TOKENS), "--output-tokens-stddev", "0", "--tokenizer", str(tmp / "tokenizer"),
        "--measurement-interval", str(WINDOW_MS), "--artifact-dir", str(out), *extra,
    ]  # fmt: skip
    done = subprocess.run(command, env=tool_env(tools, libs), capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"genai-perf exited {done.returncode}: {done.stdout[-1500:]}{done.stderr[-1500:]}")
    figures = json.loads((out / "profile_export_genai_perf.json").read_text())
    experiment = json.loads((out / "profile_export.json").read_text())["experiments"][0]
    figures["requests"] = len(experiment["requests"])
    figures["ttft_nearest_rank_p99"] = nearest_rank_p99(experiment["requests"])
    return figures


def nearest_rank_p99(requests: list[dict]) -> float:
    """GenAI-Perf's own TTFT samples at loadtest's percentile definition (nearest rank, not interpolated)."""
    ttft = sorted((r["response_timestamps"][0] - r["timestamp"]) / 1e6 for r in requests if r["response_timestamps"])
    return percentile(ttft, 99)  # type: ignore[return-value]


def loadtest(grpc: str, tmp: Path, load: dict, seed: int) -> dict:
    """One loadtest --llm run; `seed` draws its Poisson schedule (perf_analyzer draws the same one every run)."""
    plan = LlmPlan(url=grpc, model="llm", protocol="grpc", duration_s=DURATION_S, warmup_s=0, seed=seed,
                   prompts=read_prompts(tmp / PROMPTS), prompts_file=PROMPTS,
                   output_tokens=(OUTPUT_TOKENS, OUTPUT_TOKENS), **load)  # fmt: skip
    return run(plan).model_dump(by_alias=True)


def write_prompts(path: Path, count: int = 100) -> None:
    """GenAI-Perf's input file, which loadtest --llm also reads: `count` prompts of INPUT_TOKENS words each."""
    rng = random.Random(0)
    path.write_text("".join(json.dumps({"text": " ".join(rng.choices(WORDS, k=INPUT_TOKENS))}) + "\n"
                            for _ in range(count)))  # fmt: skip


def value(figures: dict, key: str, statistic: str | None) -> float:
    item = figures[key]
    return float(item[statistic] if statistic is not None else item)


def spread(values: list[float]) -> str:
    middle = statistics.median(values)
    digits = 1 if middle >= 10 else 2
    return f"{middle:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def table(results: dict[str, list[tuple[dict, dict]]]) -> str:
    lines = ["| load | figure | GenAI-Perf 0.0.8 | loadtest --llm | difference |", "|---|---|---|---|---|"]
    for label, rounds in results.items():
        for row, (gp_key, gp_stat), (lt_key, lt_stat) in FIGURES:
            ours = [value(lt, lt_key, lt_stat) for _, lt in rounds]
            theirs = [value(gp, gp_key, gp_stat) for gp, _ in rounds]
            base = statistics.median(theirs)
            delta = (statistics.median(ours) - base) / base * 100 if base else math.nan
            lines.append(f"| {label} | {row} | {spread(theirs)} | {spread(ours)} | {delta:+.1f} % |")
        nearest = [gp["ttft_nearest_rank_p99"] for gp, _ in rounds]
        lines.append(f"| {label} | TTFT p99 ms, GenAI-Perf's samples at nearest rank | {spread(nearest)} | | |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, default=Path("/tmp/gp-venv"), help="virtualenv with genai-perf")
    parser.add_argument("--libs", type=Path, default=Path("/tmp/gp-libs"), help="perf_analyzer's extra libraries")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write every round's figures from both tools here")
    args = parser.parse_args()
    why = missing(args.tools, args.libs)
    if why:
        print(f"skipped: {why}")
        return 0
    versions = subprocess.run([args.tools / "bin" / "python", "-c", VERSIONS], capture_output=True, text=True).stdout.split()
    with tempfile.TemporaryDirectory(prefix="genai-perf-compare-") as folder:
        tmp = Path(folder)
        subprocess.run([args.tools / "bin" / "python", "-c", TOKENIZER, tmp / "tokenizer", *WORDS],
                       env=tool_env(args.tools, args.libs), check=True, capture_output=True)  # fmt: skip
        write_prompts(tmp / PROMPTS)
        try:
            server = start_triton(tmp, "compare", {"llm": (LLM_CONFIG, LLM_CODE)}, grpc_port=free_port())
        except pytest.skip.Exception as skipped:
            print(f"skipped: {skipped.msg}")
            return 0
        try:
            wait_until_ready([server], time.monotonic() + STARTUP_SECONDS)
            grpc = f"127.0.0.1:{server.grpc_port}"
            print(f"genai-perf {versions[0]}, perf_analyzer {versions[1]} (tritonclient wheel); tritonserver of the "
                  f"nvidia-pytriton wheel, CPU; load average before {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
            results: dict[str, list[tuple[dict, dict]]] = {}
            for scenario, (label, gp_load, lt_load) in enumerate(SCENARIOS):
                for number in range(args.rounds):
                    out = tmp / f"genai-perf-{scenario}-{number}"
                    if number % 2 == 0:
                        gp = genai_perf(args.tools, args.libs, grpc, tmp, gp_load, out)
                        ours = loadtest(grpc, tmp, lt_load, number)
                    else:
                        ours = loadtest(grpc, tmp, lt_load, number)
                        gp = genai_perf(args.tools, args.libs, grpc, tmp, gp_load, out)
                    results.setdefault(label, []).append((gp, ours))
                    print(f"  {label}, round {number + 1}: load average {os.getloadavg()[0]:.2f}", flush=True)
        finally:
            stop(server.process)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    print(f"load average after {os.getloadavg()[0]:.2f}; {args.rounds} rounds; median (min–max) over the rounds; "
          "difference of the medians from GenAI-Perf's\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
