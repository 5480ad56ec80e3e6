# moreau: build, test, run, bench.
#
#   make            build/libmoreau.a and build/moreau
#   make run        the default demo, and its replay out/demo.html, and build/libmoreau.so for
#                   the Python package (installs missing Debian packages first)
#   make test       every test program and the Python tests, TEST_JOBS (2) at a time: one line
#                   per program, the failing ones' output, "programs: N passed, M failed"
#                   (installs missing Debian packages first); includes the CMake build's test
#   make check      the test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then a
#                   short fuzzing smoke run of every parser (installs clang first)
#   make fuzz       a bounded libFuzzer campaign, FUZZ_TIME seconds per parser (default 60)
#   make bench      benchmark programs, built with -O3 -march=native, and the Python package's
#                   overhead (bench/python_overhead.py)
#   make bench-peers moreau against MuJoCo (installs libmujoco-dev first), -O3 -march=native
#   make deps       install the Debian packages the build needs
#   make experiments  the contact-model experiments B1–B11: docs/results/*.csv and *.png
#   make robots-table the example-robot-data and MJCF tables of docs/robots.md
#                   (tests/test_robots_corpus.c)
#   make format     apply .clang-format to the sources
#   make shared     build/libmoreau.so (versioned soname) and build/moreau.pc
#   make install    library (static and shared), headers, moreau.pc, the CMake package
#                   (lib/cmake/moreau), the moreau command, the Python package, scenes and robots
#                   into $(DESTDIR)$(PREFIX) (PREFIX default /usr/local); CMakeLists.txt builds
#                   and installs the same library files for CMake
#   make mutants    the mutation run of tools/mutants.tsv (not part of make test)
#
# The library embeds the viewer (viewer/, for the replay pages and the live server): `npm ci`
# installs three.js and esbuild from viewer/package-lock.json, esbuild bundles viewer/src/ into
# one script, and the page template and that script are linked in as data (docs/viewer.md).

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?=
LDFLAGS ?=
BUILD   ?= build
SHARED  ?= $(abspath ../shared)

DEB_PKGS = gcc make pkg-config libccd-dev libcglm-dev libyaml-dev libcmocka-dev libxml2-dev \
           libqhull-dev libassimp-dev zlib1g-dev nodejs npm chromium libopenmpi-dev openmpi-bin \
           libsuitesparse-dev libjansson-dev libwebsockets-dev
# plotting, for make experiments only
EXP_PKGS = gnuplot-nox
# the test suite's reference implementations (FCL for tests/test_collision_fcl.c, MuJoCo 2.2.2
# for tests/test_mjcf_mujoco.c), the CMake build it checks (tests/test_cmake.c, the find_package
# consumers of tests/test_install.c) and libspng for the viewer tests' screenshots
TEST_PKGS = libfcl-dev cmake libspng-dev libmujoco-dev
# libFuzzer (clang's -fsanitize=fuzzer and its runtime), for make fuzz and make check
FUZZ_PKGS = clang libclang-rt-14-dev

WARN     = -std=c11 -Wall -Wextra -Wpedantic -Werror -Wno-unused-parameter
DEFS     = -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L
# the C libraries, through pkg-config where they ship a .pc file (CHOLMOD does not in Debian 12);
# each look-up runs once, when the flags are first needed (after make deps has installed them)
PC_REQUIRES = ccd qhull_r libxml-2.0 yaml-0.1 assimp jansson libwebsockets zlib
LIBS_NOPC   = -lcholmod -lsuitesparseconfig -lm -pthread
PKG_CFLAGS  = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PC_REQUIRES) 2>/dev/null))$(PKG_CFLAGS)
PKG_LIBS    = $(eval PKG_LIBS := $(shell pkg-config --libs $(PC_REQUIRES) 2>/dev/null))$(PKG_LIBS)
CMOCKA_LIBS = $(eval CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null))$(CMOCKA_LIBS)
INCS     = -Iinclude -Isrc $(PKG_CFLAGS)
ALL_CFLAGS = $(WARN) $(DEFS) $(OPT) $(CFLAGS) $(INCS) -MMD -MP
LIBS     = $(PKG_LIBS) $(LIBS_NOPC)

