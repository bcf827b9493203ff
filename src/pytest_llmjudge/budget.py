"""The run's budgets (--judge-budget, --judge-budget-tokens): what was spent, and the check before a live call.

One `Budget` per runtime, made on the first live call.  Outside xdist it counts in memory; inside, the
run's workers share their spend through `store.spend.SharedSpend`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import BudgetExceeded

if TYPE_CHECKING:
    from .backends.protocol import CallResult
    from .settings import Settings
    from .store.spend import SharedSpend


class Budget:
    """The dollars and tokens a run may spend on live calls, what it spent, and the refusal once spent."""

    def __init__(self, settings: Settings, cache_dir: Callable[[], Path | None], note: Callable[[str], None]) -> None:
        """`cache_dir` gives the local cache's directory (beside which xdist workers share the spend);
        `note` adds a line to the run's summary."""
        self.usd = settings.budget
        self.tokens = settings.budget_tokens
        self.price = settings.price
        self.spent_usd = 0.0  # this process's live calls
        self.spent_tokens = 0  # this process's live calls, prompt + completion, where the server counted them
        self._cache_dir = cache_dir
        self._note = note
        self._noted: set[str] = set()  # the refusals already noted for the summary
        self._uncountable: str | None = None  # why the budget can no longer be kept (every live call is refused)
        self._shared: SharedSpend | None = None

    @property
    def shared(self) -> SharedSpend | None:
        """The run's spend shared by its xdist workers (with a budget only), made on first need."""
        if self._shared is None and (self.usd is not None or self.tokens is not None):
            from .store.spend import SharedSpend

            self._shared = SharedSpend.for_run(self._cache_dir())
        return self._shared

    def total_spent(self) -> float:
        """Dollars spent on live calls in this run: across every xdist worker where it is shared."""
        shared = self.shared
        return max(self.spent_usd, shared.total()) if shared is not None else self.spent_usd

    def total_tokens(self) -> int:
        """Tokens (prompt + completion) of live calls in this run: across every xdist worker where it is shared."""
        shared = self.shared
        return max(self.spent_tokens, shared.tokens()) if shared is not None else self.spent_tokens

    def check(self) -> None:
        """Refuse a live call once a budget is spent, or can no longer be counted (calls in flight still finish)."""
        budget, budget_tokens = self.usd, self.tokens
        if budget is None and budget_tokens is None:
            return
        if self._uncountable is not None:
            raise BudgetExceeded(self._uncountable)
        shared = self.shared
        where = " by all xdist workers" if shared is not None and shared.shared else ""
        spent = self.total_spent() if budget is not None else 0.0
        if budget is not None and spent >= budget:
            self._refuse(
                f"--judge-budget=${budget:g} is spent (${spent:.4f} so far{where}): no further live judge calls "
                "this run. Raise --judge-budget, or replay stored verdicts.",
                f"llmjudge: --judge-budget=${budget:g} reached",
                f"(${spent:.4f} spent); later live judge calls were refused",
            )
        used = self.total_tokens() if budget_tokens is not None else 0
        if budget_tokens is not None and used >= budget_tokens:
            self._refuse(
                f"--judge-budget-tokens={budget_tokens} is used up ({used} tokens so far{where}): no further live "
                "judge calls this run. Raise --judge-budget-tokens, or replay stored verdicts.",
                f"llmjudge: --judge-budget-tokens={budget_tokens} reached",
                f"({used} tokens used); later live judge calls were refused",
            )

    def _refuse(self, message: str, reached: str, how_far: str) -> None:
        """Note, once, that a budget stopped live calls; raise BudgetExceeded with `message`."""
        if reached not in self._noted:
            self._noted.add(reached)
            self._note(f"{reached} {how_far}")
        raise BudgetExceeded(message)

    def spend(self, cost_usd: float | None, tokens: int | None = None) -> None:
        """Count a live call's cost and tokens against the budgets."""
        if cost_usd or tokens:
            self.spent_usd += cost_usd or 0.0
            self.spent_tokens += tokens or 0
            shared = self.shared
            if shared is not None:
                shared.add(cost_usd or 0.0, tokens or 0)

    def count(self, result: CallResult, model: str) -> CallResult:
        """Count a live call against the budgets and return it priced: LiteLLM's price, else --judge-price.

        A budget that this call cannot be counted against (no price for `model`, or no token usage
        from its server) is never silently ignored: BudgetExceeded names the options that fix it,
        for this judgment and every later live call of the run.
        """
        if not result.prompt_tokens and not result.completion_tokens:  # LiteLLM fills in 0s where no usage came back
            result = dataclasses.replace(result, prompt_tokens=None, completion_tokens=None)
        prompt, completion = result.prompt_tokens, result.completion_tokens
        tokens = prompt + completion if prompt is not None and completion is not None else None
        if result.cost_usd is None and self.price is not None and prompt is not None and completion is not None:
            result = dataclasses.replace(result, cost_usd=round(self.price.of(prompt, completion), 10))
        self.spend(result.cost_usd, tokens)
        why = budget = ""
        if self.usd is not None and result.cost_usd is None:
            unknown = "no token usage came back to price it with" if self.price else "LiteLLM has no price for it"
            budget = f"--judge-budget=${self.usd:g}"
            why = (
                f"{budget} cannot be kept: a call to {model} could not be priced "
                f"({unknown}). Give the judge's price with --judge-price=input=X,output=Y (US dollars per million "
                "tokens; judge_price in the ini file, LLMJUDGE_PRICE), or budget tokens with --judge-budget-tokens=N"
            )
        elif self.tokens is not None and tokens is None:
            budget = f"--judge-budget-tokens={self.tokens}"
            why = (
                f"{budget} cannot be kept: {model}'s server reported no token usage. Use a judge server that "
                "reports usage, or set no token budget"
            )
        if why:
            self._uncountable = f"{why}. No further live judge calls this run."
            self._refuse(
                self._uncountable,
                f"llmjudge: {budget} could not be kept",
                "(a live call could not be counted against it); live judge calls were refused",
            )
        return result
