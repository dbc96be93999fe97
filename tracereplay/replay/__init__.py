"""Replay mode: each case's agent run again, its tools (and with ``--llm recorded`` its LLM)
answered from the recording, then scored on the run it made.

Subpackages: ``workers`` (the agent processes: a crash or a hang ends its case only; the
messages both sides use in ``workers.protocol``), ``answering`` (one attempt of a case and what
answers it: tools, LLM requests at the HTTP layer, the airtight check) and ``frameworks`` (one
adapter per agent framework), ``command`` (an agent that is a command, in any language:
``eval --agent-cmd``). Modules: ``agent_loader`` (what ``--agent`` names and how it is
called), ``generic_agent`` (an agent object no adapter knows), ``user_code`` (the user's
modules), ``agent_telemetry`` and ``global_provider`` (where the agent's spans go),
``capture`` (the replay's spans seen in-process), ``framework_loop`` (where framework attempts
run), ``raised`` (whose doing an exception was).

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""
