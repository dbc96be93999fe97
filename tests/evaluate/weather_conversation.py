"""The three-turn weather conversation the multi-turn framework tests and the held-out
multi-turn score record: each turn's question, the city its one tool call asks for, and its
answer, and the scripted model's turns for each question (a tool call, then the answer)."""

SESSION = "s-1"
TURNS = [
    ("What's the weather in Paris right now?", "Paris", "Paris is 18°C and cloudy."),
    ("And in Rome, for comparison?", "Rome", "Rome is warmer: 24°C and sunny."),
    ("What about Oslo, is it raining there?", "Oslo", "Yes, Oslo has rain at 6°C."),
]
SCRIPT = {
    question: [{"tools": [["get_weather", {"city": city}]]}, {"text": answer}]
    for question, city, answer in TURNS
}