LIB_SRC  = $(sort $(wildcard src/core/*.c src/dynamics/*.c src/collision/*.c src/contact/*.c \
                             src/integrate/*.c src/control/*.c src/model/*.c src/io/*.c \
                             src/viewer/*.c))
CLI_SRC  = $(sort $(wildcard src/cli/*.c))
TEST_SRC = $(sort $(wildcard tests/test_*.c))
PEERS_SRC = bench/peers.c bench/scale.c
# sources shared by benchmark programs, linked into those that list them below
BENCH_SHARED_SRC = bench/scale_scenes.c
BENCH_SRC = $(filter-out $(PEERS_SRC) $(BENCH_SHARED_SRC),$(sort $(wildcard bench/*.c)))

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

LIBRARY  = $(BUILD)/libmoreau.a
PROGRAM  = $(BUILD)/moreau

# one libFuzzer harness per parser (fuzz/fuzz_NAME.c, seeds in fuzz/corpus/NAME/)
FUZZ_NAMES = scene urdf mjcf mesh problem qpcc live
FUZZ_TIME  ?= 60
FUZZ_SMOKE ?= 5
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BIN   = $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
VIEWER_SRC    = $(sort $(wildcard viewer/src/*.js))
VIEWER_NPM    = viewer/node_modules/.package-lock.json
VIEWER_BUNDLE = $(BUILD)/viewer/viewer.js
VIEWER_OBJ    = $(BUILD)/obj/viewer_assets.o

.PHONY: all deps test run-tests check bench bench-bins bench-peers run experiments format clean \
        robots-table mutants fuzz fuzz-bins fuzz-run

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

$(LIBRARY): $(LIB_OBJ) $(VIEWER_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(PROGRAM): $(CLI_OBJ) $(LIBRARY)
	$(CC) $(OPT) $(CFLAGS) $(LDFLAGS) $(CLI_OBJ) $(LIBRARY) $(LIBS) $(MPI_LIBS) -o $@

# moreau sweep spreads its runs over MPI processes (docs/cli.md): the program links the system
# MPI (Debian's default, through the mpi-c pkg-config alternative) and starts it only when an
# MPI launcher started the process; only src/cli/mpi.c includes mpi.h
MPI_CFLAGS = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags mpi-c 2>/dev/null))
MPI_LIBS   = $(shell pkg-config --libs mpi-c 2>/dev/null)
$(BUILD)/obj/src/cli/mpi.o: ALL_CFLAGS += $(MPI_CFLAGS)

# the viewer: three.js and esbuild from npm, one minified script, linked into the library with
# the page (hidden symbols: the replay writer and the live server read them)
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
	   echo '.hidden mr_viewer_page, mr_viewer_page_end, mr_viewer_js, mr_viewer_js_end'; \
	   echo 'mr_viewer_page: .incbin "$(abspath viewer/page.html)"'; \
	   echo 'mr_viewer_page_end: .byte 0'; \
	   echo 'mr_viewer_js: .incbin "$(abspath $(VIEWER_BUNDLE))"'; \
	   echo 'mr_viewer_js_end: .byte 0'; \
	   echo '.section .note.GNU-stack,"",@progbits'; } > $(BUILD)/viewer/assets.s
	$(CC) -c $(BUILD)/viewer/assets.s -o $@

$(BUILD)/tests/%: tests/%.c $(LIBRARY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(TEST_LDFLAGS) $< $(LIBRARY) $(LIBS) $(CMOCKA_LIBS) $(TEST_LIBS) -o $@

# the viewer tests decode PNG screenshots with libspng
$(BUILD)/tests/test_viewer $(BUILD)/tests/test_viewer_live: TEST_LIBS = $(shell pkg-config --libs spng)
# the MJCF cross-check loads every model in MuJoCo too
$(BUILD)/tests/test_mjcf_mujoco: TEST_LIBS = -lmujoco

# the FCL cross-check links a C++ helper against FCL (and through fcl.pc Eigen and octomap)
$(BUILD)/tests/fcl_ref.o: tests/fcl_ref.cpp tests/fcl_ref.h
	@mkdir -p $(dir $@)
	$(CXX) $(shell pkg-config --cflags fcl) -std=c++14 $(OPT) $(CFLAGS) -Itests -c $< -o $@

$(BUILD)/tests/test_collision_fcl: tests/test_collision_fcl.c $(BUILD)/tests/fcl_ref.o $(LIBRARY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(BUILD)/tests/fcl_ref.o $(LIBRARY) $(LIBS) $(CMOCKA_LIBS) \
	  $(shell pkg-config --libs fcl) -lstdc++ -o $@

# the allocation test counts moreau's own malloc, calloc and realloc calls
$(BUILD)/tests/test_no_alloc: TEST_LDFLAGS = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
# the control test steps simulators in threads
$(BUILD)/tests/test_control: TEST_LDFLAGS = -pthread

$(BUILD)/bench/%: bench/%.c $(LIBRARY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(filter %.c,$^) $(LIBRARY) $(LIBS) -o $@

$(BUILD)/bench/corpus $(BUILD)/bench/collision: bench/scale_scenes.c bench/scale_scenes.h

# Run every test program and the Python tests, TEST_JOBS at a time (tools/run_tests.sh): one line
# per program (name, passed/failed, seconds), the whole output of the failing ones, and the
# closing line "programs: N passed, M failed". TEST_SKIP names programs left out of the run.
# tools/check_layers.sh runs with them: no file includes a header of a layer above its own.
TEST_JOBS ?= 2
TEST_SKIP ?=
TEST_RUN  = $(filter-out $(TEST_SKIP:%=$(BUILD)/tests/%),$(TEST_BIN))
run-tests: $(TEST_BIN) $(PROGRAM)
	@if [ -n "$$CI" ] && [ ! -d "$(SHARED)/reference" ]; then \
	  echo "CI: $(SHARED)/reference is missing: the reference-robot tests would be skipped"; \
	  exit 1; fi
	@{ $(foreach t,$(TEST_RUN),printf '%s\t%s\n' '$(notdir $t)' \
	     'MOREAU_SHARED=$(SHARED) MOREAU_BIN=$(PROGRAM) $t';) \
	   printf '%s\t%s\n' python '$(PYTHON_TEST)'; \
	   printf '%s\t%s\n' layers tools/check_layers.sh; } | tools/run_tests.sh $(TEST_JOBS) $(BUILD)/test-logs

test: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_PKGS)"
	@$(MAKE) --no-print-directory run-tests

check: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_PKGS)"
	@$(MAKE) --no-print-directory BUILD=build/check OPT="-O1 -g" TEST_SKIP=test_cmake \
	  CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" run-tests
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=$(FUZZ_SMOKE)

# The harnesses link clang's libFuzzer; the library they fuzz is built by clang with coverage
# instrumentation and ASan + UBSan in build/fuzz.
$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(LIBRARY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< $(LIBRARY) $(LIBS) -o $@

# the QPCC reader is file-local to the command's source, which the harness includes
$(BUILD)/fuzz/fuzz_qpcc: src/cli/qpcc.c

fuzz-bins: $(FUZZ_BIN)

# Each harness mutates a working corpus ($(BUILD)/fuzz/corpus/NAME, i.e.
# build/fuzz/fuzz/corpus/NAME, kept between runs) seeded from fuzz/corpus/NAME for FUZZ_TIME
# seconds; a crash, leak, UB report, 10 s input or 2 GB RSS stops it with the input saved as
# build/fuzz/fuzz/crash-NAME-*. Leaks inside the libraries moreau calls are suppressed by
# fuzz/lsan.supp (full malloc stacks, so that a suppression sees the library's frames).
fuzz-run: fuzz-bins
	@for h in $(FUZZ_NAMES); do \
	  mkdir -p $(BUILD)/fuzz/corpus/$$h; \
	  echo "== fuzz $$h ($(FUZZ_TIME) s)"; \
	  ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(abspath fuzz/lsan.supp) \
	  $(BUILD)/fuzz/fuzz_$$h -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=65536 -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crash-$$h- \
	    $(BUILD)/fuzz/corpus/$$h fuzz/corpus/$$h 2>$(BUILD)/fuzz/$$h.log \
	    || { tail -40 $(BUILD)/fuzz/$$h.log; exit 1; }; \
	  grep -E "^stat::(number_of_executed_units|new_units_added)" $(BUILD)/fuzz/$$h.log; \
	done

fuzz: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(FUZZ_PKGS)"
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT="-O1 -g" \
	  CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" LDFLAGS="$(FUZZ_SAN)" fuzz-run

# one-line bugs applied one at a time to a scratch copy (tools/mutants.tsv, docs/testing.md);
# MUTANTS passes options, e.g. MUTANTS="--only ID,ID --tests test_foo,python"
MUTANTS ?=
mutants: deps
	/usr/bin/python3 tools/mutants.py --shared $(SHARED) $(MUTANTS)

bench-bins: $(BENCH_BIN)

bench: deps
	@$(MAKE) --no-print-directory BUILD=build/bench OPT="-O3 -march=native" bench-bins \
	  build/bench/libmoreau.so.$(MR_VERSION)
	@for s in $(BENCH_SRC); do b=build/bench/bench/$$(basename $$s .c); echo "== $$b"; \
	  MOREAU_SHARED=$(SHARED) $$b || exit 1; done
	@echo "== bench/python_overhead.py"
	MOREAU_LIB=$(abspath build/bench/libmoreau.so.$(MR_VERSION)) $(PYTHON) bench/python_overhead.py

# moreau against MuJoCo (Debian libmujoco-dev), installed as by deps
$(BUILD)/peers $(BUILD)/scale: $(BUILD)/%: bench/%.c $(LIBRARY)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(filter %.c,$^) $(LIBRARY) $(LIBS) -lmujoco -o $@

$(BUILD)/scale: bench/scale_scenes.c bench/scale_scenes.h

bench-peers: deps
	@$(MAKE) --no-print-directory DEB_PKGS=libmujoco-dev deps
	@$(MAKE) --no-print-directory BUILD=build/bench OPT="-O3 -march=native" build/bench/peers \
	  build/bench/scale
	build/bench/peers
	build/bench/scale
	build/bench/scale ncp-pgs

run: deps
	@$(MAKE) --no-print-directory all shared
	@mkdir -p out
	$(PROGRAM) run scenes/demo.yaml --html out/demo.html
	@echo "open out/demo.html in a browser to replay the demo (docs/viewer.md)"

# installs the plotting packages through the deps recipe, then runs every experiment
experiments: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(EXP_PKGS)"
	@$(MAKE) --no-print-directory all
	MOREAU=$(PROGRAM) experiments/run.sh

# docs/robots.md's table: the example-robot-data corpus test's results, spliced between the
# table markers of the page (steps/s are this machine's, at the time of the run)
robots-table: deps $(BUILD)/tests/test_robots_corpus
	MOREAU_SHARED=$(SHARED) MOREAU_ROBOTS_TABLE=$(BUILD)/robots_table.md \
	  MOREAU_MJCF_TABLE=$(BUILD)/mjcf_table.md $(BUILD)/tests/test_robots_corpus
	for m in robots mjcf; do \
	  awk -v t=$(BUILD)/$${m}_table.md -v m=$$m '$$0 == "<!-- " m "-table -->" {print; \
	    while ((getline l < t) > 0) print l; skip = 1; next} \
	    $$0 == "<!-- end " m "-table -->" {skip = 0} !skip' docs/robots.md \
	    > $(BUILD)/robots.md && mv $(BUILD)/robots.md docs/robots.md || exit 1; \
	done

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(BENCH_SRC) $(PEERS_SRC) \
	  $(wildcard include/moreau/*.h src/*/*.h tests/*.h)

clean:
	rm -rf build

# ---- shared library, pkg-config file, CMake package, installation ----

# the version: include/moreau/version.h (read by CMakeLists.txt too)
MR_VERSION_H = include/moreau/version.h
MR_VERSION  := $(shell sed -n 's/^\#define MR_VERSION_STRING "\([0-9.]*\)".*/\1/p' $(MR_VERSION_H))
MR_VERSION_MAJOR := $(word 1,$(subst ., ,$(MR_VERSION)))
MR_VERSION_MINOR := $(word 2,$(subst ., ,$(MR_VERSION)))
MR_SOVERSION = $(MR_VERSION_MAJOR)
PREFIX      ?= /usr/local
DESTDIR     ?=
SHLIB        = $(BUILD)/libmoreau.so.$(MR_VERSION)
SHLIB_SONAME = libmoreau.so.$(MR_SOVERSION)
PC_FILE      = $(BUILD)/moreau.pc
CMAKE_CONFIG = $(BUILD)/moreauConfig.cmake $(BUILD)/moreauConfigVersion.cmake

.PHONY: shared install FORCE

# library objects are position independent so that the shared library can link them; without
# semantic interposition calls inside the library stay direct and inlinable, as in the .a
$(LIB_OBJ): ALL_CFLAGS += -fPIC -fno-semantic-interposition

shared: $(SHLIB) $(PC_FILE)

$(SHLIB): $(LIB_OBJ) $(VIEWER_OBJ)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,$(SHLIB_SONAME) $^ $(LIBS) -o $@
	ln -sf libmoreau.so.$(MR_VERSION) $(BUILD)/$(SHLIB_SONAME)
	ln -sf $(SHLIB_SONAME) $(BUILD)/libmoreau.so

# the PREFIX of the last make in this build directory, rewritten only when it changes, so that
# moreau.pc is remade for `make install PREFIX=...`
$(BUILD)/prefix.txt: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(PREFIX)" ] || echo "$(PREFIX)" > $@

# moreau.pc and the CMake package's files from the templates in cmake/ (CMakeLists.txt fills the
# same templates: both builds install the same files)
CONFIGURE = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|lib|g' -e 's|@VERSION@|$(MR_VERSION)|g' \
  -e 's|@VERSION_MAJOR@|$(MR_VERSION_MAJOR)|g' -e 's|@VERSION_MINOR@|$(MR_VERSION_MINOR)|g' \
  -e 's|@SOVERSION@|$(MR_SOVERSION)|g' -e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES)|g' \
  -e 's|@LIBS_PRIVATE@|$(LIBS_NOPC)|g' -e 's|@CONFIG_TO_PREFIX@|../../..|g'

$(PC_FILE): cmake/moreau.pc.in $(BUILD)/prefix.txt $(MR_VERSION_H) Makefile
	@mkdir -p $(dir $@)
	$(CONFIGURE) $< > $@

$(CMAKE_CONFIG): $(BUILD)/%: cmake/%.in $(MR_VERSION_H) Makefile
	@mkdir -p $(dir $@)
	$(CONFIGURE) $< > $@

# moreau.pc is written for the PREFIX of this install, straight into its place: two installs with
# different prefixes at once (the install tests) share no file
install: $(LIBRARY) $(SHLIB) $(CMAKE_CONFIG) $(PROGRAM) install-python
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/moreau \
	  $(DESTDIR)$(PREFIX)/include/moreau $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(LIBRARY) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libmoreau.so.$(MR_VERSION) $(DESTDIR)$(PREFIX)/lib/$(SHLIB_SONAME)
	ln -sf $(SHLIB_SONAME) $(DESTDIR)$(PREFIX)/lib/libmoreau.so
	install -m 644 include/moreau/*.h $(DESTDIR)$(PREFIX)/include/moreau/
	$(CONFIGURE) cmake/moreau.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/moreau.pc
	chmod 644 $(DESTDIR)$(PREFIX)/lib/pkgconfig/moreau.pc
	install -m 644 $(CMAKE_CONFIG) $(DESTDIR)$(PREFIX)/lib/cmake/moreau/
	install -m 755 $(PROGRAM) $(DESTDIR)$(PREFIX)/bin/
	@echo "installed in $(DESTDIR)$(PREFIX): the library (lib/), headers, moreau.pc, the CMake"\
	  "package (lib/cmake/moreau), the moreau command; the Python package moreau in $(PY_SITE)/moreau (it loads $(PREFIX)/lib/libmoreau.so;"\
	  "if $(PY_SITE) is not on the interpreter's path: PYTHONPATH=$(PY_SITE)); scenes and robots"\
	  "in $(DATADIR)"

# the install tests and the Python tests use the shared library, the pkg-config file and the
# CMake package's files
run-tests: $(SHLIB) $(PC_FILE) $(CMAKE_CONFIG)
# the install test links its example with the flags of this build (sanitizers under make check)
$(BUILD)/tests/test_install: TEST_LDFLAGS = -DMR_TEST_LINK_FLAGS='"$(LDFLAGS)"'

# ---- Python bindings (python/moreau, ctypes over the shared library) ----

# numpy; venv, pip and wheel for the package's pip install (python/pyproject.toml) and its test
PY_PKGS  = python3-numpy python3-venv python3-pip python3-setuptools python3-wheel
DEB_PKGS += $(PY_PKGS)
PYTHON  ?= /usr/bin/python3
# make install puts the package where Debian's interpreter looks for a prefix's packages
# (/usr/local/lib/python3.X/dist-packages is on its sys.path), scenes and robots in share/moreau
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' \
                2>/dev/null)
PY_SITE ?= $(PREFIX)/lib/python$(PY_VERSION)/dist-packages
DATADIR  = $(PREFIX)/share/moreau

.PHONY: install-python
install-python:
	install -d $(DESTDIR)$(PY_SITE)/moreau $(DESTDIR)$(DATADIR)
	install -m 644 python/moreau/*.py $(DESTDIR)$(PY_SITE)/moreau/
	rm -f $(DESTDIR)$(PY_SITE)/moreau/_paths.py
	$(CONFIGURE) cmake/_paths.py.in > $(DESTDIR)$(PY_SITE)/moreau/_paths.py
	cp -R scenes robots $(DESTDIR)$(DATADIR)/
# under the sanitizers the interpreter must load their runtimes before the library
PY_ENV   = $(if $(findstring sanitize=address,$(CFLAGS)),LD_PRELOAD="$$($(CC) \
           -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
           ASAN_OPTIONS=detect_leaks=0)

PYTHON_TEST = MOREAU_LIB=$(abspath $(SHLIB)) MOREAU_BIN=$(abspath $(PROGRAM)) $(PY_ENV) \
              $(PYTHON) -m unittest discover -s python/tests -t python

.PHONY: python-test
python-test: $(SHLIB) $(PROGRAM)
	$(PYTHON_TEST)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(FUZZ_BIN:=.d) $(TEST_BIN:=.d)
