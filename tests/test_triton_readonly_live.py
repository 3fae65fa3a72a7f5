"""The rendered Triton container starts and loads its models from (local) S3 under the rendered securityContext and
env: a read-only root filesystem, the rendered user and group, no capabilities, no privilege escalation, and only the
rendered writable volumes (/tmp bounded by its sizeLimit, HOME from the env, /dev/shm).

How: the real `tritonserver` (nvidia-pytriton wheel) runs in a private mount namespace (`unshare -m`, so it needs
root and skips otherwise) where `/` is remounted read-only, /tmp and HOME's parent are fresh tmpfs mounts of the rendered
sizes (as emptyDirs are), and `setpriv` drops to the rendered runAsUser/runAsGroup with an empty capability set.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from tests.local_servers import stop
from tests.serving_helpers import by_kind, planned_values, render
from tests.test_triton_live import INFER_BODY, _get, _start_triton
from tests.test_triton_live import container as container  # noqa: F401 (fixtures: the rendered container and
from tests.test_triton_live import s3_repository as s3_repository  # noqa: F401 its one-model S3 repository)
from tritonfleet.core.conventions import triton_release_name

STACK, DEPLOYMENT = "dev", "resnet"
RELEASE = triton_release_name(DEPLOYMENT)

# Runs as root in the new mount namespace, then becomes the container's user. Arguments: the /tmp size, HOME, uid, gid,
# a directory to keep reachable (the interpreter the Python backend stub runs, see below), the folders the fresh /tmp
# and HOME mounts would hide but the server needs (':'-separated: a checkout or venv under /tmp, say; they come back
# read-only, as the image's files are), then the command.
SANDBOX = r"""
set -eu
tmp_size=$1 home=$2 uid=$3 gid=$4 keep=$5 hidden=$6; shift 6
mount --make-rprivate /
if [ -n "$keep" ]; then  # a parent the user cannot traverse (e.g. /root): re-expose only the interpreter below it
  parent=$(dirname "$keep"); stage=$(dirname "$0")/keep; mkdir -p "$stage"
  mount --bind "$keep" "$stage"
  mount -t tmpfs -o mode=755 tmpfs "$parent"
  mkdir -p "$keep" && mount --bind "$stage" "$keep"
fi
IFS=:; set -f; n=0
for dir in $hidden; do n=$((n + 1)); mkdir -p "$(dirname "$0")/hidden-$n"; mount --bind "$dir" "$(dirname "$0")/hidden-$n"; done
mount -o remount,bind,ro /
mount -t tmpfs -o "size=$tmp_size,mode=1777" tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs "$(dirname "$home")"
mkdir -p "$home" && chown "$uid:$gid" "$home"
n=0
for dir in $hidden; do
  n=$((n + 1)); mkdir -p "$dir"; mount --bind "$(dirname "$0")/hidden-$n" "$dir"; mount -o remount,bind,ro "$dir"
done
unset IFS; set +f
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
"""


def _quantity_to_tmpfs(quantity: str) -> str:
    return quantity.removesuffix("i")  # 20Gi -> 20G (tmpfs takes k, m, g suffixes)


def _unreachable_parent(path: Path) -> Path | None:
    """The child of the first ancestor of `path` that others may not traverse (so the container user could not)."""
    for parent in path.parents:
        if parent != Path("/") and not os.stat(parent).st_mode & stat.S_IXOTH:
            return Path(*path.parts[: len(parent.parts) + 1])
    return None


def _hidden_by_mounts(paths: list[Path], home: str) -> list[Path]:
    """Those of `paths` below a folder the sandbox mounts afresh (/tmp, HOME's parent): a clone under /tmp keeps its
    venv, and so the tritonserver binary and its libraries, reachable."""
    covered = (Path("/tmp"), Path(home).parent)
    return [p for p in paths if any(p.is_relative_to(folder) for folder in covered)]


def test_the_container_starts_and_loads_from_s3_under_the_rendered_security_context(s3_repository):  # noqa: F811
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"):
        pytest.skip("needs root, unshare and setpriv (util-linux) to reproduce the container's mounts and user")
    pod = by_kind(render(planned_values(STACK, RELEASE), name=RELEASE))["Deployment"]["spec"]["template"]["spec"]
    spec = pod["containers"][0]
    context, pod_context = spec["securityContext"], pod["securityContext"]
    assert context["readOnlyRootFilesystem"] and context["capabilities"] == {"drop": ["ALL"]}
    assert context["allowPrivilegeEscalation"] is False and pod_context["runAsNonRoot"]
    mounts = {m["mountPath"]: m["name"] for m in spec["volumeMounts"] if not m.get("readOnly")}
    volumes = {v["name"]: v for v in pod["volumes"]}
    home = next(e["value"] for e in spec["env"] if e["name"] == "HOME")
    assert mounts.keys() == {"/dev/shm", "/tmp", home}, "the only writable places"
    tmp_limit = volumes[mounts["/tmp"]]["emptyDir"]["sizeLimit"]
    requested = spec["resources"]["requests"]["ephemeral-storage"]
    assert int(requested.removesuffix("Gi")) > int(tmp_limit.removesuffix("Gi")), "the request covers the bounded /tmp"

    interpreter = _unreachable_parent(Path(sys.base_prefix))
    prefixes = {Path(sys.prefix), Path(sys.base_prefix)}
    hidden = _hidden_by_mounts(sorted(prefixes | {p.resolve() for p in prefixes}), home)
    # Outside /tmp (which the sandbox replaces), readable by the container user: the backend folder and the log.
    work = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="tritonfleet-ro-"))
    try:
        work.chmod(0o755)
        (work / "sandbox.sh").write_text(SANDBOX)
        launcher = (
            "unshare", "-m", "bash", str(work / "sandbox.sh"), _quantity_to_tmpfs(tmp_limit), home,
            str(pod_context["runAsUser"]), str(pod_context["runAsGroup"]), str(interpreter or ""),
            ":".join(map(str, hidden)),
        )
        ports, process = _start_triton(spec, s3_repository, work, launcher)
        try:
            status, body = _get(f"http://127.0.0.1:{ports['http']}/v2/models/identity/infer", INFER_BODY)
            assert status == 200, body
            # The server itself (unshare, bash and setpriv exec into it: same pid) runs as the rendered user, on a
            # read-only root filesystem.
            proc = Path(f"/proc/{process.pid}")
            uids = next(line for line in (proc / "status").read_text().splitlines() if line.startswith("Uid:")).split()[1:]
            assert set(uids) == {str(pod_context["runAsUser"])}
            root_mount = next(line.split() for line in (proc / "mountinfo").read_text().splitlines() if line.split()[4] == "/")
            assert "ro" in root_mount[5].split(",")
        finally:
            stop(process, grace_seconds=0)
        log = (work / "tritonserver.log").read_text()
        assert "Read-only file system" not in log and "Permission denied" not in log, log[-3000:]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_folders_the_sandbox_would_hide_are_those_below_its_fresh_mounts():
    venvs = [Path("/tmp/clone/venv"), Path("/home/me/tritonfleet/venv"), Path("/srv/tritonfleet/venv"), Path("/tmpx/venv")]
    assert _hidden_by_mounts(venvs, "/home/triton-server") == venvs[:2]
