"""Monitoring as plain data: kube-prometheus-stack values, PrometheusRules and Grafana dashboards built from the stack config.

Nothing here imports Pulumi; `components/k8s/monitoring.py` turns these dicts into resources.
"""
