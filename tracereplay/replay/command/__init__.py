"""Replaying an agent that is a command (``eval --agent-cmd "node agent.mjs"``), in any language.

- ``process``: the command run once per case (the query on standard input, as ``{query}`` and
  ``$TRACEREPLAY_QUERY``), its answer read from standard output, stopped at the timeout;
- ``received``: the OTLP/HTTP requests its exporter sends the eval, decoded;
- ``served_calls``: the LLM calls the model server answered, as GenAI ``chat`` spans (the run of
  an agent that sends no telemetry);
- ``trace``: those spans made one replay trace under a wrapper agent span, stored in the spool;
- ``attempt``: one attempt of one case: the server, the command, the run converted and scored.
"""
