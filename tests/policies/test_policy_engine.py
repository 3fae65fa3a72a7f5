"""The pack on whole plans: every violation case starts from a compliant plan and changes one field, and the real
pack process (over the Analyzer gRPC protocol, as the Pulumi CLI drives it) and direct calls agree on each."""

from __future__ import annotations

import copy
import json

import pytest
from policy_cases import PACK_DIR, add, add_gpu_operator, compliant_plan, find, stack_policy_config, tls_only_policy
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import ResourceValidationPolicy

from tritonfleet.policycheck.direct import load_policies, policy_meta, run_direct
from tritonfleet.policycheck.engine import PackProcess, analyze
from tritonfleet.policycheck.pack_config import PackConfigError, reconcile

NG = "aws:eks/nodeGroup:NodeGroup"
KNP = "kubernetes:karpenter.sh/v1:NodePool"
NP = "gcp:container/nodePool:NodePool"
RELEASE = "kubernetes:helm.sh/v3:Release"
PLATFORM = "tritonfleet:platform:Platform"


class RememberingStub:
    """The pack's Analyzer stub, answering a request it has answered before under the same configuration from memory.

    Every case changes one or two resources of a compliant plan of about 140; the real pack's answer to the others is
    the one it gave to the same bytes before (its resource policies see only the request and the configured policy
    config, and keep no state between calls). So each case still sends every changed resource and the whole stack to
    the real pack over gRPC, and the suite is spared ~130 identical calls per case (~0.5 s of the pack's CPU each).

    An Analyze call runs the pack's resource policies only (the SDK's servicer skips the stack policies there), so its
    answer is remembered under the configuration of those: a case that changes only a stack policy's config (a budget,
    the GPU limit) still sends the whole stack, and not its ~150 unchanged resources again."""

    def __init__(self, stub, resource_policies: set[str]):
        self._stub = stub
        self._resource_policies = resource_policies
        self._configured: bytes | None = None
        self._resource_configured: bytes | None = None  # the part of the configuration that Analyze calls see
        self._answers: dict[tuple[bytes | None, str, bytes], object] = {}
        self.sent: list[str] = []  # the methods of the calls that reached the pack, in order

    def _ask(self, method: str, request, timeout: float):
        configured = self._resource_configured if method == "Analyze" else self._configured
        key = (configured, method, request.SerializeToString(deterministic=True))
        if key not in self._answers:
            self.sent.append(method)
            self._answers[key] = getattr(self._stub, method)(request, timeout=timeout)
        return self._answers[key]

    def GetAnalyzerInfo(self, request, timeout: float):  # noqa: N802 - the gRPC method's name
        return self._ask("GetAnalyzerInfo", request, timeout)

    def Configure(self, request, timeout: float):  # noqa: N802
        configuration = request.SerializeToString(deterministic=True)
        if configuration != self._configured:
            self.sent.append("Configure")
            self._stub.Configure(request, timeout=timeout)
            self._configured = configuration
            resource_part = analyzer_pb2.ConfigureAnalyzerRequest()
            for name in sorted(set(request.policyConfig) & self._resource_policies):
                resource_part.policyConfig[name].CopyFrom(request.policyConfig[name])
            self._resource_configured = resource_part.SerializeToString(deterministic=True)

    def Analyze(self, request, timeout: float):  # noqa: N802
        return self._ask("Analyze", request, timeout)

    def AnalyzeStack(self, request, timeout: float):  # noqa: N802
        return self._ask("AnalyzeStack", request, timeout)


@pytest.fixture(scope="module")
def pack():
    process = PackProcess(PACK_DIR, "tritonfleet", "policy-tests")
    resource_policies = {p.name for p in load_policies(PACK_DIR) if isinstance(p, ResourceValidationPolicy)}
    process.stub = RememberingStub(process.stub, resource_policies)
    yield process
    process.close()


@pytest.fixture(scope="module")
def bases():
    return {stack: compliant_plan(stack) for stack in ("dev", "prod", "gcp-prod")}


@pytest.fixture(scope="module")
def baseline(pack, bases):
    """baseline(stack): the verdicts on the stack's unchanged plan with its own policy config, computed once."""
    verdicts: dict[str, set] = {}

    def of(stack: str) -> set:
        if stack not in verdicts:
            verdicts[stack] = set(both(pack, bases[stack], stack_policy_config(stack)))
        return verdicts[stack]

    return of


def both(pack, plan, config):
    """Verdicts from the pack process and from direct calls; they must be identical."""
    over_grpc = analyze(pack, plan, config)
    direct = run_direct(PACK_DIR, plan, config)
    assert over_grpc == direct, set(over_grpc) ^ set(direct)
    return over_grpc


def inputs(plan, resource_type, name_part=""):
    return find(plan, resource_type, name_part)["inputs"]


def _set(path_value):
    def mutate(plan):
        resource_type, name_part, path, value = path_value
        target = inputs(plan, resource_type, name_part)
        *parents, last = path.split(".")
        for part in parents:
            target = target[part]
        if value is DELETE:
            del target[last]
        else:
            target[last] = value

    return mutate


DELETE = object()


