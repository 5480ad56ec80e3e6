# moreau: build, test, run, bench.
#
#   make            build/libmoreau.a and build/moreau
#   make run        the default demo, and its replay out/demo.html (installs missing Debian
#                   packages first)
#   make test       every cmocka test program (installs missing Debian packages first)
#   make check      the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      benchmark programs, built with -O3 -march=native
#   make bench-peers moreau against MuJoCo (installs libmujoco-dev first), -O3 -march=native
#   make deps       install the Debian packages the build needs
#   make experiments  the contact-model experiments B1–B10: docs/results/*.csv and *.png
#   make format     apply .clang-format to the sources
#
# The moreau program embeds the replay viewer (viewer/): `npm ci` installs three.js and esbuild
# from viewer/package-lock.json, esbuild bundles viewer/src/ into one script, and the page
# template and that script are linked in as data (docs/viewer.md).

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?=
LDFLAGS ?=
BUILD   ?= build
SHARED  ?= $(abspath ../shared)

DEB_PKGS = gcc make pkg-config libccd-dev libcglm-dev libyaml-dev libcmocka-dev libxml2-dev \
           libqhull-dev zlib1g-dev nodejs npm chromium
# plotting, for make experiments only
EXP_PKGS = gnuplot-nox

WARN     = -std=c11 -Wall -Wextra -Wpedantic -Werror -Wno-unused-parameter
DEFS     = -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L
INCS     = -Iinclude -Isrc -I/usr/include/libxml2
ALL_CFLAGS = $(WARN) $(DEFS) $(OPT) $(CFLAGS) $(INCS) -MMD -MP
LIBS     = -lccd -lqhull_r -lxml2 -lyaml -lm

LIB_SRC  = $(sort $(wildcard src/core/*.c src/dynamics/*.c src/collision/*.c src/contact/*.c \
                             src/integrate/*.c src/io/*.c))
CLI_SRC  = $(sort $(wildcard src/cli/*.c))
TEST_SRC = $(sort $(wildcard tests/test_*.c))
PEERS_SRC = bench/peers.c
BENCH_SRC = $(filter-out $(PEERS_SRC),$(sort $(wildcard bench/*.c)))

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

LIBRARY  = $(BUILD)/libmoreau.a
PROGRAM  = $(BUILD)/moreau

VIEWER_SRC    = $(sort $(wildcard viewer/src/*.js))
VIEWER_NPM    = viewer/node_modules/.package-lock.json
VIEWER_BUNDLE = $(BUILD)/viewer/viewer.js
VIEWER_OBJ    = $(BUILD)/obj/viewer_assets.o

.PHONY: all deps test run-tests check bench bench-bins bench-peers run experiments format clean

all: $(LIBRARY) $(PROGRAM)

# Install what is missing (as root through apt-get; otherwise print the command). A package
# whose command is on PATH counts as present (npm also comes with other builds of nodejs).
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing \
	      >/dev/null || exit 1; \
	  else \
	    echo "moreau needs Debian packages; run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBRARY): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(PROGRAM): $(CLI_OBJ) $(VIEWER_OBJ) $(LIBRARY)
	$(CC) $(OPT) $(CFLAGS) $(LDFLAGS) $(CLI_OBJ) $(VIEWER_OBJ) $(LIBRARY) $(LIBS) -o $@

# the viewer: three.js and esbuild from npm, one minified script, linked in with the page
$(VIEWER_NPM): viewer/package.json viewer/package-lock.json
	cd viewer && npm ci --no-audit --no-fund --loglevel=error

$(VIEWER_BUNDLE): $(VIEWER_SRC) $(VIEWER_NPM)
	@mkdir -p $(dir $@)
	viewer/node_modules/.bin/esbuild viewer/src/main.js --bundle --minify --format=iife \
	  --log-level=warning --outfile=$@

$(VIEWER_OBJ): $(VIEWER_BUNDLE) viewer/page.html
	@mkdir -p $(dir $@)
	@{ echo '.section .rodata'; \
	   echo '.global mr_viewer_page, mr_viewer_page_end, mr_viewer_js, mr_viewer_js_end'; \
	   echo 'mr_viewer_page: .incbin "$(abspath viewer/page.html)"'; \
	   echo 'mr_viewer_page_end: .byte 0'; \
	   echo 'mr_viewer_js: .incbin "$(abspath $(VIEWER_BUNDLE))"'; \
	   echo 'mr_viewer_js_end: .byte 0'; \
	   echo '.section .note.GNU-stack,"",@progbits'; } > $(BUILD)/viewer/assets.s
	$(CC) -c $(BUILD)/viewer/assets.s -o $@

$(BUILD)/tests/%: tests/%.c $(LIBRARY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(TEST_LDFLAGS) $< $(LIBRARY) $(LIBS) -lcmocka $(TEST_LIBS) -o $@

# the viewer test decodes PNG screenshots with zlib
$(BUILD)/tests/test_viewer: TEST_LIBS = -lz

# the allocation test counts moreau's own malloc, calloc and realloc calls
$(BUILD)/tests/test_no_alloc: TEST_LDFLAGS = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

$(BUILD)/bench/%: bench/%.c $(LIBRARY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(LIBRARY) $(LIBS) -o $@

# Run every test program; print one closing line with the totals.
run-tests: $(TEST_BIN) $(PROGRAM)
	@pass=0; fail=0; failed=""; \
	for t in $(TEST_BIN); do \
	  if MOREAU_SHARED=$(SHARED) MOREAU_BIN=$(PROGRAM) $$t; then pass=$$((pass+1)); \
	  else fail=$$((fail+1)); failed="$$failed $$(basename $$t)"; fi; \
	done; \
	[ -z "$$failed" ] || echo "failed programs:$$failed"; \
	echo "programs: $$pass passed, $$fail failed"; \
	[ $$fail -eq 0 ]

test: deps
	@$(MAKE) --no-print-directory run-tests

check: deps
	@$(MAKE) --no-print-directory BUILD=build/check OPT="-O1 -g" \
	  CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" run-tests

bench-bins: $(BENCH_BIN)

bench: deps
	@$(MAKE) --no-print-directory BUILD=build/bench OPT="-O3 -march=native" bench-bins
	@for s in $(BENCH_SRC); do b=build/bench/bench/$$(basename $$s .c); echo "== $$b"; \
	  MOREAU_SHARED=$(SHARED) $$b || exit 1; done

# moreau against MuJoCo (Debian libmujoco-dev), installed as by deps
$(BUILD)/peers: $(PEERS_SRC) $(LIBRARY)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(LIBRARY) $(LIBS) -lmujoco -o $@

bench-peers: deps
	@$(MAKE) --no-print-directory DEB_PKGS=libmujoco-dev deps
	@$(MAKE) --no-print-directory BUILD=build/bench OPT="-O3 -march=native" build/bench/peers
	build/bench/peers

run: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p out
	$(PROGRAM) run scenes/demo.yaml --html out/demo.html
	@echo "open out/demo.html in a browser to replay the demo (docs/viewer.md)"

# installs the plotting packages through the deps recipe, then runs every experiment
experiments: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(EXP_PKGS)"
	@$(MAKE) --no-print-directory all
	MOREAU=$(PROGRAM) experiments/run.sh

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(BENCH_SRC) $(PEERS_SRC) \
	  $(wildcard include/moreau/*.h src/*/*.h tests/*.h)

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
