# ilgen: `make demo` and `make test` do all set-up on a fresh Debian 12 machine.
#
#   make deps     install the Debian packages (and python jsonschema) ilgen needs, when missing
#   make build    build plugin, runtime and CLI in release mode into target/release
#   make test     deps + build + fmt/clippy + unit tests + lit tests + scenarios (what CI runs)
#   make scenarios     ilgen on every benchmarks/scenarios/*.c against its EXPECT header
#   make demo     record the paper's Listing 1, detect, replay, print the confirmed race
#   make bench    recording overhead, Table 1 (scenarios) and Table 2 (apps) against TSan
#   make bench-detect  print detect time and memory against trace size (10^3..10^7 events)
#   make bench-csp     native solver against ilgen's CSP checker on the same models
#   make install  PREFIX=/usr/local: bin/ilgen, lib/ilgen/{libilgen_pass.so,libilgen_rt.a},
#                 include/ilgen.h, share/ilgen/debug/ (the gdb and lldb commands of `ilgen replay --gdb/--lldb`)

PREFIX   ?= /usr/local
CARGO    ?= cargo
PYTHON   ?= python3
LLVM_DIR := /usr/lib/llvm-19
LIT      ?= $(PYTHON) $(LLVM_DIR)/build/utils/lit/lit.py
APT_PKGS := clang-19 llvm-19-dev llvm-19-tools libclang-rt-19-dev gdb lldb-19 valgrind
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
REL      := target/release
DEMO_DIR := target/demo

.PHONY: all deps build lint unit lit scenarios test demo bench bench-detect bench-csp install clean

all: build

deps:
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@# The report tests validate JSON and SARIF output against their schemas.
	@$(PYTHON) -c 'import jsonschema' 2>/dev/null || $(PYTHON) -m pip install -q jsonschema
	@# The runtime must build off x86-64 too (lint checks it for aarch64).
	@rustup target list --installed 2>/dev/null | grep -q aarch64-unknown-linux-gnu || \
	  rustup target add aarch64-unknown-linux-gnu || echo "note: aarch64 target not installable here"

build: deps
	$(CARGO) build --release --workspace

# No two source files may import each other, directly or in a loop (tools/import_cycles.py).
lint: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	@# The runtime's only architecture-specific part is rt/src/arch.rs: the rest must build anywhere.
	@if rustup target list --installed 2>/dev/null | grep -q aarch64-unknown-linux-gnu; then \
	  echo "cargo check -p ilgen-rt --target aarch64-unknown-linux-gnu"; \
	  CC_aarch64_unknown_linux_gnu=clang-19 CFLAGS_aarch64_unknown_linux_gnu=--target=aarch64-linux-gnu \
	  AR_aarch64_unknown_linux_gnu=llvm-ar-19 $(CARGO) check -q -p ilgen-rt --target aarch64-unknown-linux-gnu; \
	else echo "NOT CHECKED: aarch64 build of the runtime (rustup target aarch64-unknown-linux-gnu missing)"; fi
	$(PYTHON) tools/test_import_cycles.py
	$(PYTHON) tools/debug/test_ilgen_common.py
	$(PYTHON) tools/import_cycles.py

unit: deps
	$(CARGO) test --release --workspace

lit: build
	$(LIT) -sv tests

# Every scenario must give exactly the errors its header states (benchmarks/scenarios/README.md).
scenarios: build
	$(PYTHON) -m doctest benchmarks/evaluate.py
	$(PYTHON) benchmarks/evaluate.py check

test: build lint unit lit scenarios

demo: build
	@mkdir -p $(DEMO_DIR)
	$(REL)/ilgen cc -g -O0 tests/confirm/demo_listing1.c -o $(DEMO_DIR)/listing1
	rm -rf $(DEMO_DIR)/trace
	@echo "== record one run (the race on y is hidden in it: main takes m first)"
	ILGEN_OPTIONS=trace_dir=$(DEMO_DIR)/trace $(DEMO_DIR)/listing1
	$(REL)/ilgen dump $(DEMO_DIR)/trace
	@echo "== detect: predict schedules, replay each, report the confirmed findings"
	@# Exit 66 means confirmed findings: the expected outcome of this demo.
	$(REL)/ilgen detect $(DEMO_DIR)/trace; status=$$?; [ $$status -eq 66 ] || exit $$status
	@echo "== reproduce it under gdb: $(REL)/ilgen replay --gdb $(DEMO_DIR)/trace:1"

bench: build
	$(PYTHON) benchmarks/record_overhead.py
	$(PYTHON) benchmarks/evaluate.py table1
	$(PYTHON) benchmarks/evaluate.py table2

bench-detect: build
	$(PYTHON) benchmarks/detect/scaling.py

bench-csp: build
	$(PYTHON) benchmarks/csp/solvers.py

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/ilgen
	install -m 755 $(REL)/ilgen $(DESTDIR)$(PREFIX)/bin/ilgen
	install -m 755 $(REL)/libilgen_pass.so $(DESTDIR)$(PREFIX)/lib/ilgen/libilgen_pass.so
	install -m 644 $(REL)/libilgen_rt.a $(DESTDIR)$(PREFIX)/lib/ilgen/libilgen_rt.a
	install -d $(DESTDIR)$(PREFIX)/include
	install -m 644 include/ilgen.h $(DESTDIR)$(PREFIX)/include/ilgen.h
	install -d $(DESTDIR)$(PREFIX)/share/ilgen/debug
	install -m 644 tools/debug/ilgen_common.py tools/debug/ilgen_gdb.py tools/debug/ilgen_lldb.py \
	  $(DESTDIR)$(PREFIX)/share/ilgen/debug/

clean:
	$(CARGO) clean
	rm -rf ilgen-out
