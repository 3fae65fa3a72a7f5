# Two entry points, both safe on a fresh machine: `make plan STACK=<stack>` and `make test`.
# The virtualenv is ./venv, the same one the Pulumi CLI uses (Pulumi.yaml: virtualenv: venv).
# Two stamps: venv/.installed (the runtime, all that `make plan` needs) and venv/.installed-test (the test tools on
# top, only for `make test`/`make lint`). pip runs without --quiet so the first install shows its progress, and with
# -c constraints.txt (every version the pins resolve to), so it resolves the same set at once, without backtracking.
VENV ?= venv
STACK ?= dev
PYTHON ?= python3

$(VENV)/.installed: pyproject.toml requirements.txt constraints.txt
	@echo "==> installing runtime packages into $(VENV) (first run only: 0.9 GB, measured 8.6 min on a loaded 2-core machine; mostly the Pulumi AWS/GCP SDKs)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --upgrade pip
	$(VENV)/bin/pip install -c constraints.txt -e .
	touch $@

# The test tools: helm engine, moto, validators, linters (pyproject's test extra) and the real tritonserver binary
# (nvidia-pytriton ships it) for the live Triton tests. --no-deps: only the binary is used, and the wheel's
# tritonclient[grpc] requirement pins protobuf 6, which pulumi-policy excludes.
$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml constraints.txt
	@echo "==> installing test packages into $(VENV) (first run only: helm engine, moto, validators, tritonserver wheel; 0.8 GB more, measured 6.9 min)"
	$(VENV)/bin/pip install -c constraints.txt -e '.[test]'
	$(VENV)/bin/pip install --no-deps nvidia-pytriton==0.7.0
	touch $@

# checkov conflicts with pulumi's pins, so it gets a virtualenv of its own (the chart's security scan tests use it).
venv-checkov/.installed:
	@echo "==> installing checkov into venv-checkov (first run only)"
	$(PYTHON) -m venv venv-checkov
	venv-checkov/bin/pip install checkov==3.3.30
	touch $@

# network-config-analyzer (`nca`, the NetworkPolicy engine of tests/test_access_connectivity.py) pins PyYAML and
# networkx exactly, against the project's pins: a virtualenv of its own too.
venv-nca/.installed:
	@echo "==> installing network-config-analyzer into venv-nca (first run only)"
	$(PYTHON) -m venv venv-nca
	venv-nca/bin/pip install network-config-analyzer==2.1.0
	touch $@

# The FinOps Foundation's focus-validator (tests/test_focus_validator.py checks the FOCUS fixtures with it) pins
# numpy < 2 and pandera 0.17, and pandera 0.17 needs multimethod 1.10 (2.x dropped `overload`): a virtualenv of its
# own (pyarrow 17: later releases need numpy 2). Its release is an sdist that pip builds with poetry-core.
venv-focus/.installed:
	@echo "==> installing focus-validator into venv-focus (first run only)"
	$(PYTHON) -m venv venv-focus
	venv-focus/bin/pip install focus-validator==1.0.0 multimethod==1.10 pandera==0.17.2 numpy==1.26.4 pandas==2.3.3 pyarrow==17.0.0
	touch $@

.PHONY: install install-test plan test lint
install: $(VENV)/.installed

install-test: $(VENV)/.installed-test venv-checkov/.installed venv-nca/.installed venv-focus/.installed

plan: $(VENV)/.installed
	$(VENV)/bin/tritonfleet plan --stack $(STACK) --json plans/$(STACK).json

# Five workers on two cores: the live tests spend much of their time waiting on real servers (the two autoscaling
# proofs a minute each), so more workers than cores overlap those waits, and tests/conftest.py orders those modules
# first, where xdist's default (--loadscope-reorder: most tests first) ran them last, as the run's tail. Measured on an
# idle 2-core machine from a cold plan cache, as CI runs it: 4:05 and 4:09 with -n 4, 3:33 with -n 5, 4:07 with -n 6;
# with the waiting modules first: -n 4 3:56, -n 5 3:30 to 3:36, -n 6 3:33; later, with faster idle cores, -n 5 1:27 to
# 1:44 (benchmarks/suite_time.py measures it). --dist loadscope keeps each test module
# in one worker, so a module's fixture (servers, the policy pack, a checkov run) is set up once.
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set (as on this project's CI machine): the workers, the
# policy pack processes and every fresh interpreter the tests start then import our modules and the tests' rewritten
# assertions from it instead of compiling them again (.gitignore keeps __pycache__ out).
test: install-test
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m pytest -n 5 --dist loadscope --no-loadscope-reorder -q

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
