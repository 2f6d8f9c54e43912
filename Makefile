# ccfair: the README's two commands are `make demo` and `make test`. Both set up everything they need on a
# fresh machine: a virtualenv with the Python dependencies from PyPI, the Rust crates from crates.io, and the
# extension module built in release mode.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.ccfair-built
DEV_STAMP := $(VENV)/.ccfair-dev
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml

.PHONY: setup setup-dev versions demo check test test-rust test-python lint typecheck bench bench-sweep bench-ns3 snapshots docs reference-scorecards fuzz clean

# The runtime: what `make demo` needs (no test or lint tools).
setup: versions $(STAMP) emulator

# The runtime and the development tools (tests, lints, the browser test, wheel building).
setup-dev: setup $(DEV_STAMP)

# Python >= 3.11 and Rust >= 1.85, checked before anything is downloaded; a .venv made by an older Python
# is made anew.
versions:
	@tools/check-versions.sh $(PYTHON) $(VENV)

# The kernel backend's userspace bottleneck (ccfair.emu finds it in $CARGO_TARGET_DIR/release or
# target/release, or at $CCFAIR_EMU). Cargo rebuilds it only when its sources change.
.PHONY: emulator
emulator: versions
	@echo "building the kernel backend's emulator (ccfair-emu, release mode)"
	cargo build --release -p ccfair-emu

$(BIN)/maturin: | versions
	@echo "making the virtualenv $(VENV) and installing maturin"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "maturin>=1.9,<2"

# maturin develop installs the Python package editable (a .pth to python/): a Python change needs no rebuild,
# a Rust one or pyproject.toml (dependencies, entry points) does.
$(STAMP): $(BIN)/maturin $(RUST_SOURCES) pyproject.toml
	@echo "compiling the simulator in release mode and installing the Python dependencies (2 to 5 minutes"
	@echo "the first time on 2 cores; later only what changed)"
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release
	touch $(STAMP)

# The dev extra's requirements, from pyproject.toml (no second list to keep in step).
$(DEV_STAMP): pyproject.toml | $(BIN)/maturin
	@echo "installing the development tools (the dev extra of pyproject.toml)"
	$(BIN)/python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["dev"]))' > $(VENV)/dev-requirements.txt
	$(BIN)/pip install --quiet -r $(VENV)/dev-requirements.txt
	touch $(DEV_STAMP)

demo: setup
	$(BIN)/ccfair run scenarios/default.toml

lint: setup-dev
	-rustup component add rustfmt clippy 2>/dev/null
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests bench
	$(BIN)/ruff format --check python tests bench

# The Python package against its annotations and the extension's stub (python/ccfair/_native.pyi), with the
# settings of [tool.mypy] in pyproject.toml.
typecheck: setup-dev
	$(BIN)/mypy

test-rust:
	cargo test --workspace --exclude ccfair-py --quiet

test-python: setup-dev
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

test: lint typecheck test-rust browser wheel-check test-python

# The fast tier, for every change (about a minute on 2 cores once built): formatting, lints and types, the Rust
# tests, and the Python tests not marked slow (the snapshots and the unit tests; no sweeps, no subprocesses).
# `make test` is the whole suite. It needs the extension built (make setup-dev) but rebuilds nothing else.
check: versions $(STAMP) $(DEV_STAMP)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests bench
	$(BIN)/ruff format --check python tests bench
	$(BIN)/mypy
	cargo test --workspace --exclude ccfair-py --quiet
	$(BIN)/pytest -q -m "not slow"

# A wheel as published: manylinux_2_28 (linked through zig against glibc 2.28's symbols), abi3 for Python
# >= 3.11, with the emulator binary inside the package (ccfair/bin/ccfair-emu, staged only for the build).
# The builds are kept apart from the development build (target/release) and from each other (maturin's
# flags differ, and sharing one directory would rebuild everything each time), so each is incremental.
WHEEL_TARGET := x86_64-unknown-linux-gnu
WHEEL_GLIBC := 2.28
WHEEL_DIR := target/wheels
WHEEL_EMU_DIR := target/wheel-emu
.PHONY: wheel wheel-check
wheel: setup-dev
	@echo "building the manylinux_$(subst .,_,$(WHEEL_GLIBC)) wheel (the first time about 4 minutes on 2 cores)"
	rm -rf $(WHEEL_DIR) python/ccfair/bin
	PATH="$(abspath $(BIN)):$$PATH" CARGO_TARGET_DIR=$(WHEEL_EMU_DIR) $(BIN)/cargo-zigbuild zigbuild --release \
	  -p ccfair-emu --target $(WHEEL_TARGET).$(WHEEL_GLIBC)
	mkdir -p python/ccfair/bin
	strip -o python/ccfair/bin/ccfair-emu $(WHEEL_EMU_DIR)/$(WHEEL_TARGET)/release/ccfair-emu
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/maturin build --release --strip --zig --target $(WHEEL_TARGET) \
	  --compatibility manylinux_$(subst .,_,$(WHEEL_GLIBC)) --out $(WHEEL_DIR); \
	  status=$$?; rm -rf python/ccfair/bin; exit $$status

