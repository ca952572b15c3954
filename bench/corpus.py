"""The CRM-flavoured memory texts and questions the latency benchmarks share."""

from __future__ import annotations

import random

COLORS = ["blue", "green", "red", "black", "white", "navy", "grey", "teal", "orange", "purple"]
TEMPLATES = [
    ("meeting_time", "prefers meetings after {hour} pm"),
    ("shirt_color", "prefers {color} shirts for the team order"),
    ("contact_channel", "wants to be contacted by {channel}"),
    ("project_owner", "{name} owns project {project}"),
    ("delivery_window", "deliveries only on {day} mornings"),
    ("budget", "quarterly budget is {amount} thousand euros"),
]
QUERIES = [
    "what time does she like meetings?",
    "which shirt colour should we order?",
    "how should I contact them?",
    "who owns the project?",
    "when can we deliver?",
    "what is the budget?",
]
WORDS = {
    "hour": [str(h) for h in range(1, 6)],
    "color": COLORS,
    "channel": ["email", "phone", "chat", "video call"],
    "name": ["Sam", "Alex", "Mara", "Jon", "Priya", "Lee"],
    "project": ["Alpha", "Beta", "Gamma", "Delta", "Orion"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "amount": [str(n * 10) for n in range(1, 20)],
}


def memory_text(rng: random.Random) -> tuple[str, str]:
    key, template = rng.choice(TEMPLATES)
    return key, template.format(**{k: rng.choice(v) for k, v in WORDS.items()})
