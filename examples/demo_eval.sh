#!/bin/sh
# The evaluation demo (the end of `make demo`): the weather agent's good runs become a suite, are
# scored as recorded, replayed against the agent (tools answered from the recording), then replayed
# after a change that breaks one tool call; `eval` and `diff` show the regression.
#
#     sh examples/demo_eval.sh [DB]        (default demo-work/tracereplay.duckdb)
set -eu
DB=${1:-demo-work/tracereplay.duckdb}
BIN=${BIN:-.venv/bin}
WORK=$(dirname "$DB")
mkdir -p "$WORK"
tr() { "$BIN/tracereplay" --db "$DB" "$@"; }
# --agent imports eval_agent from the current directory or PYTHONPATH
PYTHONPATH="examples/weather_agent${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
if [ -t 1 ]; then B='\033[1m' N='\033[0m'; else B='' N=''; fi
step() { printf "\n${B}\$ %s${N}\n" "$*"; }

runs=0  # a store that is not there yet has no runs (and reading commands do not create one)
if [ -e "$DB" ] || [ -d "$DB.spool" ]; then
  runs=$(tr sql "SELECT count(*) FROM runs WHERE agent_name = 'weather_agent' AND kind = 'live'" --format csv | tail -n 1)
fi
if [ "$runs" = "0" ]; then
  step "python examples/weather_agent/demo.py --db $DB"
  "$BIN/python" examples/weather_agent/demo.py --db "$DB"
fi

GOOD="status = 'success' AND kind = 'live' AND agent_name = 'weather_agent'"
step "tracereplay promote --where \"$GOOD\" --suite weather-regressions"
tr promote --where "$GOOD" --suite weather-regressions

step "tracereplay eval weather-regressions          # recorded mode: score what the runs did"
tr eval weather-regressions --label recorded

step "tracereplay eval weather-regressions --agent eval_agent:answer      # replay the agent"
tr eval weather-regressions --agent eval_agent:answer --label v1 --json "$WORK/eval-v1.json"

step "tracereplay eval weather-regressions --agent eval_agent:answer_v2   # replay after the change"
if tr eval weather-regressions --agent eval_agent:answer_v2 --label v2 --json "$WORK/eval-v2.json" --junit "$WORK/eval-v2.junit.xml"; then
  echo "unexpected: the broken tool call was not caught" >&2
  exit 1
fi
echo "(exit code 1: a case did not pass)"

step "tracereplay eval weather-regressions --agent eval_agent:answer_v2 --tool-match fifo"
tr eval weather-regressions --agent eval_agent:answer_v2 --tool-match fifo --label v2-fifo || echo "(exit code 1: a case did not pass)"

id_of() { "$BIN/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["eval_run"]["eval_run_id"])' "$1"; }
V1=$(id_of "$WORK/eval-v1.json")
V2=$(id_of "$WORK/eval-v2.json")
step "tracereplay diff $V1 $V2"
if tr diff "$V1" "$V2"; then
  echo "unexpected: diff found no regression" >&2
  exit 1
fi
echo "(exit code 1: something regressed)"
