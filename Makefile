# Every target runs in .venv, built from the pinned requirements on first use.
VENV := .venv
# .venv is built with PYTHON=... if given, else the newest of python3.13, python3.12 and python3.11
# that runs here, else python3; each must be one autograder/supported_python.py accepts (3.11.0 to
# 3.13), or make stops with that script's one line. Looked for only when .venv is built.
CHECK_PYTHON := autograder/supported_python.py
NEWEST_PYTHON = $(shell for p in python3.13 python3.12 python3.11 python3; do \
	$$p $(CHECK_PYTHON) 2>/dev/null && { echo $$p; break; }; done)
# The script's one line when $(1) is not supported (empty when it is).
REFUSAL = $(shell out=$$($(1) $(CHECK_PYTHON) '$(1)' 2>&1 >/dev/null); status=$$?; \
	if [ $$status -eq 1 ]; then echo "$$out"; elif [ $$status -ne 0 ]; then echo '$(1) does not run'; fi)
FOUND_PYTHON = $(or $(shell python3 -c 'import platform; print("python3", platform.python_version())' 2>/dev/null),no python3)
GIVEN_PYTHON = $(if $(call REFUSAL,$(PYTHON)),$(error $(call REFUSAL,$(PYTHON))),$(PYTHON))
VENV_PYTHON = $(if $(PYTHON),$(GIVEN_PYTHON),$(or $(NEWEST_PYTHON),$(error needs Python 3.11.0 to 3.13 to build \
	$(VENV) (or PYTHON=...); found: $(FOUND_PYTHON))))
PY := $(VENV)/bin/python
# nbgrader runs the `alembic` command of its environment when it creates gradebook.db.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
ASSIGNMENT := dl01_6_3

.PHONY: help release grade preview feedback new-class regrade clean-grading reset-gradebook test check lint test-machines \
	bench which-python gradescope grades-lms class-page

help:
	@echo "make grade    grade the new and changed submissions of submitted/ (or the bundled demo class) into gradebook.db, feedback/, grades.csv"
	@echo "make grade FORCE=1  grade every submission again, not only the new and changed (CONFIRM=yes: apply a previewed regrade)"
	@echo "make preview  who a regrade under changed suites, reference or settings would change (reports/; nothing else written)"
	@echo "make feedback write again the feedback pages whose grades changed (after hand grading), and grades.csv"
	@echo "make test     prove the kit: reference full marks, blank zero, bugs caught, attacks contained (TESTS=...: some)"
	@echo "make check    a maintainer's quick check, about 3 minutes: lint, types, every test not marked slow (docs/maintainers.md)"
	@echo "make lint     ruff and mypy over the kit (pyproject.toml's settings; make test runs them too)"
	@echo "make test-machines  the README's commands on fresh Debian 12 and 13, in containers' shapes, and the Gradescope zip (MACHINES=...: some)"
	@echo "make release  regenerate release/ and solutions/ from source/"
	@echo "make which-python  the Python that builds .venv (3.11 to 3.13; PYTHON=... overrides)"
	@echo "make new-class      remove the demo class (submissions, gradebook rows, autograded/, feedback/, grades.csv rows); real students keep theirs"
	@echo "make regrade STUDENT=ada  grade one student folder of submitted/ again: gradebook, feedback, grades.csv (manual grades kept)"
	@echo "make clean-grading  remove autograded/, feedback/, grades.csv and reports/ (gradebook.db and its manual grades stay)"
	@echo "make reset-gradebook  delete gradebook.db, every score and the manual grades too, and the grading outputs (next year; asks, or CONFIRM=yes; keeps a dated copy)"
	@echo "make bench    grade generated classes with the kit and with stock nbgrader (docs/scaling.md; QUICK=1: N = 25 only)"
	@echo "make gradescope   write build/gradescope.zip, the autograder to upload to Gradescope"
	@echo "make grades-lms   write reports/$(ASSIGNMENT)-canvas.csv from the gradebook, for Canvas's grade import"
	@echo "make class-page   write reports/$(ASSIGNMENT).html: scores, pass rates, common mistakes, limits (after make grade)"
	@echo "Every target but release (nbgrader's commands), which-python and the maintainers' (test, check, lint,"
	@echo "test-machines, bench) runs one subcommand of .venv/bin/python -m autograder (--help lists them)."

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

# FORCE=1: the unchanged submissions are graded again too. CONFIRM=yes: a regrade that changed suites, reference or
# settings make is applied instead of previewed (counted only on make's command line, as for reset-gradebook).
grade: export KIT_CONFIRM = $(if $(filter command line,$(origin CONFIRM)),$(value CONFIRM))
grade: $(VENV)/.installed
	$(PY) -m autograder class --assignment $(ASSIGNMENT)$(if $(filter-out 0,$(FORCE)), --force) --confirm "$$KIT_CONFIRM"

