"""Chat agents for the history replay tests: one answers from the conversation it is given
(``history=``), one takes no history and so cannot tell what "then" refers to."""

from __future__ import annotations


def get_weather() -> str:
    """The weather service (answered from the recording during a replay)."""
    raise RuntimeError("the weather service is not reachable from the tests")


def remembers(query: str, history: list[dict[str, str]]) -> str:
    """Answers the umbrella question from the earlier turns: rain in Paris means yes."""
    said = " ".join(m["content"] for m in history)
    if "umbrella" in query and "Paris" in said and get_weather() == "rain":
        return "Yes, take an umbrella."
    return "Which city do you mean?"


def forgets(query: str) -> str:
    """The same question without the conversation before it."""
    get_weather()
    return "Which city do you mean?"
