# Every target runs in .venv, built from the pinned requirements on first use.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# nbgrader runs the `alembic` command of its environment when it creates gradebook.db.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
ASSIGNMENT := dl01_6_3

.PHONY: help release grade test selfcheck bench clean-grading

help:
	@echo "make grade    grade submitted/ (or the bundled demo class) into gradebook.db, feedback/, grades.csv"
	@echo "make test     prove the kit: reference full marks, blank zero, bugs caught, attacks contained"
	@echo "make release  regenerate release/ and solutions/ from source/"

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

release: $(VENV)/.installed
	$(VENV)/bin/nbgrader generate_assignment $(ASSIGNMENT) --force --log-level=ERROR
	$(VENV)/bin/nbgrader generate_solution $(ASSIGNMENT) --force --log-level=ERROR

grade: $(VENV)/.installed
	$(PY) -m autograder class --assignment $(ASSIGNMENT)

test: $(VENV)/.installed
	$(PY) -m pytest tests


# Grade generated classes with the kit and with stock nbgrader, side by side (README: Scaling).
# QUICK=1: N = 25 only.
bench: $(VENV)/.installed
	$(PY) -m bench $(if $(filter-out 0,$(QUICK)),--quick)
