# Every target runs in .venv, built from the pinned requirements on first use.
VENV := .venv
# .venv is built with PYTHON=... if given, else the newest of python3.13, python3.12 and python3.11
# that runs here, else python3 if it is 3.11 to 3.13. Looked for only when .venv is built.
SUPPORTED := import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))
NEWEST_PYTHON = $(shell for p in python3.13 python3.12 python3.11 python3; do \
	$$p -c '$(SUPPORTED)' 2>/dev/null && { echo $$p; break; }; done)
FOUND_PYTHON = $(or $(shell python3 -c 'import platform; print("python3", platform.python_version())' 2>/dev/null),no python3)
VENV_PYTHON = $(or $(PYTHON),$(NEWEST_PYTHON),$(error needs Python 3.11, 3.12 or 3.13 to build $(VENV) \
	(or PYTHON=...); found: $(FOUND_PYTHON)))
PY := $(VENV)/bin/python
# nbgrader runs the `alembic` command of its environment when it creates gradebook.db.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
ASSIGNMENT := dl01_6_3

.PHONY: help release grade test selfcheck bench clean-grading which-python

help:
	@echo "make grade    grade submitted/ (or the bundled demo class) into gradebook.db, feedback/, grades.csv"
	@echo "make test     prove the kit: reference full marks, blank zero, bugs caught, attacks contained"
	@echo "make release  regenerate release/ and solutions/ from source/"
	@echo "make which-python  the Python that builds .venv (3.11 to 3.13; PYTHON=... overrides)"

$(VENV)/.installed: requirements.txt
	$(VENV_PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	mkdir -p $(VENV)/etc/jupyter && ln -sf ../../../jupyter_server_config.py $(VENV)/etc/jupyter/jupyter_server_config.py
	touch $@

# Only `make test` needs these (the browser test's driver): kept out of the instructor's install.
$(VENV)/.test-installed: requirements-test.txt $(VENV)/.installed
	$(PY) -m pip install --quiet -r requirements-test.txt
	touch $@

which-python:
	@echo "$(VENV_PYTHON)"

release: $(VENV)/.installed
	$(VENV)/bin/nbgrader generate_assignment $(ASSIGNMENT) --force --log-level=ERROR
	$(VENV)/bin/nbgrader generate_solution $(ASSIGNMENT) --force --log-level=ERROR

grade: $(VENV)/.installed
	$(PY) -m autograder class --assignment $(ASSIGNMENT)

test: $(VENV)/.installed $(VENV)/.test-installed
	$(PY) -m pytest tests


# Grade generated classes with the kit and with stock nbgrader, side by side (README: Scaling).
# QUICK=1: N = 25 only.
bench: $(VENV)/.installed
	$(PY) -m bench $(if $(filter-out 0,$(QUICK)),--quick)
