# Two entry points, both safe on a fresh machine: `make plan STACK=<stack>` and `make test`.
# The virtualenv is ./venv, the same one the Pulumi CLI uses (Pulumi.yaml: virtualenv: venv).
VENV ?= venv
STACK ?= dev
PYTHON ?= python3

$(VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	# The real tritonserver binary (nvidia-pytriton ships it) for the live Triton tests. --no-deps: only the binary is
	# used, and the wheel's tritonclient[grpc] requirement pins protobuf 6, which pulumi-policy excludes.
	$(VENV)/bin/pip install --quiet --no-deps nvidia-pytriton==0.7.0
	touch $@

# checkov conflicts with pulumi's pins, so it gets a virtualenv of its own (the chart's security scan tests use it).
venv-checkov/.installed:
	$(PYTHON) -m venv venv-checkov
	venv-checkov/bin/pip install --quiet checkov==3.3.30
	touch $@

.PHONY: install plan test lint
install: $(VENV)/.installed

plan: $(VENV)/.installed
	$(VENV)/bin/tritonfleet plan --stack $(STACK) --json plans/$(STACK).json

test: $(VENV)/.installed venv-checkov/.installed
	$(VENV)/bin/python -m pytest -n 2 -q

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
