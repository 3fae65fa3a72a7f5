"""A test-only third cloud, "toy": proof that a cloud is a plugin (issue #35, point 2).

Everything it knows lives in this folder, as a real cloud's lives in tritonfleet/clouds/<cloud>/ and
components/<cloud>/: its `Cloud` object (cloud.py), config rules (config_rules.py), bill (bill.py), planned resources
(resources.py), catalog rows (catalog.py) and Pulumi adapter (adapter.py, plain component resources and a Kubernetes
provider on a stand-in kubeconfig). It is registered only for a block (`tritonfleet.core.cloud.registered`);
planning.py plans a stack with it (tests/test_third_cloud.py). No fact here is a real cloud's.
"""
