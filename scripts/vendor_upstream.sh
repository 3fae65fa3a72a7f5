#!/usr/bin/env bash
# Refresh the pinned upstream chart data under tests/upstream/ (the tests read it: every key our values set must exist
# in the chart's defaults, our manifests must validate against the CRDs). Pulls the charts with `helm pull` from their
# real repositories and copies exactly the files listed in tests/upstream/README.md, then prints their sizes and sha256
# for that README's table (a test compares the table with the files).
#
# Needs helm (v3.8+, for OCI), curl and network access to the chart repositories. It cannot run in this project's
# offline sandbox; the copies in the repository were taken from the team's saved upstream snapshot (see the README).
# Versions: keep them equal to tritonfleet/core/pins.py; a new version is a new folder (<chart>-<version>), and the
# tests' paths (tests/conftest.py UPSTREAM_CHARTS and the chart folder names in the tests) move with it.
set -euo pipefail
cd "$(dirname "$0")/.."

GPU_OPERATOR=v26.7.0
KUBE_PROMETHEUS_STACK=88.5.3
PROMETHEUS_ADAPTER=5.3.0
KARPENTER=1.14.1
AWS_LOAD_BALANCER_CONTROLLER=3.5.0
# Argo Rollouts: the controller version of chart argo-rollouts (pins.ARGO_ROLLOUTS_CHART), whose tag holds the CRDs.
ARGO_ROLLOUTS=v1.9.1
# KEDA and its HTTP add-on (pins.KEDA_CHART, pins.KEDA_HTTP_ADD_ON_CHART: chart version = app version), CRDs from the tags.
KEDA=2.20.2
KEDA_ADD_ONS_HTTP=0.15.0
# Gateway API: the standard-channel CRDs of the version GKE installs (tritonfleet/clouds/gcp/facts.py).
GATEWAY_API=v1.4.0

