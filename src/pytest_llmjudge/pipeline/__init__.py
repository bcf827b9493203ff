"""The pipeline of every recorded call: plan -> lookup (and replay-miss diagnosis) -> live calls -> finish.

One module per stage, each a function over plain, typed data.  `plan` merges the settings, chooses
the backend and names every call by its key.  `lookup` finds stored replies synchronously (a replay
never starts the background loop or imports LiteLLM).  `live.call_live` sends only the calls that
must go live, concurrently, on the runtime's background loop, under the budget and one lock per key.
`finish` parses, writes back, notes drift, aggregates and returns the Verdict.  `run` holds the one
step loop chaining them for judgments and generations alike (`steps` builds a rubric's later step
from the earlier replies); `record` adds each judgment to its test's records for reports.  A
generation (`generations`: the model under test asked) keeps its replies, not parsed.  Internal:
import from the module that defines a name.
"""
