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


def conversant(query: str, history: list[dict[str, str]]) -> str:
    """Each turn of the Paris conversation, answered from what it said before (the
    assistant's earlier answers), as a multi-turn replay gives them."""
    said = " ".join(m["content"] for m in history if m["role"] == "assistant")
    get_weather()
    if query.startswith("What's the weather"):
        return "Rainy, 12 °C in Paris."
    return _later_turn(query, said)


def forgets_paris(query: str, history: list[dict[str, str]]) -> str:
    """``conversant`` with a regression in turn 1: it no longer says what the weather is."""
    said = " ".join(m["content"] for m in history if m["role"] == "assistant")
    get_weather()
    if query.startswith("What's the weather"):
        return "I don't know."
    return _later_turn(query, said)


def _later_turn(query: str, said: str) -> str:
    if query == "And tomorrow?":
        return "Tomorrow Paris stays rainy, 11 °C." if "Paris" in said else "Where?"
    if "umbrella" in query and "rainy" in said.lower():
        return "Yes, take an umbrella."
    return "Which city do you mean?"


def gives_up(query: str, history: list[dict[str, str]]) -> str:
    """``conversant`` that fails on the umbrella question (turn 3) without calling its tool."""
    if "umbrella" in query:
        raise RuntimeError("the umbrella service is down")
    return conversant(query, history)


class ChatBot:
    """An agent object of a framework no adapter knows: the generic adapter gives it the
    conversation through ``chat_history``."""

    def run(self, message: str, chat_history: list[dict[str, str]] | None = None) -> str:
        return conversant(message, chat_history or [])


bot = ChatBot()
