# Two entry points, both safe on a fresh machine: `make plan STACK=<stack>` and `make test`.
# The virtualenv is ./venv, the same one the Pulumi CLI uses (Pulumi.yaml: virtualenv: venv).
VENV ?= venv
STACK ?= dev
PYTHON ?= python3

$(VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

.PHONY: install plan test lint
install: $(VENV)/.installed

plan: $(VENV)/.installed
	$(VENV)/bin/tritonfleet plan --stack $(STACK) --json plans/$(STACK).json

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -n 2 -q

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