def requirement(name_part, key, values):
    """Set the `In` values of one requirement of a Karpenter NodePool's template."""

    def mutate(plan):
        requirements = inputs(plan, KNP, name_part)["spec"]["template"]["spec"]["requirements"]
        (found,) = [r for r in requirements if r["key"] == key]
        found["values"] = values

    return mutate


def gpu_limit(name_part, gpus):
    def mutate(plan):
        inputs(plan, KNP, name_part)["spec"]["limits"]["nvidia.com/gpu"] = str(gpus)

    return mutate


INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"


def drop(resource_type, name_part=""):
    def mutate(plan):
        plan["resources"].remove(find(plan, resource_type, name_part))

    return mutate


def unprotect(resource_type, name_part=""):
    def mutate(plan):
        find(plan, resource_type, name_part)["protect"] = False

    return mutate


def with_secret(plan):
    add(
        plan,
        "kubernetes:core/v1:Secret",
        "s3-keys",
        {"metadata": {"name": "s3-keys"}, "stringData": {"aws_secret_access_key": "[secret]"}},
    )


def with_deployment(image, env=()):
    def mutate(plan):
        add(
            plan,
            "kubernetes:apps/v1:Deployment",
            "sidecar",
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image, "env": [dict(e) for e in env]}]}}}},
        )

    return mutate


def with_config_map(plan):
    add(plan, "kubernetes:core/v1:ConfigMap", "leak", {"data": {"notes": "key AKIAIOSFODNN7EXAMPLE for the bucket"}})


def gke_operator_mode(label=True, image="UBUNTU_CONTAINERD", driver=True, operator=True, installer=False):
    def mutate(plan):
        if installer:  # Google's COS driver installer (NVIDIA's operator-on-COS path)
            add(plan, "kubernetes:apps/v1:DaemonSet", "installer", {"metadata": {"name": "nvidia-driver-installer"}})
        for pool in [r for r in plan["resources"] if r["type"] == NP and "guestAccelerators" in r["inputs"]["nodeConfig"]]:
            node = pool["inputs"]["nodeConfig"]
            for accelerator in node["guestAccelerators"]:
                accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] = "INSTALLATION_DISABLED"
            if label:
                node["labels"]["gke-no-default-nvidia-gpu-device-plugin"] = "true"
            node["imageType"] = image
        if operator:
            add_gpu_operator(plan, {"driver": {"enabled": driver}})

    return mutate


ASSUMED = "tritonfleet.io/assumed-usd-per-hour"


def assumed_price(resource_type, name_part, labels_path, usd):
    """Set (a number) or remove (None) a pool's acknowledged assumed price label, as gpuPools[].assumedPrice does."""

    def mutate(plan):
        labels = inputs(plan, resource_type, name_part)
        for part in labels_path.split("."):
            labels = labels[part]
        if usd is None:
            labels.pop(ASSUMED, None)
        else:
            labels[ASSUMED] = f"{usd:g}"

    return mutate


def both_of(*mutations):
    def mutate(plan):
        for mutation in mutations:
            mutation(plan)

    return mutate


def stated_usage(stack, **usage):
    """The Platform's billLines as the program registers them for the stack with its `usage` section changed."""

    def mutate(plan):
        from test_bill import TODAY, config

        from tritonfleet.core.bill import other_lines, registered_lines
        from tritonfleet.core.cost import stack_cost

        cfg = config(stack, usage=usage)
        inputs(plan, PLATFORM)["billLines"] = registered_lines(cfg, other_lines(cfg, stack_cost(cfg), TODAY))

    return mutate


def config_change(policy, **properties):
    def change(config):
        entry = config[policy]
        config[policy] = {**({"enforcementLevel": entry} if isinstance(entry, str) else entry), **properties}

    return change


