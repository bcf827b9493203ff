"""Importing the parser compiles (almost) no regular expression: they compile on first use.

Every pytest run that replays verdicts imports the parser, and most of its patterns are never used there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading

import pytest

from pytest_llmjudge.parsing import parse_verdict

# Counts re's compile entry point, which re.compile and the module-level helpers all go through, while
# the parser is imported.  What the parser imports from elsewhere is imported first and not counted.
_COUNT_COMPILES = """
import bisect, dataclasses, itertools, json, math, numbers, re, threading
import pytest_llmjudge.errors

calls = []
real = re._compile

def counting(pattern, flags):
    calls.append(pattern)
    return real(pattern, flags)

re._compile = counting
import pytest_llmjudge.parsing
print(len(calls))
del calls[:]
pytest_llmjudge.parsing.parse_verdict('{"score": 4, "reasoning": "Accurate."}', scale=(1, 5))
print(len(calls))
"""


def test_importing_the_parser_compiles_almost_no_pattern() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_COMPILES], capture_output=True, text=True, check=True, timeout=120
    )
    at_import, clean_json_reply = (int(n) for n in done.stdout.split())
    assert at_import <= 3
    assert clean_json_reply <= 3  # a replayed or clean JSON reply needs only a few patterns


# In a fresh interpreter (in this one, earlier tests have already used, and so replaced, most stand-ins):
# import the parser, find every stand-in its modules hold, use each once, and list any module name that
# still holds a stand-in afterwards.
_FIRST_USE = """
import json, re, sys
import pytest_llmjudge.parsing
from pytest_llmjudge.parsing.patterns import LazyPattern

modules = [m for name, m in sorted(sys.modules.items()) if name.startswith("pytest_llmjudge.parsing.")]
stand_ins = [(m, name, value) for m in modules for name, value in vars(m).items() if isinstance(value, LazyPattern)]
for _, _, value in stand_ins:
    assert value.groupindex is not None  # a first use
left = [f"{m.__name__}.{name}" for m, name, _ in stand_ins if not isinstance(getattr(m, name), re.Pattern)]
print(json.dumps({"stand_ins": len(stand_ins), "left": left}))
"""


def test_first_use_puts_the_compiled_pattern_in_every_module_that_names_it() -> None:
    done = subprocess.run([sys.executable, "-c", _FIRST_USE], capture_output=True, text=True, check=True, timeout=120)
    checked = json.loads(done.stdout)
    assert checked["stand_ins"] > 0  # the check below saw the parser's patterns, not an empty list
    assert checked["left"] == []


def test_a_pattern_first_used_by_several_threads_at_once_compiles_to_one_object() -> None:
    from pytest_llmjudge.parsing.patterns import install, lazy

    namespace = {"P": lazy(r"(?P<num>\d+)-(?P=num)")}
    install(namespace)
    stand_in = namespace["P"]
    start = threading.Barrier(8)
    seen: list[object] = []

    def use() -> None:
        start.wait()
        m = stand_in.match("12-12")
        assert m is not None and m.group("num") == "12"
        seen.append(m.re)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8
    assert all(p is seen[0] for p in seen)
    assert namespace["P"] is seen[0]
    assert isinstance(namespace["P"], re.Pattern)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"score": 4, "reasoning": "ok", "confidence": "high"}', 0.75),
        ("Feedback: clear and correct. [RESULT] 5", 1.0),
        ("The answer is fine.\n\nScore: 3", 0.5),
        ("I would rate this a 2 because it misses the point.", 0.25),
        ("4", 0.75),
    ],
)
def test_replies_parse_the_same_through_patterns_compiled_on_first_use(reply: str, score: float) -> None:
    assert parse_verdict(reply, scale=(1, 5)).score == score
