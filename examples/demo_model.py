"""The DEMO model under test: canned replies, NOT an LLM.

The examples' generations and cassette were recorded against a small local OpenAI-compatible
server (the test suite's `tests/helpers/openai_server.py`) answering with `reply` below, so that
a fresh checkout replays them with nothing to install or pay for. Every model it answers for is
named `demo-canned-replies-...`, and those names are recorded in every generation and cassette.

To record them again (two terminals, from the repository root):

    PYTHONPATH=examples python tests/helpers/openai_server.py --port 8765 --responder demo_model:reply
    pytest examples --judge-mode=refresh --record-mode=all

To generate with a real model instead, pass it to the matrix (`MODELS` in test_model_matrix.py)
and record with `--judge-mode=auto`; the judge stays the demo judge unless --judge-model is given.
"""

from __future__ import annotations

# (model, the first words of the prompt) -> the canned reply
CANNED = {
    ("demo-canned-replies-a", "Can I return"): (
        "Yes: returns are accepted within 30 days of delivery, and the refund goes to your original payment method."
    ),
    ("demo-canned-replies-a", "Hello!"): (
        "Hello! Shoes can be returned: returns are accepted within 30 days of delivery."
    ),
    ("demo-canned-replies-b", "Can I return"): (
        "Of course. Our returns window is 30 days, so shoes bought 20 days ago are accepted."
    ),
    ("demo-canned-replies-b", "Hello!"): (
        "Hi there! Yes, returns are accepted for 30 days after delivery, shoes included."
    ),
    ("demo-canned-replies-faq", "How long"): (
        "Refunds reach your original payment method within 5 business days after we receive the return."
    ),
}


def reply(request: dict) -> str:
    """The canned reply for the request's model and prompt (a server responder: request body -> text)."""
    prompt = str(request["messages"][-1]["content"])
    for (model, start), text in CANNED.items():
        if request.get("model") == model and prompt.startswith(start):
            return text
    return f"(the demo model has no canned reply for {prompt[:40]!r})"