preview: $(VENV)/.installed
	$(PY) -m autograder preview --assignment $(ASSIGNMENT)

feedback: $(VENV)/.installed
	$(PY) -m autograder feedback --assignment $(ASSIGNMENT)

# The course's life cycle (README: Instructors). Manual grades survive every target but reset-gradebook.
new-class: $(VENV)/.installed
	$(PY) -m autograder new-class --assignment $(ASSIGNMENT)

# STUDENT and CONFIRM reach the grader as typed: never expanded by make ($(value)), never parsed by the
# shell (an environment variable, quoted), so `STUDENT='ada;touch X;:'` is one odd name, which regrade refuses.
# make exports a variable given on its command line to every recipe, expanded: these two it must not.
unexport STUDENT CONFIRM
regrade: export KIT_STUDENT = $(value STUDENT)
regrade: export KIT_CONFIRM = $(if $(filter command line,$(origin CONFIRM)),$(value CONFIRM))
regrade: $(VENV)/.installed
	$(if $(value STUDENT),,$(error make regrade needs STUDENT=<student id>, e.g. make regrade STUDENT=ada))
	$(PY) -m autograder regrade --assignment $(ASSIGNMENT) --confirm "$$KIT_CONFIRM" -- "$$KIT_STUDENT"

clean-grading: $(VENV)/.installed
	$(PY) -m autograder clean-grading

# CONFIRM counts only on make's command line: one left in the environment never deletes a gradebook.
reset-gradebook: export KIT_CONFIRM = $(if $(filter command line,$(origin CONFIRM)),$(value CONFIRM))
reset-gradebook: $(VENV)/.installed
	$(PY) -m autograder reset-gradebook --confirm "$$KIT_CONFIRM"

# A Gradescope autograder: setup.sh, run_autograder, requirements.txt and the grader (README: Instructors).
gradescope: $(VENV)/.installed
	$(PY) -m autograder gradescope-zip --assignment $(ASSIGNMENT) --to build/gradescope.zip

grades-lms: $(VENV)/.installed
	$(PY) -m autograder grades-lms --assignment $(ASSIGNMENT) --to reports/$(ASSIGNMENT)-canvas.csv

class-page: $(VENV)/.installed
	$(PY) -m autograder class-page --assignment $(ASSIGNMENT)

# The browser tests' accessibility checker (tests/axe.py): axe-core, pinned by tests/package-lock.json, from the
# npm registry into tests/node_modules. Without npm the browser tests skip that check, saying so.
AXE := tests/node_modules/axe-core/axe.min.js
$(AXE): tests/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix tests --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "no npm: the browser tests skip their accessibility checks (apt-get install npm)"; fi

# TESTS=...: some test files or options instead of all of tests/ (make test-machines runs a subset).
TESTS ?= tests
test: $(VENV)/.installed $(VENV)/.test-installed $(AXE)
	$(PY) -m pytest $(TESTS)

# A maintainer's quick check (docs/maintainers.md): the linter and type checker, then every test not marked slow
# (pytest.ini): the unit tests, the reference and the blank release graded and self-checked, the bug catalogue
# through the grader and the public checks, the malformed notebooks one by one. `make test` stays the proof.
check: lint
	$(PY) -m pytest -m "not slow" tests

# The linter and type checker, pinned in requirements-test.txt, with pyproject.toml's settings
# (tests/test_lint.py runs the same two commands).
lint: $(VENV)/.installed $(VENV)/.test-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# Fresh Debian 12 and 13 machines (debootstrap, cached in /var/cache/kit-machines), a root without
# CAP_SYS_ADMIN, user namespaces of 65,536 ids and of root alone, and Gradescope's bare image run the
# README's commands and the zip (docs/maintainers.md). Needs root and debootstrap.
# MACHINES=debian12,debian13,no-sys-admin,podman-userns,root-alone-userns,gradescope: some of them.
test-machines: gradescope
	$(PY) -m machines $(if $(MACHINES),--only $(MACHINES))


# Grade generated classes with the kit and with stock nbgrader, side by side (docs/scaling.md).
# QUICK=1: N = 25 only; STOCK_PYTEST=1: also stock with pytest.main in its grade cells (labelled lines).
bench: $(VENV)/.installed
	$(PY) -m bench $(if $(filter-out 0,$(QUICK)),--quick) $(if $(filter-out 0,$(STOCK_PYTEST)),--stock-pytest)
