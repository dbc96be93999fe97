"""Answering a replay from the recording: one attempt of a case (``attempt``), its tool calls
(``recorded_tools``; ``tool_functions`` where no framework adapter intercepts them), its LLM
requests at the HTTP layer (``llm``), and the check that nothing ran for real (``airtight``).
"""
