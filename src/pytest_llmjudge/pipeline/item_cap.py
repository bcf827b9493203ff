"""The one cap on what a judgment asks: every item it would rule on, counted before the first call that
would rule on them, against --judge-max-items.

An item is what one ruling is about: a claim, a passage, a turn, a question, a checklist constraint, a
dimension (`Prompt.items`; a call that only lists what later calls rule on counts none).  A judgment
rules on its items once per judge and per sample, and a nested rubric's items (the constraints of each
turn's checklist) count in every call that asks them, so the count is of the whole judgment: a step's
prompts for every judge and sample, with what the earlier steps asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import JudgeError, Redacted

if TYPE_CHECKING:
    from ..case import Case
    from ..rubrics.base import Prompt, Rubric
    from ..settings import Settings

# Prompts a kind that yields its prompts (one per turn, each with the turns before it) is asked for past
# the cap, to name the whole count: a conversation far over the cap is refused having built this many.
LOOKAHEAD = 256

# Characters of one judge call over which the judge is warned about (about 250,000 tokens): more than the
# context window of most judge models, and a sign the case holds more than meant.
LARGE_CALL = 1_000_000


class LargeCallWarning(Redacted, UserWarning):
    """A judge call sends more text than most judges read."""


def judges(settings: Settings) -> int:
    """How many judges a judgment asks: its panel's models (one: a model, or a backend of the test's own)."""
    return max(1, len(settings.model or ()))


def chains(settings: Settings) -> int:
    """How many times a judgment asks each of its prompts: once per judge of the panel and per sample."""
    models = settings.model
    return (len(models) if models else 1) * settings.samples  # judges(), inline: every judgment asks


def capped(
    rubric: Rubric,
    case: Case,
    settings: Settings,
    per_chain: Sequence[Iterable[Prompt]],
    *,
    alike: bool = False,
    before: int = 0,
) -> list[Sequence[Prompt]]:
    """The prompts of one step, taken from `per_chain` (each judge's and sample's: one iterable for them
    all where `alike`), their items counted with `before` (what the judgment's earlier steps asked)
    against --judge-max-items; a `JudgeError` naming the count before any of them is sent.

    A kind that yields its prompts is taken one by one: an oversized case costs memory for the cap (and
    a bounded look-ahead that counts what lies past it), not for itself."""
    cap = settings.max_items
    repeat = chains(settings) if alike else 1
    # Lists say how many they hold (every built-in kind's but PerTurn's): counted whole, no copy made.
    # (Plain loops: this runs for every judgment, replayed or not.)
    lists: list[Sequence[Prompt]] = []
    for chain in per_chain:
        if type(chain) not in (list, tuple):
            break
        lists.append(chain)  # type: ignore[arg-type]
    else:
        items = 0
        for prompts in lists:
            for prompt in prompts:
                items += prompt.items
        if before + repeat * items > cap:
            detail = _spread(settings, items if alike else None, several=len(lists) > 1, before=before)
            raise _too_many(rubric, settings, str(before + repeat * items), detail)
        _warn_large(rubric, lists)
        return lists
    lists, counted = [], before  # the yielded prompts, taken one by one
    for chain in per_chain:
        taken: list[Prompt] = []
        coming = iter(chain)
        for prompt in coming:
            counted += repeat * prompt.items
            if counted > cap:
                total = _counted_on(coming, counted, repeat)
                per = (total - before) // repeat if total is not None and alike else None
                detail = _spread(settings, per, several=not alike, before=before)
                where = f"it passes the cap at {rubric.item_name(case, prompt)}"
                count = str(total) if total is not None else f"more than {counted}"
                raise _too_many(rubric, settings, count, "; ".join(filter(None, (detail, where))))
            taken.append(prompt)
        lists.append(tuple(taken))
    _warn_large(rubric, lists)
    return lists


def _counted_on(rest: Iterable[Prompt], counted: int, repeat: int) -> int | None:
    """The whole count of a yielded step that passed the cap with `counted`, where a look-ahead of
    LOOKAHEAD prompts reaches its end; else None."""
    for looked, more in enumerate(rest, 1):
        if looked > LOOKAHEAD:
            return None
        counted += repeat * more.items
    return counted


def _spread(settings: Settings, per: int | None, *, several: bool, before: int) -> str:
    """How a judgment's items spread over its judges and samples (`per`: each one's, where alike; `several`:
    each its own), and its earlier steps, for the cap's error."""
    over = " x ".join(
        f"{n} {noun}" for n, noun in ((judges(settings), "judges"), (settings.samples, "samples")) if n > 1
    )
    parts = []
    if over and per is not None:
        parts.append(f"{per} for each of {over}")
    elif over and several:
        parts.append(f"over {over}")
    if before:
        parts.append(f"{before} of them asked by its earlier steps")
    return "; ".join(parts)


def _too_many(rubric: Rubric, settings: Settings, count: str, detail: str) -> JudgeError:
    cap = settings.max_items
    return JudgeError(
        f"{type(rubric).__name__} would ask the judge about {count} items in one judgment"
        + (f" ({detail})" if detail else "")
        + f", each a call or part of one; the most is --judge-max-items={cap}. Judge fewer (fewer passages, "
        "turns, claims, samples or judges), or raise it if the cost is meant: judge_max_items in the ini file, "
        "LLMJUDGE_MAX_ITEMS, or @pytest.mark.judge(max_items=N)"
    )


def _warn_large(rubric: Rubric, lists: Sequence[Sequence[Prompt]]) -> None:
    sizes = [sum(len(m.get("content") or "") for m in prompt.messages) for prompts in lists for prompt in prompts]
    largest = max(sizes) if sizes else 0
    if largest > LARGE_CALL:
        from ..caller import warn_at_caller

        warn_at_caller(
            LargeCallWarning(
                f"llmjudge: {type(rubric).__name__} sends the judge {largest:,} characters in one call (about "
                f"{largest // 4:,} tokens), more than most judges read: check what the case holds (the whole "
                "corpus as the context?), and --judge-budget-tokens to bound what it may cost"
            )
        )