# The wheel installed into a fresh virtualenv (dependencies from PyPI) and its smoke commands run outside
# the checkout (ccfair.devtools.wheel_check).
wheel-check: wheel
	$(BIN)/python -m ccfair.devtools.wheel_check $(WHEEL_DIR) --python $(PYTHON)

# The property tests of tests/test_fuzz_scenarios.py with a large budget and fresh randomness: every scenario
# (and every queue discipline's and algorithm's parameters at their extremes) runs within its estimate or is
# refused with a field; every subcommand's command line and every crafted results directory is answered
# without a traceback or a raw control character. A failure prints the seed that reproduces it. About 10
# minutes on 2 cores (per second: 40 scenarios, 37 with extreme parameters, 22 command lines, one crafted
# directory every 12 s).
FUZZ_EXAMPLES ?= 5000
fuzz: setup
	CCFAIR_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) CCFAIR_FUZZ_RANDOM=1 $(BIN)/pytest -q tests/test_fuzz_scenarios.py

bench: setup
	$(BIN)/ccfair bench

# ccfair against ns-3 on bench case B's dumbbell at 100 Mbps and 1 Gbps (bench/ns3/compare.py). Optional, not
# part of `make test`: installs ns-3's PyPI wheel (about 70 MB, no dependencies) into its own virtualenv under
# target/ns3-bench and compiles bench/ns3/dumbbell.cc against it with the system's C++ compiler.
bench-ns3: setup
	$(BIN)/python bench/ns3/compare.py

# Regenerates the golden snapshot tables (tests/snapshots/expected/) from tests/snapshots/cases.toml and prints
# which cases changed and what moved. Only after a deliberate behaviour change, explained in its commit.
snapshots: setup-dev
	$(BIN)/python -m ccfair.devtools.snapshots --update

# Regenerates the documentation's generated sections from the code (ccfair.devtools.docs: the scenario
# keys, the command line, the algorithms and queue disciplines, the stored scorecards; the output columns
# from the output schema, output.rs and analysis/schema.py); tests/test_docs.py and tests/test_output_schema.py
# fail while they are stale.
docs: setup
	$(BIN)/python -m ccfair.devtools.docs --write

# The published reference results: every study's standard scale (sized so that each finding decides where the
# full scale would; Rueth, Sasaki and Fejes-Nadas about 30 minutes each on 2 idle cores, Philip 75 minutes)
# run into $(REFERENCE_DIR)/<scale>/<study> (a stop keeps the finished runs: run it again to resume), their
# scorecards stored under docs/data/scorecards/<scale>/ and the explanation page's tables regenerated.
# REFERENCE_SCALE=full runs the full scales instead; REFERENCE_STUDIES picks studies.
REFERENCE_SCALE ?= standard
REFERENCE_DIR ?= target/reference
REFERENCE_STUDIES ?=
reference-scorecards: setup
	studies="$(REFERENCE_STUDIES)"; \
	[ -n "$$studies" ] || studies=$$($(BIN)/python -c 'from ccfair.studies.reproduce import study_names; print(" ".join(study_names()))'); \
	dirs=""; \
	for study in $$studies; do \
	  $(BIN)/ccfair reproduce $$study --scale $(REFERENCE_SCALE) --out $(REFERENCE_DIR)/$(REFERENCE_SCALE)/$$study --quiet \
	    || exit 1; \
	  dirs="$$dirs $(REFERENCE_DIR)/$(REFERENCE_SCALE)/$$study"; \
	done; \
	$(BIN)/python -m ccfair.devtools.docs --scorecards $$dirs
	$(BIN)/python -m ccfair.devtools.docs --write

# The documentation site: docs/ built by MkDocs (Material theme, offline, searchable) in strict mode into
# build/site; open build/site/index.html. About 10 s.
.PHONY: docs-site docs-figures
docs-site: setup-dev docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The figures the README and the docs show, made by the commands they name (about 30 s): the home page's,
# and the first-sweep tutorial's heatmap (its plan is the tutorial's, docs/assets/first-sweep.toml).
docs-figures: setup
	rm -rf target/docs-figures
	$(BIN)/ccfair sweep docs/assets/bbr-vs-cubic-buffers.toml --out target/docs-figures/buffers --quiet
	$(BIN)/ccfair plot target/docs-figures/buffers --kind share --x link.buffer -o docs/assets/bbr-vs-cubic-buffers.png
	$(BIN)/ccfair sweep docs/assets/first-sweep.toml --out target/docs-figures/first-sweep --quiet
	$(BIN)/ccfair plot target/docs-figures/first-sweep --kind heatmap --metric jain_index --x link.buffer \
	  --y "flows[0].count" -o docs/assets/first-sweep-heatmap.png

# Sweep throughput with 1 and 2 local workers and the result store's cost per run (about two minutes).
bench-sweep: setup
	$(BIN)/python -m ccfair.sweep.bench plans/bench-sweep.toml --jobs 1,2

clean:
	cargo clean
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache python/ccfair/bin build/site
