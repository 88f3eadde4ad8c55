# optloop — build, test, install.
#
#   make            build ./optloop (installs missing Debian packages first)
#   make test       run every suite; ends with "N passed, N failed"
#   make sanitize   the same suite under ASan + UBSan (build/san)
#   make bench      benchmarks (figures on stdout)
#   make demo       build and open optloop on a fresh copy of the demo project
#   make fuzz       build the libFuzzer targets (clang) and run each briefly
#   make config     print what this machine's build decided (LINK, BUILD)
#   make install PREFIX=/usr/local   (also the bash, zsh and fish completions)
#   make V=1        print whole compiler commands instead of one line per step

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
SANITIZE ?=

ifeq ($(SANITIZE),1)
LINK    ?= shared
BUILD   ?= build/san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT      = -O1 -g
BIN      = $(BUILD)/optloop
else
LINK    ?= $(if $(filter /%,$(shell $(CC) -print-file-name=libgit2.a)),static,shared)
BUILD   ?= build/rel$(if $(filter shared,$(LINK)),-shared)
SANFLAGS =
OPT      = -O2 -g
BIN      = optloop
endif

# Debian packages the build, the tests and the demo need.
DEB_PKGS = gcc make pkg-config git tmux libc6-dev python3 \
	libncurses-dev libgit2-dev libsqlite3-dev libpcre2-dev libjansson-dev \
	libssh2-1-dev libmbedtls-dev libhttp-parser-dev libssl-dev zlib1g-dev \
	libcmocka-dev strace sqlite3 man-db groff-base libcairo2-dev librsvg2-bin \
	python3-pytest $(SLURM_PKGS)
# Runs through Slurm are tested against a real single-node cluster the test
# starts itself (tests/e2e/t_slurm.sh): the daemons, the client commands and
# munge for its authentication.
SLURM_PKGS = slurm-wlm munge
PKGS      = ncursesw libgit2 sqlite3 libpcre2-8 jansson
# cairo draws `optloop chart`: only its headers are used at build time; the
# shared library is opened when a chart is drawn (see tui/cli/chart_draw.c), so
# the other commands do not map its 19 shared objects at every start.
DLOPEN_PKGS = cairo
TEST_PKGS = cmocka

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(DLOPEN_PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
TEST_CFLAGS := $(shell pkg-config --cflags $(TEST_PKGS) 2>/dev/null)
TEST_LIBS   := $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)

WARN     = -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wvla
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -MMD -MP
CFLAGS  += -std=c11 $(OPT) $(WARN) $(SANFLAGS) $(PKG_CFLAGS)
LDFLAGS += $(SANFLAGS)
# the build id keys what optloop keeps of its own judgments (core/buildid.h)
LDFLAGS += -Wl,--build-id=sha1
LDLIBS  += $(PKG_LIBS) -lm

