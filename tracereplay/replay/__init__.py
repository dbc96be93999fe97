"""Replay mode: each case's agent run again, its tools (and with ``--llm recorded`` its LLM)
answered from the recording, then scored on the run it made.

Modules: ``attempt`` (``Replayer``: one attempt of one case), ``agent_loader`` (what
``--agent`` names and how it is called), ``agent_process`` (attempts in agent processes, so a
crash or a hang ends its case only: the eval's side), ``agent_child`` (what runs in an agent
process), ``recorded_tools`` (tool calls answered from the
recording), ``airtight`` (did a tool run for real?), ``capture`` (the replay's spans seen
in-process), ``framework_loop`` and ``global_provider`` (where framework attempts run and which
tracer provider they see), ``llm`` (LLM calls answered from the recording) and ``frameworks``
(one adapter per agent framework).

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""
