"""Backends: how a judge call reaches a model.

`protocol` says what a backend is (`Backend`, `CallRequest`, `CallResult`); `request` decides what a
call sends; `retry` holds the retry policy every backend shares and `limiter` the adaptive
concurrency limit; `litellm` and `callable` are the two backends; `litellm_import` imports LiteLLM
for the backend and the planner alike; `loop` is the background event loop every live call runs on.
Nothing here imports LiteLLM until a live call needs it.  Internal: import from the defining module.
"""