dest=tests/upstream
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pull() {  # pull REPO_OR_OCI_REF CHART VERSION: untar into $work/CHART-VERSION/CHART
  local ref=$1 chart=$2 version=$3
  echo "helm pull $ref ($chart $version)"
  if [[ $ref == oci://* ]]; then
    helm pull "$ref" --version "$version" --untar --untardir "$work/$chart-$version"
  else
    helm pull "$chart" --repo "$ref" --version "$version" --untar --untardir "$work/$chart-$version"
  fi
}

copy() {  # copy SRC DEST_RELATIVE_TO_tests/upstream
  mkdir -p "$dest/$(dirname "$2")"
  cp "$1" "$dest/$2"
}

pull https://helm.ngc.nvidia.com/nvidia gpu-operator "$GPU_OPERATOR"
src="$work/gpu-operator-$GPU_OPERATOR/gpu-operator"
for f in Chart.yaml values.yaml; do copy "$src/$f" "gpu-operator-$GPU_OPERATOR/$f"; done

pull https://prometheus-community.github.io/helm-charts kube-prometheus-stack "$KUBE_PROMETHEUS_STACK"
src="$work/kube-prometheus-stack-$KUBE_PROMETHEUS_STACK/kube-prometheus-stack"
for f in Chart.yaml values.yaml; do copy "$src/$f" "kube-prometheus-stack-$KUBE_PROMETHEUS_STACK/$f"; done
# The Prometheus Operator CRDs ship in the chart's `crds` sub-chart (charts/crds/crds/ in the helm-charts repository);
# if a new version moves them, cp fails here: find them under charts/crds/ and adjust.
for crd in podmonitors prometheusrules servicemonitors; do
  copy "$src/charts/crds/crds/crd-$crd.yaml" "kube-prometheus-stack-$KUBE_PROMETHEUS_STACK/crds/crd-$crd.yaml"
done

# The default rule templates (rendered by the tests with our values): the helpers they include and every rule group.
copy "$src/templates/_helpers.tpl" "kube-prometheus-stack-$KUBE_PROMETHEUS_STACK/templates/_helpers.tpl"
for rules in "$src"/templates/prometheus/rules-1.14/*.yaml; do
  copy "$rules" "kube-prometheus-stack-$KUBE_PROMETHEUS_STACK/templates/prometheus/rules-1.14/$(basename "$rules")"
done

pull https://prometheus-community.github.io/helm-charts prometheus-adapter "$PROMETHEUS_ADAPTER"
src="$work/prometheus-adapter-$PROMETHEUS_ADAPTER/prometheus-adapter"
for f in Chart.yaml values.yaml; do copy "$src/$f" "prometheus-adapter-$PROMETHEUS_ADAPTER/$f"; done

pull oci://public.ecr.aws/karpenter/karpenter karpenter "$KARPENTER"
src="$work/karpenter-$KARPENTER/karpenter"
for f in Chart.yaml values.yaml; do copy "$src/$f" "karpenter-$KARPENTER/$f"; done
for crd in karpenter.k8s.aws_ec2nodeclasses karpenter.sh_nodeclaims karpenter.sh_nodepools; do
  copy "$src/crds/$crd.yaml" "karpenter-$KARPENTER/crds/$crd.yaml"
done
# AWS's getting-started template (controller IAM policy, interruption queue and its EventBridge rules), as the
# Karpenter getting-started guide fetches it.
curl -fsSL "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v$KARPENTER/website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml" \
  -o "$work/cloudformation.yaml"
copy "$work/cloudformation.yaml" "karpenter-$KARPENTER/getting-started-cloudformation.yaml"

# Argo Rollouts' Rollout and AnalysisTemplate CRDs, from the controller's tag (the chart installs the same files).
for crd in rollout analysis-template; do
  curl -fsSL "https://raw.githubusercontent.com/argoproj/argo-rollouts/$ARGO_ROLLOUTS/manifests/crds/$crd-crd.yaml" \
    -o "$work/$crd-crd.yaml"
  copy "$work/$crd-crd.yaml" "argo-rollouts-$ARGO_ROLLOUTS/crds/$crd-crd.yaml"
done

# KEDA's ScaledObject and the HTTP add-on's InterceptorRoute CRDs, from the projects' tags (the charts template the same).
curl -fsSL "https://raw.githubusercontent.com/kedacore/keda/v$KEDA/config/crd/bases/keda.sh_scaledobjects.yaml" \
  -o "$work/keda.sh_scaledobjects.yaml"
copy "$work/keda.sh_scaledobjects.yaml" "keda-$KEDA/crds/keda.sh_scaledobjects.yaml"
curl -fsSL "https://raw.githubusercontent.com/kedacore/http-add-on/v$KEDA_ADD_ONS_HTTP/config/crd/bases/http.keda.sh_interceptorroutes.yaml" \
  -o "$work/http.keda.sh_interceptorroutes.yaml"
copy "$work/http.keda.sh_interceptorroutes.yaml" "keda-add-ons-http-$KEDA_ADD_ONS_HTTP/crds/http.keda.sh_interceptorroutes.yaml"
# The Gateway API's Gateway and HTTPRoute CRDs (standard channel), from the release tag.
for crd in gateways httproutes; do
  curl -fsSL "https://raw.githubusercontent.com/kubernetes-sigs/gateway-api/$GATEWAY_API/config/crd/standard/gateway.networking.k8s.io_$crd.yaml" \
    -o "$work/$crd.yaml"
  copy "$work/$crd.yaml" "gateway-api-$GATEWAY_API/crds/gateway.networking.k8s.io_$crd.yaml"
done

pull https://aws.github.io/eks-charts aws-load-balancer-controller "$AWS_LOAD_BALANCER_CONTROLLER"
src="$work/aws-load-balancer-controller-$AWS_LOAD_BALANCER_CONTROLLER/aws-load-balancer-controller"
for f in Chart.yaml values.yaml; do copy "$src/$f" "aws-load-balancer-controller-$AWS_LOAD_BALANCER_CONTROLLER/$f"; done
# The controller's IAM policy of the same tag is product data (the program creates it), kept beside the AWS facts.
curl -fsSL "https://raw.githubusercontent.com/kubernetes-sigs/aws-load-balancer-controller/v$AWS_LOAD_BALANCER_CONTROLLER/docs/install/iam_policy.json" \
  -o "tritonfleet/clouds/aws/data/aws-load-balancer-controller-v$AWS_LOAD_BALANCER_CONTROLLER-iam-policy.json"

echo
echo "Files for the table in $dest/README.md (bytes, sha256):"
(cd "$dest" && find . -type f ! -name README.md | sort | while read -r f; do
  printf '%s %s %s\n' "${f#./}" "$(wc -c <"$f" | tr -d ' ')" "$(sha256sum "$f" | cut -d' ' -f1)"
done)
