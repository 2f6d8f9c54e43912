# ccfair: the README's two commands are `make demo` and `make test`. Both set up everything they need on a
# fresh machine: a virtualenv with the Python dependencies from PyPI, the Rust crates from crates.io, and the
# extension module built in release mode.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.ccfair-built
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml
PY_SOURCES := $(shell find python -name '*.py' 2>/dev/null) pyproject.toml

.PHONY: setup demo test test-rust test-python lint bench bench-sweep snapshots fuzz clean

setup: $(STAMP) emulator

# The kernel backend's userspace bottleneck (ccfair.emu finds it in $CARGO_TARGET_DIR/release or
# target/release, or at $CCFAIR_EMU). Cargo rebuilds it only when its sources change.
.PHONY: emulator
emulator:
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust from https://rustup.rs"; exit 1; }
	cargo build --release --quiet -p ccfair-emu

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "maturin>=1.7,<2"

$(STAMP): $(BIN)/maturin $(RUST_SOURCES) $(PY_SOURCES)
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust from https://rustup.rs"; exit 1; }
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --quiet --extras dev
	touch $(STAMP)

demo: setup
	$(BIN)/ccfair run scenarios/default.toml

lint: setup
	-rustup component add rustfmt clippy 2>/dev/null
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests

test-rust:
	cargo test --workspace --exclude ccfair-py --quiet

test-python: setup
	$(BIN)/pytest -q

# The report test opens an HTML report in Debian's Chromium (driven by Playwright, which must not download a
# browser of its own). As root, install it when it is missing; otherwise that test skips and says why.
.PHONY: browser
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "could not install chromium: the report's browser test will be skipped"; \
	  else echo "chromium is not installed (apt-get install chromium, as root): the report's browser test will be skipped"; fi; }

test: lint test-rust browser test-python

# The scenario property test (tests/test_fuzz_scenarios.py) with a large budget and fresh randomness: every
# input runs or is refused with a field. A failure prints the seed that reproduces it. About 10 minutes.
FUZZ_EXAMPLES ?= 5000
fuzz: setup
	CCFAIR_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) CCFAIR_FUZZ_RANDOM=1 $(BIN)/pytest -q tests/test_fuzz_scenarios.py

bench: setup
	$(BIN)/ccfair bench

# Regenerates the golden snapshot tables (tests/snapshots/expected/) from tests/snapshots/cases.toml and prints
# which cases changed and what moved. Only after a deliberate behaviour change, explained in its commit.
snapshots: setup
	$(BIN)/python -m ccfair.devtools.snapshots --update

# Sweep throughput with 1 and 2 local workers and the result store's cost per run (about two minutes).
bench-sweep: setup
	$(BIN)/python -m ccfair.sweep.bench plans/bench-sweep.toml --jobs 1,2

clean:
	cargo clean
	rm -rf $(VENV) .pytest_cache .ruff_cache
