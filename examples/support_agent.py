"""A stand-in for an agent under test: a refund agent's run and a support chat, as OpenAI chat messages."""

import json


def _call(call_id: str, name: str, **arguments: object) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    tool_call = {"id": call_id, "type": "function", "function": function}
    return {"role": "assistant", "content": None, "tool_calls": [tool_call]}


def _result(call_id: str, **result: object) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}


def run_refund_agent(request: str) -> list[dict]:
    """The messages of one run: the request, each tool call with its result, the final reply."""
    return [
        {"role": "user", "content": request},
        _call("call_1", "lookup_order", order_id="A-1042"),
        _result("call_1", order_id="A-1042", total=49.9, status="delivered"),
        _call("call_2", "issue_refund", order_id="A-1042", amount=49.9, currency="EUR"),
        _result("call_2", refund_id="R-77", status="issued"),
        {"role": "assistant", "content": "Your refund of 49.90 EUR for order A-1042 is issued (R-77)."},
    ]


def support_chat(*questions: str) -> list[dict]:
    """A conversation: each question, and the bot's reply to it."""
    replies = {
        "Where is my order A-1042?": "Order A-1042 status: shipped yesterday; delivery is due Friday.",
        "Can I still change the address?": (
            "Order A-1042 has shipped, so its status no longer allows an address change; "
            "the courier can redirect the delivery."
        ),
    }
    messages = [{"role": "system", "content": "You are the support assistant of a shoe shop."}]
    for question in questions:
        messages.append({"role": "user", "content": question})
        reply = replies.get(question, "Bananas are a good source of potassium.")  # an off-topic reply
        messages.append({"role": "assistant", "content": reply})
    return messages
