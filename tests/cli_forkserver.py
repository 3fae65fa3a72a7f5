"""Run `python -m tritonfleet ARGS` as a forked child of a warm process, for tests (tests/conftest.py: run_cli).

Starting a fresh interpreter and importing typer, pydantic, the Pulumi SDKs and our own modules costs about a second
of CPU per command; the suite runs commands hundreds of times. This server imports those modules once, then forks one
child per request. The child is what `python -m tritonfleet` would be from there on: it takes the request's
environment, working folder and argv, points fds 0/1/2 at /dev/null and two files, imports the CLI package fresh (its
consoles read $COLUMNS at import) and runs the package as `-m` does, whose `tritonfleet.cli.main()` leaves by os._exit
with the command's exit status. The provider SDKs load submodules during a plan; each child lists them and the server
imports them too (LEARNED_PREFIXES), so that later children skip those 2–3 s of imports per cloud. An exception
escaping main() prints its traceback to stderr and exits 1, as the interpreter would. Only modules that read nothing
from the environment or the working folder at import are imported ahead; tests/test_cli_forkserver.py compares the
fork server's answers with fresh interpreters'.

One server serves a whole test run: pytest's main process starts it (start_shared, from conftest's pytest_configure)
and stops it by its pid at the end; the pytest-xdist workers, started after, find its Unix socket in
$TRITONFLEET_CLI_FORK_SERVER. It serves requests side by side, single-threaded (forking from a threaded process is
unsafe): one selector over the listening socket, a pidfd per running child, and the pidfd of the process that started
it, whose exit ends the server too.

The same warm children run functions for the tests (call(): a plan of an edited config, say), so that no test process
imports the provider SDKs' modules itself.

Protocol: a client connects and sends one JSON request line ({"args", "cwd", "env", "out", "err", "modules"} for a
command; {"call", "input", "cwd", "env", "out", "err", "modules"} for a function call, pickled in and out); the server
answers two JSON lines on that connection, {"pid"} at fork and {"status"} from waitpid, and closes it.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pickle
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

# The provider SDKs load their submodules (pulumi_aws.ec2, ...) on first use, during a plan: each child tells the server
# which it loaded, and the server imports them too, so later children find them loaded.
LEARNED_PREFIXES = ("pulumi_aws", "pulumi_gcp", "pulumi_kubernetes")
# Imported fresh in every child, with their submodules: the CLI package builds its consoles from the environment
# ($COLUMNS) at import (tritonfleet/cli/output.py), and every command module takes them from there.
FRESH_IN_EACH_CHILD = ("tritonfleet.cli", "tritonfleet.__main__")


def _warm_up() -> None:
    """Import what every command imports (typer, pydantic, the Pulumi SDKs, our config, plan and program modules),
    whose import reads nothing from the environment or the working folder, and parse the packaged GPU catalog; then
    forget the CLI package itself (all its modules). Cloud clients (boto3, google-cloud) stay for the commands that
    need them, as in a fresh interpreter."""
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
    submodules = tuple(f"{name}." for name in FRESH_IN_EACH_CHILD)
    for name in [n for n in sys.modules if n in FRESH_IN_EACH_CHILD or n.startswith(submodules)]:
        sys.modules.pop(name)


def _call_child(request: dict) -> None:
    """A function call in the warm child (tests/conftest.py: forked): its pickled arguments in, its pickled result or
    exception out. The cyclic GC is off for the child's short life, as `tritonfleet plan` turns it off."""
    gc.disable()
    _enter(request, stdout=None)  # stdout to the error file too: "out" holds the pickled outcome
    module, _, name = request["call"].partition(":")
    try:
        with open(request["input"], "rb") as handle:
            args, kwargs = pickle.load(handle)
        outcome = (True, getattr(importlib.import_module(module), name)(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - raised again in the caller
        exc.add_note(f"(raised in the fork server's child)\n{traceback.format_exc()}")
        try:
            pickle.loads(pickle.dumps(exc))
            outcome = (False, exc)
        except Exception:  # noqa: BLE001 - an exception that does not survive pickling: its text does
            outcome = (False, RuntimeError(traceback.format_exc()))
    with open(request["out"], "wb") as handle:
        pickle.dump(outcome, handle)
    _write_listing(request["modules"])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _child(request: dict) -> None:
    if "call" in request:
        _call_child(request)
    _enter(request, stdout=request["out"])
    sys.path[0] = request["cwd"]  # `python -m` puts the working folder first on sys.path
    sys.argv = ["-m", *request["args"]]
    real_exit = os._exit

    def exit_telling_the_sdk_modules(code: int) -> None:
        _write_listing(request["modules"])
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


def _enter(request: dict, stdout: str | None) -> None:
    """The child takes the request's place: stdin from /dev/null, stdout to `stdout` (None: with stderr), stderr to the
    request's error file, its environment and working folder."""

    def open_for_writing(path: str) -> int:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)

    err = open_for_writing(request["err"])
    out = err if stdout is None else open_for_writing(stdout)
    for source, target in ((os.open(os.devnull, os.O_RDONLY), 0), (out, 1), (err, 2)):
        os.dup2(source, target)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])


def _write_listing(path: str) -> None:
    with open(path, "w") as listing:
        listing.write("\n".join(_loaded_sdk_packages()))


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
            # A package the SDK registered for loading on first use is in sys.modules already, as a lazy module that
            # loads when any attribute but the introspection ones (__name__, __path__, __spec__, ...) is read.
            getattr(importlib.import_module(name), "_tritonfleet_load_now", None)
        except Exception:  # noqa: BLE001 - a package that only imports in some context stays for the child to load
            pass


