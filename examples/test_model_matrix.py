"""A prompt-by-model matrix in plain pytest: every prompt, answered by every model, judged.

`generate` asks the model under test and records its reply in the test's verdict file (in
`judge_verdicts/test_model_matrix/`, beside the judge's verdicts), so the matrix replays offline.
The models here are DEMO models with canned replies (see demo_model.py), not LLMs.
"""

import pytest

from pytest_llmjudge import assert_judged, generate

MODELS = ["openai/demo-canned-replies-a", "openai/demo-canned-replies-b"]
PROMPTS = {
    "plain": "Can I return shoes after 20 days?",
    "chatty": "Hello! I bought shoes 20 days ago. Can I still send them back?",
}
SYSTEM = "You are the support assistant of a shoe shop. Returns: 30 days from delivery."


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("prompt", PROMPTS.values(), ids=PROMPTS.keys())
def test_return_policy(model, prompt):
    reply = generate(prompt, model=model, system=SYSTEM, temperature=0)
    assert_judged(reply, "Says returns are accepted within 30 days", input=prompt, threshold=0.7)
