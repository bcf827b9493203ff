"""One persistent event loop in a background thread, where every live judge call runs.

Why a background loop: LiteLLM's async client and its logging worker are bound to the loop they
first ran on (a new loop per test piled up pending tasks), and the sync `completion` must not be
called inside a running loop.  Running all calls on one private loop serves sync tests, async tests
(they await a wrapped future, so their own loop keeps running) and concurrent `score_many` alike.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _async_library() -> str:
    """The async library of the calling task: "asyncio" unless sniffio (anyio's) says otherwise."""
    try:
        import sniffio
    except ImportError:  # no sniffio, no anyio: only asyncio can be running
        return "asyncio"
    try:
        return str(sniffio.current_async_library())
    except sniffio.AsyncLibraryNotFoundError:
        return "asyncio"


class LoopThread:
    """A daemon thread running an asyncio loop, started on first use."""

    def __init__(self, name: str = "llmjudge-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the background loop; return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the background loop and wait for it (from any thread but the loop's)."""
        if self._thread is not None and threading.current_thread() is self._thread:
            raise RuntimeError("LoopThread.run called from its own loop")
        return self.submit(coro).result(timeout)

    async def wrap(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the background loop, awaited from the caller's own async library.

        Under asyncio the thread-safe future is wrapped for the caller's loop.  Other libraries
        (trio, through anyio or directly) cannot await an asyncio future, so the wait happens in a
        worker thread of their own; cancelling the caller cancels the call on the background loop.
        """
        future = self.submit(coro)
        if _async_library() == "asyncio":
            return await asyncio.wrap_future(future)
        import anyio.to_thread  # only non-asyncio callers: anyio ships with httpx, which LiteLLM needs

        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        """Stop the loop and join the thread (pending calls are cancelled)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return

        async def drain() -> None:
            if "litellm" in sys.modules:  # only a loop that made live calls has clients to release
                from .litellm import close_litellm_clients

                await close_litellm_clients()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            loop.stop()

        asyncio.run_coroutine_threadsafe(drain(), loop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()
