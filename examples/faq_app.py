"""A stand-in for an app that calls its LLM itself: a FAQ helper on the OpenAI client, over HTTP.

Its call happens deep inside the app, where `generate` cannot reach, so its test records the HTTP
exchange in a cassette (pytest-recording). The model is a DEMO model with canned replies (see
demo_model.py), served at FAQ_APP_BASE_URL when the cassette was recorded.
"""

import os

import openai

BASE_URL = os.environ.get("FAQ_APP_BASE_URL", "http://127.0.0.1:8765/v1")
MODEL = "demo-canned-replies-faq"


def answer(question: str) -> str:
    client = openai.OpenAI(base_url=BASE_URL, api_key=os.environ.get("FAQ_APP_API_KEY", "not-needed-for-the-demo"))
    response = client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "system", "content": "Answer questions about refunds."},
            {"role": "user", "content": question},
        ],
        temperature=0,
    )
    return response.choices[0].message.content or ""