def _send(connection: socket.socket, answer: dict) -> None:
    try:
        connection.sendall((json.dumps(answer) + "\n").encode())
    except OSError:
        pass  # the client has gone (a test that timed out): the child is still reaped


def serve(socket_path: str, owner_pid: int) -> None:
    """Serve until the process `owner_pid` exits or this one is sent SIGTERM; children still running are killed and
    reaped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        owner = os.pidfd_open(owner_pid)
    except ProcessLookupError:
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)  # before the warm-up: clients connect at once and wait for their answer
    listener.listen(64)
    _warm_up()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(owner, selectors.EVENT_READ)
    running: dict[int, tuple[int, socket.socket, str]] = {}  # pidfd -> child pid, its client, its SDK listing
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is owner:
                    return
                if key.fileobj is listener:
                    connection, _ = listener.accept()
                    connection.settimeout(30)
                    with connection.makefile("r") as lines:
                        request = json.loads(lines.readline())
                    pid = os.fork()
                    if pid == 0:
                        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a command gets the default a fresh one has
                        for other in (listener, *(client for _, client, _ in running.values())):
                            other.close()
                        _child(request)
                    _send(connection, {"pid": pid})
                    pidfd = os.pidfd_open(pid)
                    running[pidfd] = (pid, connection, request["modules"])
                    selector.register(pidfd, selectors.EVENT_READ)
                else:
                    pidfd = key.fd
                    selector.unregister(pidfd)
                    pid, connection, modules = running.pop(pidfd)
                    os.close(pidfd)
                    _, status = os.waitpid(pid, 0)
                    loaded = _read_listing(modules)  # before answering: the client then removes the request's folder
                    _send(connection, {"status": os.waitstatus_to_exitcode(status)})
                    connection.close()
                    _learn(loaded)
    finally:
        for pid, _, _ in running.values():
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


SOCKET_ENV = "TRITONFLEET_CLI_FORK_SERVER"  # the shared server's socket, for the test processes started after it
START_TIMEOUT_S = 120


class ForkServer:
    """A server process, started by this process and stopped by its pid (close(), or this process's exit)."""

    def __init__(self, root: Path):
        self._folder = tempfile.mkdtemp(prefix="tritonfleet-cli-server-")
        self.socket_path = os.path.join(self._folder, "socket")
        self._process = subprocess.Popen(
            [sys.executable, __file__, self.socket_path, str(os.getpid())],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdin=subprocess.DEVNULL,
        )

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        return run(self.socket_path, args, cwd, env, timeout)

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        shutil.rmtree(self._folder, ignore_errors=True)


def _connect(socket_path: str) -> socket.socket:
    """A connection to the server, waiting for it to bind its socket (it starts alongside pytest's collection)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.connect(socket_path)
            return client
        except (FileNotFoundError, ConnectionRefusedError):
            client.close()
            if time.monotonic() > deadline:
                raise RuntimeError(f"the CLI fork server at {socket_path} did not start") from None
            time.sleep(0.05)


def _exchange(socket_path: str, request: dict, timeout: float, what: list[str]) -> int:
    """Send `request`, wait for its child's exit status; kill the child past `timeout` (TimeoutExpired for `what`)."""
    with _connect(socket_path) as client:
        client.sendall((json.dumps(request) + "\n").encode())
        with client.makefile("r") as answers:
            client.settimeout(START_TIMEOUT_S)  # the server may still be warming up, or learning from a child
            pid = json.loads(answers.readline() or "{}").get("pid")
            if pid is None:
                raise RuntimeError("the CLI fork server died")
            client.settimeout(timeout)
            try:
                status = json.loads(answers.readline() or "{}").get("status")
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(what, timeout) from None
    if status is None:
        raise RuntimeError("the CLI fork server died")
    return status


def run(socket_path: str, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Like subprocess.run([python, -m, tritonfleet, *args], capture_output=True, text=True, timeout=...)."""
    with tempfile.TemporaryDirectory(prefix="tritonfleet-cli-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        modules = Path(folder) / "modules"
        request = {"args": args, "cwd": str(cwd), "env": env, "out": str(out), "err": str(err), "modules": str(modules)}
        status = _exchange(socket_path, request, timeout, ["tritonfleet", *args])
        return subprocess.CompletedProcess(
            ["tritonfleet", *args], status, out.read_text(errors="replace"), err.read_text(errors="replace")
        )


def call(socket_path: str, target: str, *args, timeout: float = 300, **kwargs):
    """`module:function`(*args, **kwargs) in a child of the server, in this process's working folder and environment;
    its return value, or the exception it raised (arguments and result travel pickled)."""
    with tempfile.TemporaryDirectory(prefix="tritonfleet-call-") as folder:
        paths = {name: str(Path(folder) / name) for name in ("input", "out", "err", "modules")}
        with open(paths["input"], "wb") as handle:
            pickle.dump((args, kwargs), handle)
        request = {"call": target, "cwd": os.getcwd(), "env": dict(os.environ), **paths}
        status = _exchange(socket_path, request, timeout, [target])
        if status != 0 or not Path(paths["out"]).is_file():
            printed = Path(paths["err"]).read_text(errors="replace")[-4000:]
            raise RuntimeError(f"{target} died in the fork server's child (exit status {status}):\n{printed}")
        with open(paths["out"], "rb") as handle:
            returned, value = pickle.load(handle)
    if returned:
        return value
    raise value


_started: ForkServer | None = None


def start_shared(root: Path) -> None:
    """Start the server the test processes of this run share (pytest's main process, before xdist starts workers)."""
    global _started
    _started = ForkServer(root)
    os.environ[SOCKET_ENV] = _started.socket_path


def stop_shared() -> None:
    global _started
    if _started is not None:
        _started.close()
        _started = None
        os.environ.pop(SOCKET_ENV, None)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
