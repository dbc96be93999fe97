"""Score the converter on the held-out captures under ``tests/fixtures/heldout/``.

The held-out set is agents and telemetry the converter's rules were not written against: each
folder holds real payloads of the weather agent (``tests/fixtures/frameworks/harness``) and an
``expected.json`` written from the model script and what the agent really did, never from the
converter. This prints, for every captured shape, the fields that came out wrong, then the
score: shapes right of all shapes, and pairs (agent + telemetry) with every shape right.

    .venv/bin/python tests/convert/heldout_score.py [NAME ...]

Run it before looking at why a row fails (see tests/fixtures/heldout/README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from framework_helpers import convert_folder  # noqa: E402

from tracereplay.models.run import Run  # noqa: E402

HELDOUT = Path(__file__).resolve().parent.parent / "fixtures" / "heldout"


def _calls(run: Run) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool_name, c.arguments) for c in run.result.tool_calls]


def score_shape(runs: list[Run], truth: dict[str, Any]) -> list[str]:
    """What is wrong with ``runs`` against the shape's ``truth`` (empty: right)."""
    wrong: list[str] = []
    tops = [r for r in runs if r.parent_run_id is None]
    if len(tops) != truth.get("runs", 1):
        wrong.append(f"runs: {len(tops)} for {truth.get('runs', 1)}")
    if not tops:
        return wrong or ["no run"]
    run = max(tops, key=lambda r: (r.result.total_llm_calls, len(r.result.tool_calls)))
    name = truth.get("agent_name")
    if name is not None and run.agent_name != name:
        wrong.append(f"agent_name: {run.agent_name!r}")
    if "query" in truth and run.query.strip() != truth["query"].strip():
        wrong.append(f"query: {run.query[:70]!r}")
    if (
        truth.get("response") is not None
        and run.result.response.strip() != truth["response"].strip()
    ):
        wrong.append(f"response: {run.result.response[:70]!r}")
    if "status" in truth and run.result.status != truth["status"]:
        wrong.append(f"status: {run.result.status}")
    # the invocation's model requests: the run's and its sub-runs' (expected.json counts what
    # the model server answered)
    calls = run.result.total_llm_calls + sum(
        r.result.total_llm_calls for r in runs if r.parent_run_id == run.run_id
    )
    if "llm_calls" in truth and calls != truth["llm_calls"]:
        wrong.append(f"llm_calls: {calls} for {truth['llm_calls']}")
    expected = truth.get("tool_calls")
    if expected is not None:
        want = [(c["name"], c["arguments"]) for c in expected]
        if _calls(run) != want:
            wrong.append(f"tool_calls: {_calls(run)} for {want}")
        else:
            for got, c in zip(run.result.tool_calls, expected, strict=True):
                if c.get("error"):
                    if c["error"] not in (got.error or ""):
                        wrong.append(f"{c['name']} error: {got.error!r}")
                elif c.get("result") is not None and got.result.strip() != str(c["result"]).strip():
                    wrong.append(f"{c['name']} result: {got.result[:60]!r}")
                if c.get("has_id") and not got.tool_call_id:
                    wrong.append(f"{c['name']}: no call id")
                if c.get("round") is not None and got.round != c["round"]:
                    wrong.append(f"{c['name']} round: {got.round} for {c['round']}")
    for sub in truth.get("sub_runs") or []:
        subs = [r for r in runs if r.parent_run_id == run.run_id]
        match = [r for r in subs if sub.get("agent_name") in (None, r.agent_name)]
        if not match:
            wrong.append(f"sub-run {sub.get('agent_name')}: missing")
        elif sub.get("response") and match[0].result.response.strip() != sub["response"].strip():
            wrong.append(f"sub-run response: {match[0].result.response[:60]!r}")
    return wrong


def score_folder(folder: Path) -> tuple[int, int, list[str]]:
    """``(shapes right, shapes, report lines)`` of one held-out pair."""
    expected = orjson.loads((folder / "expected.json").read_bytes())
    lines = [f"{folder.name}: {expected.get('agent', '')} / {expected.get('telemetry', '')}"]
    right = total = 0
    for shape, truth in expected["shapes"].items():
        total += 1
        payloads = folder / truth["folder"]
        if not any(payloads.glob("*-traces.*")):
            lines.append(f"  {shape}: NO PAYLOAD")
            continue
        wrong = score_shape(convert_folder(payloads), truth)
        right += not wrong
        lines.append(f"  {shape}: {'ok' if not wrong else 'WRONG: ' + '; '.join(wrong)}")
    return right, total, lines


def main(names: list[str]) -> int:
    folders = sorted(p for p in HELDOUT.iterdir() if (p / "expected.json").is_file())
    if names:
        folders = [f for f in folders if f.name in names]
    shapes_right = shapes = pairs_right = 0
    for folder in folders:
        right, total, lines = score_folder(folder)
        print("\n".join(lines))
        shapes_right += right
        shapes += total
        pairs_right += right == total
    print(
        f"held-out score: {shapes_right}/{shapes} shapes right, "
        f"{pairs_right}/{len(folders)} pairs with every shape right"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
