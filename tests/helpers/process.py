"""A server the tests start as a subprocess: a free port, a bounded wait for its health URL, a clean stop.

The LiteLLM Proxy (tests/proxy) and llama-cpp-python's server (tests/realmodel) both run this way.
The process's output goes to a log file whose tail every startup error quotes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["ServerProcess", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """One server subprocess, named `what` in errors, logging to `log`."""

    def __init__(self, what: str, log: Path) -> None:
        self.what = what
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def launch(
        self,
        command: Sequence[str],
        *,
        health_url: str,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        """Start `command` and return once `health_url` answers 200; RuntimeError (with the log's tail) if
        the process exits first or does not answer within `timeout_s`."""
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                list(command),
                cwd=cwd,
                env=dict(env if env is not None else os.environ),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()
                raise RuntimeError(f"the {self.what} exited with code {code}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(health_url, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the {self.what} did not answer within {timeout_s:g}s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Terminate the process (kill it if it lingers); a no-op once stopped."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
