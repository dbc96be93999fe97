#!/bin/sh
# Offline replay demo (part of `make demo`): the weather agent on the OpenAI Python client is
# recorded against a scripted OpenAI-compatible model on loopback ("production"), the model is
# stopped, and the suite is replayed with --llm recorded: every LLM call answered from the
# recording, no network, no API key (what CI runs). Then the same suite is replayed live against
# the new model version, and offline with the new model, where prompt drift is reported.
#
#     sh examples/demo_offline.sh [DB]        (default demo-work/tracereplay.duckdb)
set -eu
DB=${1:-demo-work/tracereplay.duckdb}
BIN=${BIN:-.venv/bin}
WORK=$(dirname "$DB")
mkdir -p "$WORK"
tr() { "$BIN/tracereplay" --db "$DB" "$@"; }
PYTHONPATH="examples/weather_agent${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
if [ -t 1 ]; then B='\033[1m' N='\033[0m'; else B='' N=''; fi
step() { printf "\n${B}\$ %s${N}\n" "$*"; }

# "production": the model behind an OpenAI-compatible API on 127.0.0.1
start_model() {
  rm -f "$WORK/model-url"
  "$BIN/python" examples/weather_agent/scripted_server.py --url-file "$WORK/model-url" >/dev/null &
  MODEL_PID=$!
  i=0
  while [ ! -s "$WORK/model-url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  OPENAI_BASE_URL=$(cat "$WORK/model-url")
}
stop_model() { kill "$MODEL_PID" 2>/dev/null || true; wait "$MODEL_PID" 2>/dev/null || true; }
trap stop_model EXIT

start_model
step "OPENAI_BASE_URL=$OPENAI_BASE_URL python examples/weather_agent/openai_agent.py --db $DB"
OPENAI_BASE_URL=$OPENAI_BASE_URL OPENAI_API_KEY=demo "$BIN/python" examples/weather_agent/openai_agent.py --db "$DB"
stop_model

step "tracereplay promote --where \"agent_name = 'weather_openai'\" --suite weather-offline"
tr promote --where "agent_name = 'weather_openai' AND kind = 'live'" --suite weather-offline

# CI: no API key, and the model's address answers nothing (connection refused if anything leaked)
step "tracereplay eval weather-offline --agent openai_agent:answer --llm recorded   # offline, no API key"
env -u OPENAI_API_KEY OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
  "$BIN/tracereplay" --db "$DB" eval weather-offline --agent openai_agent:answer --llm recorded \
  --label offline --json "$WORK/eval-offline.json"

step "tracereplay eval weather-offline --agent openai_agent:answer_v2 --llm recorded   # prompt drift"
env -u OPENAI_API_KEY OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
  "$BIN/tracereplay" --db "$DB" eval weather-offline --agent openai_agent:answer_v2 --llm recorded \
  --label offline-v2

step "tracereplay eval weather-offline --agent openai_agent:answer_v2 --llm recorded --llm-match strict"
if env -u OPENAI_API_KEY OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
  "$BIN/tracereplay" --db "$DB" eval weather-offline --agent openai_agent:answer_v2 --llm recorded \
  --llm-match strict --label offline-v2-strict; then
  echo "unexpected: strict matching let the new model's requests through" >&2
  exit 1
fi
echo "(exit code 1: the requests differ from the recording)"

start_model
step "tracereplay eval weather-offline --agent openai_agent:answer_v2 --llm live   # the new model, live"
OPENAI_BASE_URL=$OPENAI_BASE_URL OPENAI_API_KEY=demo \
  "$BIN/tracereplay" --db "$DB" eval weather-offline --agent openai_agent:answer_v2 --llm live \
  --label live-v2 || echo "(exit code 1: a case did not pass with the new model)"
stop_model
