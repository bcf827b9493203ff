"""A stand-in for the application under test: a tiny support bot and a summarizer."""

POLICY = {"return_days": 30, "refund_method": "original payment method"}


def answer(question: str) -> str:
    if "return" in question.lower():
        return (
            f"Yes. Returns are accepted within {POLICY['return_days']} days of delivery, "
            f"and the refund goes back to your {POLICY['refund_method']}."
        )
    return "I'm not sure; let me connect you with a human agent."


def summarize_meeting(notes: str) -> str:
    return (
        "The team agreed to ship the billing fix on Friday. Dana will update the changelog, "
        "and Lee will email the affected customers."
    )


def refund_tool_call(order_id: str) -> dict:
    return {"tool": "issue_refund", "arguments": {"order_id": order_id, "amount": 49.90, "currency": "EUR"}}