# id -> (stack, plan mutation or None, config change or None, {policy: fragment of its new message})
CASES = {
    "disallowed-instance-type": (
        "prod",
        requirement("h200-burst", INSTANCE_TYPE, ["p5.48xlarge"]),
        None,
        {"gpu-pool-allowed-instance-types": "uses instance type p5.48xlarge"},
    ),
    "untainted-node-pool": (
        "prod",
        _set((KNP, "l40s-burst", "spec.template.spec.taints", [])),
        None,
        {"gpu-pool-require-gpu-taint": "lacks the GPU taint nvidia.com/gpu=true:NoSchedule"},
    ),
    "gke-taint-wrong-value": (
        "gcp-prod",
        _set((NP, "l4-spot", "nodeConfig.taints", [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}])),
        None,
        {
            "gpu-pool-require-gpu-taint": "nvidia.com/gpu=present:NoSchedule",
            "triton-release-tolerate-pool-taint": "nvidia.com/gpu=true:NoSchedule",
        },
    ),
    "too-many-gpus": (
        "prod",
        gpu_limit("l40s-burst", 22),
        config_change("cost-stack-warn-monthly-budget", monthlyUsd=400000),  # 16 more L40S cost money too
        {"gpu-stack-limit-total-gpus": "can run 48 GPUs"},
    ),
    "over-budget": (
        "prod",
        None,
        config_change("cost-stack-enforce-monthly-budget", monthlyUsd=90000),
        {"cost-stack-enforce-monthly-budget": "$154,249.81/month on the ceiling basis (GPU pools $149,486.48, the rest $4,763.33"},
    ),
    "over-budget-floor": (
        "prod",
        None,
        config_change("cost-stack-enforce-monthly-budget", monthlyUsd=40000, basis="floor"),
        {"cost-stack-enforce-monthly-budget": "on the floor basis (GPU pools $95,129.22"},  # llm's 2 p5en, spot unavailable
    ),
    "rest-of-bill-over-budget": (  # the GPU pools alone ($149,486.48) fit; with the rest of the bill they do not
        "prod",
        None,
        config_change("cost-stack-enforce-monthly-budget", monthlyUsd=150000),
        {"cost-stack-enforce-monthly-budget": "the rest $4,763.33 (control plane, system nodes, NAT, load balancers"},
    ),
    "traffic-over-budget": (  # prod's traffic stated at 50,000 inferences/s: cross-zone bytes tip it over $200,000
        "prod",
        stated_usage("prod", inferencesPerSecond=50000),
        None,
        {"cost-stack-enforce-monthly-budget": "over the budget of $200,000.00"},
    ),
    "unpriced-system-nodes": (  # a system node type without a catalog price: unknown, and prod fails closed
        "prod",
        _set((NG, "system", "instanceTypes", ["m7i.xlarge"])),
        None,
        {
            "cost-stack-warn-monthly-budget": "Cannot verify the monthly budget",
            "cost-stack-enforce-monthly-budget": "no published instance:m7i.xlarge price in us-east-1",
        },
    ),
    "near-budget": (
        "prod",
        None,
        config_change("cost-stack-warn-monthly-budget", monthlyUsd=160000),
        {"cost-stack-warn-monthly-budget": "96% of the $160,000.00 budget"},
    ),
    "unpriced-type": (
        "prod",
        requirement("h200-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]),
        None,
        {
            "cost-stack-warn-monthly-budget": "Cannot verify the monthly budget",
            "cost-stack-enforce-monthly-budget": "is unknown: tf-aws-gpu-h200-burst",
        },
    ),
    "unpriced-type-acknowledged": (
        "prod",
        both_of(
            requirement("h200-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]),
            assumed_price(KNP, "h200-burst", "spec.template.metadata.labels", 90),
        ),
        None,
        {"cost-stack-warn-monthly-budget": "rests on acknowledged assumed prices, not published ones: tf-aws-gpu-h200-burst"},
    ),
    "unpriced-type-acknowledged-over-budget": (
        "prod",
        both_of(
            requirement("h200-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]),
            assumed_price(KNP, "h200-burst", "spec.template.metadata.labels", 200),
        ),
        None,
        {
            "cost-stack-warn-monthly-budget": "assumed $200.00/node-hour",
            "cost-stack-enforce-monthly-budget": "over the budget of $200,000.00",
        },
    ),
    "assumed-price-below-floor": (  # issue 37: $0.01/node-hour for eight B200 turned an overrun into an advisory
        "prod",
        both_of(
            requirement("h200-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]),
            gpu_limit("h200-burst", 160),
            assumed_price(KNP, "h200-burst", "spec.template.metadata.labels", 0.01),
        ),
        config_change("gpu-stack-limit-total-gpus", maxGpus=400),
        {
            "cost-stack-enforce-monthly-budget": "assumes $0.01/node-hour, below the floor of $24.00 (8 B200 at $3.00",
            "cost-stack-warn-monthly-budget": "assumed $0.01/node-hour, counted at the floor $24.00",
        },
    ),
    "assumed-price-at-floor-over-budget": (  # counted at the floor, the same pool is over the budget
        "prod",
        both_of(
            requirement("h200-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]),
            gpu_limit("h200-burst", 400),
            assumed_price(KNP, "h200-burst", "spec.template.metadata.labels", 0.01),
        ),
        config_change("gpu-stack-limit-total-gpus", maxGpus=800),
        {
            "cost-stack-enforce-monthly-budget": "over the budget of $200,000.00",
            "cost-stack-warn-monthly-budget": "counted at the floor $24.00",
        },
    ),
    "assumed-price-without-floor": (
        "prod",
        both_of(
            requirement("h200-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]),
            assumed_price(KNP, "h200-burst", "spec.template.metadata.labels", 90),
        ),
        config_change("cost-stack-enforce-monthly-budget", assumedPriceFloors={"H200": 3.0}),
        {
            "cost-stack-enforce-monthly-budget": "assumedPriceFloors has no floor for it (floors: H200)",
            "cost-stack-warn-monthly-budget": "rests on acknowledged assumed prices",
        },
    ),
    "unpriced-type-in-dev": (
        "dev",
        both_of(requirement("l40s-burst", INSTANCE_TYPE, ["p6-b200.48xlarge"]), gpu_limit("l40s-burst", 16)),
        None,
        {  # reported, not blocked, outside prod (dev also refuses the type and its GPUs, as before)
            "cost-stack-warn-monthly-budget": "Cannot verify the monthly budget",
            "gpu-pool-allowed-instance-types": "uses instance type p6-b200.48xlarge",
            "gpu-stack-limit-total-gpus": "can run",
        },
    ),
    "gcp-prod-without-acknowledgement": (
        "gcp-prod",  # the spot pool moved to a4-highgpu-8g, which has no published price, and no assumedPrice label
        _set((NP, "h200-spot", "nodeConfig.machineType", "a4-highgpu-8g")),
        None,
        {
            "cost-stack-warn-monthly-budget": "no published spot price for a4-highgpu-8g",
            "cost-stack-enforce-monthly-budget": "This environment does not accept an unknown price",
        },
    ),
    "on-demand-in-dev": (
        "dev",
        requirement("l40s-burst", CAPACITY_TYPE, ["on-demand"]),
        None,
        {"spot-pool-require-spot-only": "buys on-demand capacity", "cost-stack-warn-monthly-budget": "GPU pools $2,717.06"},
    ),
    "fallback-in-dev": (
        "dev",
        requirement("l40s-burst", CAPACITY_TYPE, ["spot", "on-demand"]),
        None,
        {  # and its ceiling is priced for the fallback: the whole burst on-demand
            "spot-pool-require-spot-only": "prefers spot but falls back to on-demand",
            "cost-stack-warn-monthly-budget": "GPU pools $2,717.06",
        },
    ),
    "spot-only-serving-pool": (
        "prod",
        requirement("h200-base", CAPACITY_TYPE, ["spot"]),
        None,
        {"spot-serving-pool-require-on-demand-base": "Pool 'h200' serves Triton release 'tf-triton-llm' with 0 non-spot"},
    ),
    "prod-min-replicas-on-one-node": (
        "prod",
        _set(
            (
                RELEASE,
                "triton-llm",
                "values.topologySpread.hostname",
                {"maxSkew": 8, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": None},
            )
        ),
        None,
        {"triton-release-require-min-replicas-apart": "may run all 2 replicas of its minimum on one node"},
    ),
    "prod-triton-without-rollout": (
        "prod",
        _set((RELEASE, "triton-vision", "values.rollout", {"enabled": False})),
        None,
        {"triton-release-require-rollout": "'tf-triton-vision' has no canary rollout"},
    ),
    "triton-without-toleration": (
        "prod",
        _set((RELEASE, "triton-llm", "values.tolerations", [])),
        None,
        {"triton-release-tolerate-pool-taint": "does not tolerate pool 'h200''s taint"},
    ),
    "triton-wildcard-toleration": (
        "prod",
        _set(
            (
                RELEASE,
                "triton-llm",
                "values.tolerations",
                [{"operator": "Exists"}, {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
            )
        ),
        None,
        {"triton-release-tolerate-pool-taint": "tolerates every taint"},
    ),
    "triton-without-pool": (
        "prod",
        _set((RELEASE, "triton-vision", "values.nodeSelector", {})),
        None,
        {"triton-release-tolerate-pool-taint": "is not pinned to a GPU pool"},
    ),
    "triton-open-model-control": (
        "prod",
        _set((RELEASE, "triton-llm", "values.restrictedApis.groups", [])),
        None,
        {"triton-release-require-secure-access": "model-control APIs model-repository, model-config"},
    ),
    "triton-public-load-balancer": (
        "gcp-prod",
        _set((RELEASE, "triton-vision", "values.service", {"type": "LoadBalancer", "annotations": {}})),
        None,
        {"triton-release-require-secure-access": "public through a LoadBalancer Service without the cloud's internal"},
    ),
    "triton-internet-facing-nlb": (  # issue 37: any annotation once counted as internal, even internet-facing
        "prod",
        _set(
            (
                RELEASE,
                "triton-vision",
                "values.service",
                {
                    "type": "LoadBalancer",
                    "annotations": {
                        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
                        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
                    },
                },
            )
        ),
        None,
        {"triton-release-require-secure-access": "public through a LoadBalancer Service without the cloud's internal"},
    ),
    "triton-node-port": (
        "prod",
        _set((RELEASE, "triton-vision", "values.service.type", "NodePort")),
        None,
        {"triton-release-require-secure-access": "public through a NodePort Service"},
    ),
    "triton-ingress-enabled-as-text": (
        "gcp-prod",
        _set((RELEASE, "triton-llm", "values.ingress.enabled", "true")),
        None,
        {"triton-release-require-secure-access": "public through an Ingress"},
    ),
    "triton-internal-open-to-anywhere": (
        "prod",
        _set(
            (
                RELEASE,
                "triton-vision",
                "values.service",
                {
                    "type": "LoadBalancer",
                    "annotations": {
                        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
                        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                    },
                    "loadBalancerSourceRanges": ["0.0.0.0/0"],
                },
            )
        ),
        None,
        {"triton-release-require-secure-access": "from every address (service.loadBalancerSourceRanges 0.0.0.0/0)"},
    ),
    "eks-network-policy-agent-off": (
        "prod",
        _set(("aws:eks/addon:Addon", "vpc-cni", "configurationValues", DELETE)),
        None,
        {"cluster-require-network-policy-enforcement": "without enableNetworkPolicy"},
    ),
    "eks-vpc-cni-too-old": (
        "prod",
        _set(("aws:eks/addon:Addon", "vpc-cni", "addonVersion", "v1.13.4-eksbuild.1")),
        None,
        {"cluster-require-network-policy-enforcement": "older than v1.14.0"},
    ),
    "gke-legacy-datapath": (
        "gcp-prod",
        _set(("gcp:container/cluster:Cluster", "", "datapathProvider", "LEGACY_DATAPATH")),
        None,
        {"cluster-require-network-policy-enforcement": "datapathProvider LEGACY_DATAPATH"},
    ),
    "unencrypted-bucket": (
        "prod",
        drop("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"),
        None,
        {"s3-bucket-require-encryption": "has no default encryption"},
    ),
    "unversioned-bucket": (
        "prod",
        _set(("aws:s3/bucketVersioning:BucketVersioning", "", "versioningConfiguration.status", "Suspended")),
        None,
        {"s3-bucket-require-versioning": "versioning: Suspended"},
    ),
    "public-bucket": (
        "prod",
        _set(("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "", "restrictPublicBuckets", False)),
        None,
        {"s3-bucket-block-public-access": "leaves restrictPublicBuckets off"},
    ),
    "bucket-without-block": (
        "dev",
        drop("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"),
        None,
        {"s3-bucket-block-public-access": "has no public access block"},
    ),
    "plain-http-bucket": (
        "prod",
        _set(("aws:s3/bucketPolicy:BucketPolicy", "", "policy", tls_only_policy("tf-prod-models").replace('"Deny"', '"Allow"'))),
        None,
        {"s3-bucket-require-tls": "accepts plain-HTTP requests (1 bucket policy without that statement)"},
    ),
    "gcs-acl-access": (
        "gcp-prod",
        _set(("gcp:storage/bucket:Bucket", "", "uniformBucketLevelAccess", False)),
        None,
        {"gcs-bucket-require-uniform-access": "uniformBucketLevelAccess False"},
    ),
    "gcs-public": (
        "gcp-prod",
        _set(("gcp:storage/bucket:Bucket", "", "publicAccessPrevention", "inherited")),
        None,
        {"gcs-bucket-prevent-public-access": "publicAccessPrevention inherited"},
    ),
    "static-keys-in-values": (
        "prod",
        _set((RELEASE, "triton-llm", "values.env.AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")),
        None,
        {"k8s-disallow-static-cloud-credentials": "at env.AWS_ACCESS_KEY_ID"},
    ),
    "static-keys-in-secret": (
        "prod",
        with_secret,
        None,
        {
            "k8s-disallow-static-cloud-credentials": (
                "Secret 's3-keys' carries static cloud credentials at stringData.aws_secret_access_key"
            )
        },
    ),
    "static-keys-in-env": (
        "gcp-prod",
        with_deployment(
            "nvcr.io/nvidia/tritonserver:26.07-py3", [{"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": "/k/key.json"}]
        ),
        None,
        {"k8s-disallow-static-cloud-credentials": "name=GOOGLE_APPLICATION_CREDENTIALS"},
    ),
    "alert-credentials-in-values": (  # issue 37: alert credentials in clear passed beside a secret sibling
        "prod",
        lambda plan: inputs(plan, RELEASE, "tf-monitoring")["values"].setdefault("alertmanager", {}).update(
            config={"receivers": [{"name": "oncall", "slack_configs": [{"api_url": "https://hooks.slack.example/T0/B0/x"}]}]}
        ),
        None,
        {"k8s-alert-credentials-require-secret": "at values.alertmanager.config.receivers[0].slack_configs[0].api_url"},
    ),
    "key-id-in-config-map": ("prod", with_config_map, None, {"k8s-disallow-static-cloud-credentials": "at data.notes"}),
    "unpinned-chart": (
        "prod",
        _set((RELEASE, "gpu-operator", "version", "")),
        None,
        {"helm-release-require-pinned-chart": "Helm chart 'gpu-operator' of 'tf-gpu-operator' has version 'unset'"},
    ),
    "ranged-chart": (
        "prod",
        _set((RELEASE, "gpu-operator", "version", "^26.7.0")),
        None,
        {"helm-release-require-pinned-chart": "has version '^26.7.0'"},
    ),
    "latest-triton-image": (
        "prod",
        _set((RELEASE, "triton-vision", "values.image.tag", "latest")),
        None,
        {"k8s-image-require-pinned-tag": "image: nvcr.io/nvidia/tritonserver:latest uses the moving tag latest"},
    ),
    "unreviewed-tag-in-prod": (
        "prod",
        _set((RELEASE, "triton-vision", "values.image.tag", "26.07-py3-hotfix")),
        None,
        {"k8s-image-require-pinned-tag": "matches none of allowedTagPatterns"},
    ),
    "bogus-digest-in-gcp-prod": (
        "gcp-prod",
        with_deployment("nvcr.io/nvidia/tritonserver@sha256:0123"),
        None,
        {"k8s-image-require-pinned-tag": "has a malformed digest 'sha256:0123'"},
    ),
    "nightly-in-dev": (
        "dev",
        _set((RELEASE, "triton", "values.image.tag", "nightly")),
        None,
        {"k8s-image-require-pinned-tag": "uses the moving tag nightly"},
    ),
    "untagged-workload-image": (
        "prod",
        with_deployment("busybox"),
        None,
        {"k8s-image-require-pinned-tag": "busybox has no tag (means latest)"},
    ),
    "unprotected-node-pool": (
        "prod",
        unprotect(KNP, "l40s-base"),
        None,
        {"stateful-resource-require-protect": "'tf-aws-gpu-l40s-base' (kubernetes:karpenter.sh/v1:NodePool) is not protected"},
    ),
    "gke-deletable": (
        "gcp-prod",
        _set(("gcp:container/cluster:Cluster", "", "deletionProtection", False)),
        None,
        {"stateful-resource-require-protect": "has deletionProtection false"},
    ),
    "untagged-bucket": (
        "prod",
        _set(("aws:s3/bucket:Bucket", "", "tags", {"team": "ml-platform"})),
        None,
        {"aws-resource-require-cost-tags": "lacks cost-allocation tag(s) cost-center (has: team)"},
    ),
    "unlabelled-node-pool": (
        "gcp-prod",
        _set((NP, "h200-spot", "nodeConfig.resourceLabels", DELETE)),
        None,
        {"gcp-resource-require-cost-labels": "lacks cost-allocation label(s) team, cost-center in nodeConfig.resourceLabels"},
    ),
    "gke-label-with-managed-driver": (
        "gcp-prod",
        _set((NP, "l4-spot", "nodeConfig.labels.gke-no-default-nvidia-gpu-device-plugin", "true")),
        None,
        {"gke-gpu-driver-mode-consistent": "leaving the nodes with no driver"},
    ),
    "gke-driver-unset": (
        "gcp-prod",
        _set((NP, "h200-reservation", "nodeConfig.guestAccelerators", [{"count": 8, "type": "nvidia-h200-141gb"}])),
        None,
        {"gke-gpu-driver-mode-consistent": "gpuDriverVersion is unset"},
    ),
    "gke-operator-driver-on-cos": (
        "gcp-prod",
        gke_operator_mode(image="COS_CONTAINERD", installer=True),
        None,
        {"gke-gpu-driver-mode-consistent": "does not run on imageType COS_CONTAINERD"},
    ),
    "gke-operator-on-cos-without-installer": (
        "gcp-prod",
        gke_operator_mode(image="COS_CONTAINERD", driver=False),
        None,
        {"gke-gpu-driver-mode-consistent": "needs Google's driver-installer DaemonSet"},
    ),
    "gke-latest-driver-on-ubuntu": (
        "gcp-prod",
        _set((NP, "h200-reservation", "nodeConfig.imageType", "UBUNTU_CONTAINERD")),
        None,
        {"gke-gpu-driver-mode-consistent": "LATEST is documented for COS only"},
    ),
    "gke-operator-without-label": (
        "gcp-prod",
        gke_operator_mode(label=False),
        None,
        {"gke-gpu-driver-mode-consistent": "without the label"},
    ),
    "gke-operator-driver-off": (
        "gcp-prod",
        gke_operator_mode(driver=False),
        None,
        {"gke-gpu-driver-mode-consistent": "nothing installs the driver"},
    ),
    "gke-managed-with-operator-driver": (
        "gcp-prod",
        lambda plan: add_gpu_operator(plan, {"devicePlugin": {"enabled": False}}),
        None,
        {"gke-gpu-driver-mode-consistent": "would install a second one"},
    ),
    "gr6-system-nodes": (  # issue 37: L4 GPUs in the system node group passed every GPU policy
        "prod",
        _set((NG, "system", "instanceTypes", ["gr6.8xlarge"])),
        None,
        {
            "gpu-pool-allowed-instance-types": "uses instance type gr6.8xlarge",
            "gpu-pool-require-gpu-taint": "GPU pool 'tf-aws-eks_system' lacks the GPU taint",
            "gpu-stack-limit-total-gpus": "instance type gr6.8xlarge has no known GPU count",
            "cost-stack-enforce-monthly-budget": "is unknown: tf-aws-eks_system: no published on-demand price for gr6.8xlarge",
            "cost-stack-warn-monthly-budget": "Cannot verify the monthly budget",
        },
    ),
    "trn2-system-nodes": (  # issue 37: 20-40 Trainium2 nodes as system nodes
        "prod",
        both_of(
            _set((NG, "system", "instanceTypes", ["trn2.48xlarge"])),
            _set((NG, "system", "scalingConfig", {"minSize": 20, "maxSize": 40, "desiredSize": 20})),
        ),
        None,
        {
            "gpu-pool-allowed-instance-types": "uses instance type trn2.48xlarge",
            "gpu-pool-require-gpu-taint": "GPU pool 'tf-aws-eks_system' lacks the GPU taint",
            "gpu-stack-limit-total-gpus": "instance type trn2.48xlarge has no known GPU count",
            "cost-stack-enforce-monthly-budget": "is unknown: tf-aws-eks_system: no published on-demand price for trn2.48xlarge",
            "cost-stack-warn-monthly-budget": "Cannot verify the monthly budget",
        },
    ),
    "tpu-system-pool": (
        "gcp-prod",
        _set((NP, "system", "nodeConfig.machineType", "ct6e-standard-4t")),
        None,
        {
            "gpu-pool-allowed-instance-types": "uses instance type ct6e-standard-4t",
            "gpu-pool-require-gpu-taint": "GPU pool 'tf-gcp-system' lacks the GPU taint",
            "gpu-stack-limit-total-gpus": "instance type ct6e-standard-4t has no known GPU count",
            "cost-stack-enforce-monthly-budget": "is unknown: tf-gcp-system: no published on-demand price for ct6e-standard-4t",
            "cost-stack-warn-monthly-budget": "Cannot verify the monthly budget",
        },
    ),
    "unknown-in-preview": (
        "prod",
        _set((KNP, "l40s-burst", "spec.template.spec.requirements", "<unknown>")),
        None,
        {
            p: "cannot run during preview: string value at .spec.template.spec.requirements"
            for p in (
                "gpu-pool-allowed-instance-types",
                "gpu-pool-require-gpu-taint",
                "gpu-stack-limit-total-gpus",
                "cost-stack-enforce-monthly-budget",
                "cost-stack-warn-monthly-budget",
                "spot-serving-pool-require-on-demand-base",
                "triton-release-require-min-replicas-apart",
                "triton-release-tolerate-pool-taint",
            )
        },
    ),
}

# Variants that change a field and must stay compliant.
def _no_network_policies(plan):
    for release in plan["resources"]:
        if release["type"] == RELEASE and "networkPolicy" in release["inputs"].get("values", {}):
            release["inputs"]["values"]["networkPolicy"]["enabled"] = False


COMPLIANT_VARIANTS = {
    "gke-legacy-datapath-without-network-policies": (
        "gcp-prod",
        lambda plan: (
            _set(("gcp:container/cluster:Cluster", "", "datapathProvider", "LEGACY_DATAPATH"))(plan),
            _no_network_policies(plan),
        ),
    ),
    "gke-calico-network-policy": (
        "gcp-prod",
        lambda plan: (
            _set(("gcp:container/cluster:Cluster", "", "datapathProvider", DELETE))(plan),
            inputs(plan, "gcp:container/cluster:Cluster").update(networkPolicy={"enabled": True, "provider": "CALICO"}),
        ),
    ),
    "gke-operator-managed": ("gcp-prod", gke_operator_mode()),
    "gke-operator-on-cos": ("gcp-prod", gke_operator_mode(image="COS_CONTAINERD", driver=False, installer=True)),
    "gke-managed-with-plugin-less-operator": (
        "gcp-prod",
        lambda plan: add_gpu_operator(plan, {"driver": {"enabled": False}, "devicePlugin": {"enabled": False}}),
    ),
    "aws-tags-from-provider": (
        "prod",
        lambda plan: (
            _set(("aws:s3/bucket:Bucket", "", "tags", DELETE))(plan),
            find(plan, "pulumi:providers:aws")["inputs"].update(
                defaultTags=json.dumps({"tags": {"team": "a", "cost-center": "b"}})
            ),
        ),
    ),
    "triton-internal-open-to-anywhere-acknowledged": (
        "prod",
        CASES["triton-internal-open-to-anywhere"][1],
        config_change("triton-release-require-secure-access", acknowledgeOpenInternalInference=["tf-triton-vision"]),
    ),
    "digest-pinned-image": ("prod", with_deployment("busybox@sha256:" + "0" * 64)),
    "kms-encryption": (
        "prod",
        _set(
            (
                "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
                "",
                "rules",
                [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": "arn:aws:kms:k"}}],
            )
        ),
    ),
}


@pytest.mark.parametrize("stack", ["dev", "prod", "gcp-prod"])
def test_compliant_plans_pass_every_policy(pack, bases, stack):
    verdicts = both(pack, bases[stack], stack_policy_config(stack))
    assert verdicts == []  # gcp-prod included: every pool it enables is priced (catalog.yaml, GCP rows)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_violation_is_caught_by_its_policy(pack, bases, baseline, case):
    stack, mutate, change_config, expected = CASES[case]
    plan, config = copy.deepcopy(bases[stack]), stack_policy_config(stack)
    before = baseline(stack)
    if mutate:
        mutate(plan)
    if change_config:
        change_config(config)
    new = [v for v in both(pack, plan, config) if v not in before]
    assert sorted({v.policy for v in new}) == sorted(expected), [(v.policy, v.message) for v in new]
    for policy, fragment in expected.items():
        assert any(fragment in v.message for v in new if v.policy == policy), [v.message for v in new if v.policy == policy]


@pytest.mark.parametrize("case", sorted(COMPLIANT_VARIANTS))
def test_compliant_variants_pass(pack, bases, baseline, case):
    stack, mutate, *change_config = COMPLIANT_VARIANTS[case]  # and, for some, a change to the policy config
    plan, config = copy.deepcopy(bases[stack]), stack_policy_config(stack)
    before = baseline(stack)
    mutate(plan)
    for change in change_config:
        change(config)
    assert [v for v in both(pack, plan, config) if v not in before] == []


def test_every_policy_has_a_violation_case():
    covered = {policy for *_, expected in CASES.values() for policy in expected}
    assert covered == {p.name for p in load_policies(PACK_DIR)}


def test_disabled_and_overridden_levels_are_applied_like_the_engine(pack, bases):
    plan = copy.deepcopy(bases["prod"])
    requirement("h200-burst", INSTANCE_TYPE, ["p5.48xlarge"])(plan)
    config = stack_policy_config("prod")
    config["gpu-pool-allowed-instance-types"]["enforcementLevel"] = "advisory"
    assert {(v.policy, v.enforcement) for v in both(pack, plan, config)} == {("gpu-pool-allowed-instance-types", "advisory")}
    config["gpu-pool-allowed-instance-types"] = "disabled"
    assert both(pack, plan, config) == []


def test_budget_policy_prices_the_plan_like_the_cost_model(bases):
    """The pack reads node groups back and prices them with the shared cost model: same totals as the plan."""
    from policy_cases import stack_resource

    from policies._pools import gpu_pools, stack_spend

    for stack in ("dev", "prod", "gcp-prod"):  # gcp-prod: priced from the catalog's us-central1 GCP rows, like the plan
        plan = bases[stack]
        pools = gpu_pools([stack_resource(r["type"], r["inputs"], r["name"]) for r in plan["resources"]])
        assert stack_spend(pools, "floor").known_usd == plan["cost"]["monthlyFloorUsd"]
        assert stack_spend(pools, "ceiling").known_usd == plan["cost"]["monthlyCeilingUsd"]
        assert sum(p.max_gpus for p in pools) == plan["cost"]["maxGpus"]


@pytest.mark.parametrize("stack", ["dev", "prod", "gcp-prod"])
def test_budget_policies_count_the_whole_bill_like_the_plan(bases, stack):
    """The resources' lines and the Platform's registered ones (traffic, storage, volumes, logs...) add up to the
    plan's non-GPU totals, on both bases."""
    from policy_cases import stack_resource

    from policies._platform import platform_lines

    plan = bases[stack]
    resources = [stack_resource(r["type"], r["inputs"], r["name"]) for r in plan["resources"]]
    lines = platform_lines(resources)
    assert {"traffic-cross-zone", "bucket-storage", "log-ingestion", "volumes-boot"} <= {line.name for line in lines}
    totals = plan["cost"]["totals"]
    assert round(sum(line.floor_usd for line in lines), 2) == totals["otherFloorUsd"]
    assert round(sum(line.ceiling_usd for line in lines), 2) == totals["otherCeilingUsd"]


def test_policy_config_is_validated_against_each_schema():
    meta = policy_meta(load_policies(PACK_DIR))
    bad = {
        "gpu-stack-limit-total-gpus": {"maxGpus": "many"},
        "cost-stack-enforce-monthly-budget": {"basis": "average"},
        "spot-pool-require-spot-only": "sometimes",
        "gpu-pool-require-gpu-taint": {"extra": 1},
        "no-such-policy": "advisory",
    }
    with pytest.raises(PackConfigError) as error:
        reconcile(meta, bad)
    text = str(error.value)
    for fragment in (
        "gpu-stack-limit-total-gpus.maxGpus: 'many' is not of type 'integer'",
        "'average' is not one of",
        'spot-pool-require-spot-only.enforcementLevel: "sometimes"',
        "gpu-pool-require-gpu-taint: Additional properties",
        "no-such-policy: no such policy",
    ):
        assert fragment in text


def test_a_changed_resource_and_the_stack_still_reach_the_pack(pack, bases, baseline):
    """The remembering stub answers only repeats: a case's changed resource and its stack go to the real pack."""
    baseline("prod")
    plan = copy.deepcopy(bases["prod"])
    inputs(plan, KNP, "h200-burst")["note"] = "a change no other test makes"
    before = len(pack.stub.sent)
    analyze(pack, plan, stack_policy_config("prod"))
    analyses = [m for m in pack.stub.sent[before:] if m.startswith("Analyze")]  # Configure, GetAnalyzerInfo: as needed
    assert analyses == ["Analyze", "AnalyzeStack"]  # the changed NodePool, then the changed stack


def test_a_stack_policy_config_change_resends_the_stack_and_not_the_resources(pack, bases, baseline):
    """A changed budget reaches the pack's stack policies; the resource policies' answers stand, their config being
    unchanged. (A changed resource policy's config is not answered from memory: the verdicts of
    test_disabled_and_overridden_levels_are_applied_like_the_engine would keep their old levels.)"""
    baseline("prod")
    config = stack_policy_config("prod")
    config_change("cost-stack-warn-monthly-budget", monthlyUsd=123457)(config)
    before = len(pack.stub.sent)
    analyze(pack, copy.deepcopy(bases["prod"]), config)
    assert [m for m in pack.stub.sent[before:] if m.startswith("Analyze")] == ["AnalyzeStack"]
