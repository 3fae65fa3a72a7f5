"""Run `python -m tritonfleet ARGS` as a forked child of a warm process, for tests (tests/conftest.py: run_cli).

Starting a fresh interpreter and importing typer, pydantic, the Pulumi SDKs and our own modules costs about a second
of CPU per command; the suite runs commands hundreds of times. This server imports those modules once, then forks one
child per request. The child is what `python -m tritonfleet` would be from there on: it takes the request's
environment, working folder and argv, points fds 0/1/2 at /dev/null and two files, imports the CLI module fresh (its
consoles read $COLUMNS at import) and runs the package as `-m` does, whose `tritonfleet.cli.main()` leaves by os._exit
with the command's exit status. The provider SDKs load submodules during a plan; each child lists them and the server
imports them too (LEARNED_PREFIXES), and adds them to a listing the servers of the other test processes read when
they start (2–3 s of imports per cloud that their first children then skip). An exception escaping main() prints
its traceback to stderr and exits 1, as the interpreter would. Only modules that read nothing from the environment or
the working folder at import are imported ahead; tests/test_cli_forkserver.py compares the fork server's answers with
fresh interpreters'.

Protocol: one JSON request per line on stdin ({"args", "cwd", "env", "out", "err", "modules"}), one JSON answer per
line on stdout ({"pid"} at fork, then {"status"} from waitpid). The server writes nothing else to stdout.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import queue
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from pathlib import Path

# The provider SDKs load their submodules (pulumi_aws.ec2, ...) on first use, during a plan: each child tells the server
# which it loaded, and the server imports them too, so later children find them loaded.
LEARNED_PREFIXES = ("pulumi_aws", "pulumi_gcp", "pulumi_kubernetes")
# Imported fresh in every child: the CLI module builds its consoles from the environment ($COLUMNS) at import.
FRESH_IN_EACH_CHILD = ("tritonfleet.cli", "tritonfleet.__main__")


def _warm_up() -> None:
    """Import what every command imports (typer, pydantic, the Pulumi SDKs, our config, plan and program modules),
    whose import reads nothing from the environment or the working folder, and parse the packaged GPU catalog; then
    forget the CLI module itself. Cloud clients (boto3, google-cloud) stay for the commands that need them, as in a
    fresh interpreter."""
    import components.aws.cloud  # noqa: F401
    import components.gcp.cloud  # noqa: F401
    import components.platform  # noqa: F401
    import tritonfleet.cli  # noqa: F401
    import tritonfleet.plan.document  # noqa: F401
    import tritonfleet.plan.harness  # noqa: F401
    import tritonfleet.plan.text  # noqa: F401
    import tritonfleet.policycheck.check  # noqa: F401
    import tritonfleet.policycheck.saved_plan  # noqa: F401
    from tritonfleet.core.catalog import load_catalog

    load_catalog()  # the packaged catalog, parsed once (cached): every command reads it
    for name in FRESH_IN_EACH_CHILD:
        sys.modules.pop(name, None)


def _child(request: dict) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for source, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(source, target)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]  # `python -m` puts the working folder first on sys.path
    sys.argv = ["-m", *request["args"]]
    real_exit = os._exit

    def exit_telling_the_sdk_modules(code: int) -> None:
        with open(request["modules"], "w") as listing:
            listing.write("\n".join(_loaded_sdk_packages()))
        real_exit(code)

    os._exit = exit_telling_the_sdk_modules
    try:
        # What `python -m tritonfleet` does: run the package's __main__ as the main module (Click names the program
        # from it); tritonfleet/__main__.py calls main().
        runpy.run_module("tritonfleet", run_name="__main__", alter_sys=True)
    except BaseException:  # noqa: BLE001 - the interpreter's own behaviour for an uncaught exception
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


# Where the servers of one test run share what they learned (the plan cache's folder; unset: nothing shared). A server
# started after another has learned imports those SDK packages before its first child, which then need not.
SHARED_LISTING_ENV = "TRITONFLEET_FORK_SERVER_LISTING"


def _shared_listing() -> Path | None:
    folder = os.environ.get(SHARED_LISTING_ENV)
    return Path(folder) / "cli-fork-server-sdk-packages.txt" if folder else None


def _share(names: set[str]) -> None:
    """Add `names` to the shared listing (a whole new file, renamed into place: a reader never sees half of one)."""
    listing = _shared_listing()
    if listing is None or not names:
        return
    known = set(_read_listing(str(listing)))
    if names <= known:
        return
    fd, scratch = tempfile.mkstemp(dir=listing.parent, prefix=".sdk-packages-", suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write("\n".join(sorted(known | names)))
    os.replace(scratch, listing)


def serve() -> None:
    _warm_up()
    listing = _shared_listing()
    if listing is not None:
        _learn(_read_listing(str(listing)))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        loaded = _read_listing(request["modules"])  # before answering: the client then removes the request's folder
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
        _learn(loaded)
        _share(set(loaded))


def _loaded_sdk_packages() -> list[str]:
    """The SDK packages this process has loaded: packages only, whose __init__ imports their modules as a plain
    import does (importing a module file by name could shadow the function or class it defines in its package), and
    not the ones registered for loading on first use that were never used (type _LazyModule until then)."""
    return [
        name
        for name, module in list(sys.modules.items())
        if name.startswith(LEARNED_PREFIXES) and type(module) is types.ModuleType and hasattr(module, "__path__")
    ]


def _read_listing(path: str) -> list[str]:
    """The SDK modules a child loaded (none listed: a child that died before writing its listing)."""
    try:
        return Path(path).read_text().split()
    except OSError:
        return []


def _learn(names: list[str]) -> None:
    """Import the SDK modules a child loaded, so that the next children find them loaded."""
    for name in names:
        try:
            # A package the SDK registered for loading on first use is in sys.modules already: reading an attribute
            # of it loads it.
            importlib.import_module(name).__name__  # noqa: B018
        except Exception:  # noqa: BLE001 - a package that only imports in some context stays for the child to load
            pass


class ForkServer:
    """The client: one server per test process, started on first use and stopped by its pid at exit."""

    START_TIMEOUT_S = 120

    def __init__(self, root: Path, listing_folder: Path | None = None):
        self._lock = threading.Lock()
        shared = {SHARED_LISTING_ENV: str(listing_folder)} if listing_folder else {}
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root), **shared},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._answers: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._read_answers, daemon=True).start()
        atexit.register(self.close)
        if not self._answer(self.START_TIMEOUT_S).get("ready"):
            raise RuntimeError("the CLI fork server did not start")

    def _read_answers(self) -> None:
        for line in self._process.stdout:
            self._answers.put(json.loads(line))
        self._answers.put({"ready": False, "status": None})  # the server is gone

    def _answer(self, timeout: float) -> dict:
        return self._answers.get(timeout=timeout)

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        """Like subprocess.run([python, -m, tritonfleet, *args], capture_output=True, text=True, timeout=...)."""
        with self._lock, tempfile.TemporaryDirectory(prefix="tritonfleet-cli-") as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            modules = Path(folder) / "modules"
            request = {"args": args, "cwd": str(cwd), "env": env, "out": str(out), "err": str(err), "modules": str(modules)}
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            pid = self._answer(self.START_TIMEOUT_S)["pid"]
            try:
                status = self._answer(timeout)["status"]
            except queue.Empty:
                os.kill(pid, signal.SIGKILL)
                self._answer(self.START_TIMEOUT_S)
                raise subprocess.TimeoutExpired(["tritonfleet", *args], timeout) from None
            if status is None:
                raise RuntimeError("the CLI fork server died")
            return subprocess.CompletedProcess(
                ["tritonfleet", *args], status, out.read_text(errors="replace"), err.read_text(errors="replace")
            )

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)


_shared: ForkServer | None = None


def shared_fork_server(root: Path, listing_folder: Path | None = None) -> ForkServer:
    """This test process's fork server, started on first use (conftest is imported under two names; this module once).
    `listing_folder`: where the servers of this test run share the SDK packages they learned."""
    global _shared
    if _shared is None:
        _shared = ForkServer(root, listing_folder)
    return _shared


if __name__ == "__main__":
    serve()