# How ./optloop itself is linked (the tests and benchmarks always link shared).
#
# LINK=static, the default where Debian's static archives are installed:
# libgit2, sqlite, PCRE2, jansson, ncurses and libgit2's own dependencies go
# into the executable, which is linked without PIE; glibc and Kerberos (Debian
# ships no static Kerberos) stay shared.  Every optloop command is a short
# process, and mapping and relocating 24 shared objects was most of the cost
# of a command like `optloop log --commit` (on a 2-core VM `optloop version`
# took 13.2 ms shared, 8.3 ms static with PIE, 6.5 ms static without).  The
# link also adjusts two of libgit2's start-up calls: see tui/no_tls.c.
#
# LINK=shared links every library through the dynamic linker (build/rel-shared).
comma := ,
ifeq ($(LINK),static)
CPPFLAGS += -DOPTLOOP_LINK_STATIC
# Each -lNAME becomes its archive where one is installed; glibc's own
# libraries and anything without an archive stay shared.  A private library
# that pkg-config names but that is not installed at all (libssh2.pc lists
# libgpg-error, which its OpenSSL build does not use) is left out.  Worked
# out when the binary is linked (a recursive variable), not on every make.
BIN_LIBS = $(shell for f in $$(pkg-config --static --libs $(PKGS) \
		$$(pkg-config --exists libssh2 && echo libssh2) 2>/dev/null) -lm; do \
	case $$f in \
	(-lm|-ldl|-lrt|-lpthread|-lc) echo $$f ;; \
	(-l*) a=$$(readlink -f $$($(CC) -print-file-name=lib$${f#-l}.a)); \
		so=$$($(CC) -print-file-name=lib$${f#-l}.so); \
		if [ -f "$$a" ]; then echo "$$a"; elif [ -e "$$so" ]; then echo $$f; fi ;; \
	(*) echo $$f ;; \
	esac; done)
# Debian's libgit2.pc leaves out GSSAPI, which its libgit2 uses for SPNEGO.
BIN_LIBS += $(shell objdump -p $$($(CC) -print-file-name=libgit2.so) 2>/dev/null | \
	awk '$$1 == "NEEDED" && $$2 ~ /^libgssapi/ { print "-l:" $$2 }')
BIN_LDFLAGS = -no-pie -Wl,--gc-sections -Wl,--as-needed \
	$(addprefix -Wl$(comma)--wrap=,mbedtls_x509_crt_parse_file mbedtls_x509_crt_parse_path \
		libssh2_init)
else
BIN_LIBS = $(LDLIBS)
BIN_LDFLAGS =
endif

CORE_SRC  := $(sort $(wildcard core/*.c))
VIEWS_SRC := $(sort $(wildcard views/*.c))
TUI_SRC   := $(sort $(wildcard tui/*.c tui/cli/*.c tui/workbench/*.c tui/cmd/*.c))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC := $(sort $(wildcard tests/bench/bench_*.c))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))

CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o)
VIEWS_OBJ := $(VIEWS_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ   := $(TUI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
# helpers the b_*.sh benchmarks run (not benchmarks of their own)
BENCH_HELPERS := $(BUILD)/bench/loop_engine $(BUILD)/bench/roofline_cost

LIBCORE  := $(BUILD)/libcore.a
LIBVIEWS := $(BUILD)/libviews.a

.PHONY: all deps test sanitize bench demo fuzz faults docs install uninstall clean config \
	_build _test _bench _demo _config _fuzz

# The public targets install what is missing first and then hand the work to
# a sub-make.  Everything that depends on installed libraries (LINK, BUILD,
# the flags from pkg-config) is worked out when a makefile is read, so the
# make that ran `deps` must not name a build file itself: on a fresh machine
# it read this file before libgit2.a existed.  The sub-make reads it again
# after `deps` and decides once; the private targets below (_build, _test,
# _bench, _demo) name the files.
# The sub-make builds with one job per core unless make was already given -j.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PAR   = $(if $(findstring jobserver,$(MAKEFLAGS))$(filter -j,$(MAKEFLAGS)),,-j$(JOBS))

all: deps
	@$(MAKE) $(PAR) --no-print-directory _build

# The official MCP SDK and Inspector (npm) for the t_mcp_sdk suite, at the
# versions tests/mcp/package-lock.json pins, into build/node; Node and npm
# from Debian first where the npm registry can be reached (a 5 s connect).
# Best effort: without npm or a registry to reach (CI has Debian packages
# only) deps says so in one line and succeeds, and the suite is skipped.
NODE_DIR := build/node
NPM ?= npm
# the host/port whose answer says the npm registry can be reached
NPM_PROBE ?= registry.npmjs.org/443

# Idempotent: quiet when everything is present; apt-get update first when not;
# sudo only when not root.  Non-Debian systems are left alone with a note.
deps:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
		echo "make deps: not a Debian system; install the equivalents of: $(DEB_PKGS)"; exit 0; fi; \
	missing=""; \
	for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		err=$$(mktemp); trap 'rm -f "$$err"' EXIT; \
		apt_wait() { \
			for i in $$(seq 60); do \
				$$sudo env DEBIAN_FRONTEND=noninteractive apt-get "$$@" >/dev/null 2>"$$err" && return 0; \
				grep -q 'Could not get lock' "$$err" || { cat "$$err" >&2; return 1; }; \
				[ "$$i" = 1 ] && echo "make deps: another package manager holds apt's lock (on a fresh machine, often its automatic upgrades); waiting for it, up to 5 minutes" >&2; \
				sleep 5; \
			done; \
			cat "$$err" >&2; return 1; \
		}; \
		echo "make deps: installing$$missing"; \
		apt_wait update -qq && apt_wait install -y -qq --no-install-recommends $$missing || \
		{ echo "make deps: apt-get failed; install by hand:$$missing" >&2; exit 1; }; \
	fi
	@if ! command -v $(NPM) >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && \
	    timeout 5 bash -c 'exec 3<>/dev/tcp/$(NPM_PROBE)' 2>/dev/null; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "make deps: installing nodejs npm (the MCP SDK suite's client)"; \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			nodejs npm >/dev/null 2>&1 || \
			echo "make deps: apt-get could not install nodejs npm"; \
	fi
	@if ! command -v $(NPM) >/dev/null 2>&1; then \
		echo "make deps: npm not found: the MCP SDK suite (t_mcp_sdk) will be skipped (apt-get install nodejs npm where the npm registry can be reached)"; \
	elif [ -f $(NODE_DIR)/npm-failed ] && cmp -s tests/mcp/package-lock.json $(NODE_DIR)/npm-failed; then \
		echo "make deps: the MCP SDK suite (t_mcp_sdk) is skipped: npm could not install it before (see $(NODE_DIR)/npm.log; rm $(NODE_DIR)/npm-failed to try again)"; \
	elif ! cmp -s tests/mcp/package-lock.json $(NODE_DIR)/package-lock.json || \
	     [ ! -d $(NODE_DIR)/node_modules/@modelcontextprotocol/sdk ]; then \
		mkdir -p $(NODE_DIR) && cp tests/mcp/package.json tests/mcp/package-lock.json $(NODE_DIR)/ && \
		if ! (cd $(NODE_DIR) && timeout 120 $(NPM) ci --no-audit --no-fund --loglevel=error \
			--fetch-retries=1 --fetch-timeout=20000 >npm.log 2>&1); then \
			mv -f $(NODE_DIR)/package-lock.json $(NODE_DIR)/npm-failed; \
			echo "make deps: npm could not install @modelcontextprotocol/sdk (no registry? see $(NODE_DIR)/npm.log): the MCP SDK suite (t_mcp_sdk) will be skipped; rm $(NODE_DIR)/npm-failed to try again"; \
		fi; \
	fi

# One short line per step ("  CC    core/loop.c"); make V=1 prints the
# whole commands.
ifeq ($(V),1)
Q   :=
say := @true
else
Q   := @
say := @printf '  %-5s %s\n'
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBCORE): $(CORE_OBJ)
	@rm -f $@
	$(say) AR $@
	$(Q)ar rcs $@ $^

$(LIBVIEWS): $(VIEWS_OBJ)
	@rm -f $@
	$(say) AR $@
	$(Q)ar rcs $@ $^ $(if $(VIEWS_OBJ),,)

$(BIN): $(TUI_OBJ) $(LIBVIEWS) $(LIBCORE)
	@mkdir -p $(dir $@)
	$(say) LINK $@
	$(Q)$(CC) $(LDFLAGS) $(BIN_LDFLAGS) -o $@ $(TUI_OBJ) $(LIBVIEWS) $(LIBCORE) $(BIN_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBVIEWS) $(LIBCORE)
	@mkdir -p $(@D)
	$(say) LINK $@
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBVIEWS) $(LIBCORE) $(TEST_LIBS) $(LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIBVIEWS) $(LIBCORE)
	@mkdir -p $(@D)
	$(say) LINK $@
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBVIEWS) $(LIBCORE) $(LDLIBS)

test: deps
	@$(MAKE) $(PAR) --no-print-directory _test

_build: $(BIN)

_test: $(BIN) $(UNIT_BIN) $(BENCH_HELPERS)
	@BUILD=$(BUILD) OPTLOOP=$(abspath $(BIN)) LIBCORE=$(abspath $(LIBCORE)) \
		tests/run.sh $(UNIT_BIN)

sanitize:
	@$(MAKE) --no-print-directory test SANITIZE=1

bench: deps
	@$(MAKE) $(PAR) --no-print-directory _bench

_bench: $(BIN) $(BENCH_BIN) $(BENCH_HELPERS)
	@BUILD=$(BUILD) OPTLOOP=$(abspath $(BIN)) tests/bench/run.sh $(BENCH_BIN)

# What this machine's build decides: how ./optloop is linked and where the
# objects go (after `deps`, as every target sees it).
config: deps
	@$(MAKE) --no-print-directory _config

_config:
	@printf 'LINK=%s\nBUILD=%s\nBIN=%s\n' '$(LINK)' '$(BUILD)' '$(BIN)'

# make demo DIR=~/demo makes it there (default: a new folder under $TMPDIR).
demo: deps
	@$(MAKE) $(PAR) --no-print-directory _demo

_demo: $(BIN)
	@./$(BIN) demo $(DIR)

# The man page from its one source of each part: the command reference
# (assets/man/commands.md), the commands' option tables, the key table, the prose of
# assets/man/optloop.1.in (a test checks the committed page is this).
docs: all
	@./$(BIN) help --man > assets/man/optloop.1.new && mv assets/man/optloop.1.new assets/man/optloop.1
	$(say) GEN assets/man/optloop.1

# The fault-injection suite at every single write and rename call (make test
# runs it at a spread of points).  Well over a thousand kill points, each a command
# run to its kill and the invariants checked after: hours on two cores, so a
# suite gets four (TEST_TIMEOUT overrides).
faults: deps
	@$(MAKE) --no-print-directory test FAULT_FULL=1 TESTS_FILTER=fault_inject TEST_TIMEOUT=$${TEST_TIMEOUT:-14400}

# The committed corpus only seeds a run: libFuzzer writes new inputs to its
# first corpus folder, so that one is build/fuzz/<target>.new.
FUZZ_CC ?= clang
fuzz: deps
	@$(MAKE) --no-print-directory _fuzz

_fuzz:
	@mkdir -p build/fuzz
	@for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); \
		echo "fuzz: building $$n"; \
		$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined $(CPPFLAGS) $(PKG_CFLAGS) \
			-o build/fuzz/$$n $$f $(CORE_SRC) $(PKG_LIBS) -lm || exit 1; \
		mkdir -p tests/fuzz/corpus/$$n build/fuzz/$$n.new; \
		build/fuzz/$$n -max_total_time=$${FUZZ_SECONDS:-30} -max_len=4096 \
			-artifact_prefix=build/fuzz/$$n- \
			build/fuzz/$$n.new tests/fuzz/corpus/$$n >build/fuzz/$$n.log 2>&1; \
		rc=$$?; tail -n 3 build/fuzz/$$n.log; [ $$rc = 0 ] || exit 1; \
	done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/optloop $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/optloop
	cp -R assets $(DESTDIR)$(PREFIX)/share/optloop/
	install -m 644 assets/man/optloop.1 $(DESTDIR)$(PREFIX)/share/man/man1/optloop.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	./$(BIN) completion bash >$(DESTDIR)$(PREFIX)/share/bash-completion/completions/optloop
	./$(BIN) completion zsh >$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_optloop
	./$(BIN) completion fish >$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/optloop.fish

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/optloop $(DESTDIR)$(PREFIX)/share/man/man1/optloop.1
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/optloop \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_optloop \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/optloop.fish
	rm -rf $(DESTDIR)$(PREFIX)/share/optloop

clean:
	rm -rf build optloop

-include $(CORE_OBJ:.o=.d) $(VIEWS_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(UNIT_BIN:=.d)
