# Two entry points, both safe on a fresh machine: `make plan STACK=<stack>` and `make test`.
# The virtualenv is ./venv, the same one the Pulumi CLI uses (Pulumi.yaml: virtualenv: venv).
VENV ?= venv
STACK ?= dev
PYTHON ?= python3

$(VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	# The real tritonserver binary for tests/test_models_triton.py. --no-deps: only the binary is used, and the wheel's
	# tritonclient[grpc] requirement pins protobuf 6, which pulumi-policy excludes.
	$(VENV)/bin/pip install --quiet --no-deps nvidia-pytriton==0.7.0
	touch $@

.PHONY: install plan test lint
install: $(VENV)/.installed

plan: $(VENV)/.installed
	$(VENV)/bin/tritonfleet plan --stack $(STACK) --json plans/$(STACK).json

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -n 2 -q

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
