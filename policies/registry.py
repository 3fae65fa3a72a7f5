"""Every policy of the pack, in a stable order. Adding a policy: one module in rules/, one line here.

Policy names are stable ids: a renamed policy is a retired one, and a retired name is never reused.
"""

from policies.rules import (
    aws_resource_require_cost_tags,
    cluster_require_network_policy_enforcement,
    cost_stack_enforce_monthly_budget,
    cost_stack_warn_monthly_budget,
    gcp_resource_require_cost_labels,
    gcs_bucket_prevent_public_access,
    gcs_bucket_require_uniform_access,
    gke_gpu_driver_mode_consistent,
    gpu_pool_allowed_instance_types,
    gpu_pool_require_gpu_taint,
    gpu_stack_limit_total_gpus,
    helm_release_require_pinned_chart,
    k8s_alert_credentials_require_secret,
    k8s_disallow_static_cloud_credentials,
    k8s_image_require_pinned_tag,
    s3_bucket_block_public_access,
    s3_bucket_require_encryption,
    s3_bucket_require_tls,
    s3_bucket_require_versioning,
    spot_pool_require_spot_only,
    spot_serving_pool_require_on_demand_base,
    stateful_resource_require_protect,
    triton_release_require_min_replicas_apart,
    triton_release_require_rollout,
    triton_release_require_secure_access,
    triton_release_tolerate_pool_taint,
)

PACK_NAME = "tritonfleet-guardrails"
PACK_DESCRIPTION = "GPU limits, budgets, spot mix and security guardrails for tritonfleet GPU inference platforms."

MODULES = (
    gpu_pool_allowed_instance_types,
    gpu_pool_require_gpu_taint,
    gpu_stack_limit_total_gpus,
    gke_gpu_driver_mode_consistent,
    cost_stack_enforce_monthly_budget,
    cost_stack_warn_monthly_budget,
    spot_pool_require_spot_only,
    spot_serving_pool_require_on_demand_base,
    triton_release_tolerate_pool_taint,
    triton_release_require_secure_access,
    triton_release_require_min_replicas_apart,
    triton_release_require_rollout,
    cluster_require_network_policy_enforcement,
    s3_bucket_require_encryption,
    s3_bucket_require_versioning,
    s3_bucket_block_public_access,
    s3_bucket_require_tls,
    gcs_bucket_require_uniform_access,
    gcs_bucket_prevent_public_access,
    k8s_disallow_static_cloud_credentials,
    k8s_alert_credentials_require_secret,
    helm_release_require_pinned_chart,
    k8s_image_require_pinned_tag,
    stateful_resource_require_protect,
    aws_resource_require_cost_tags,
    gcp_resource_require_cost_labels,
)
ALL_POLICIES = [module.POLICY for module in MODULES]
