"""A responder for tests/helpers/openai_server.py that satisfies both pytest-llmjudge and DeepEval's GEval.

One JSON object carries every field either side asks for: `steps` (GEval's step generation),
`score` 0-10 with `reason` (GEval's evaluation; pytest-llmjudge normalizes a 0-10 score too) and
`reasoning`.  Used only by the peer comparison in run_all.py.
"""

import json


def both(request: dict) -> str:
    return json.dumps(
        {
            "steps": ["Check the output against the criteria.", "Weigh omissions."],
            "reasoning": "fake judge: meets the criteria",
            "reason": "fake judge: meets the criteria",
            "score": 8,
        }
    )
