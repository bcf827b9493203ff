"""DeepEval's and ragas' side of the RAG cost benchmark (run with a Python that has them; never the project venv).

    peer-venv/bin/python benchmarks/peer_rag.py BASE_URL CASES_JSON REPEATS

Judges every case with DeepEval's FaithfulnessMetric, AnswerRelevancyMetric, ContextualPrecisionMetric
and ContextualRecallMetric, and ragas' Faithfulness, ResponseRelevancy, LLMContextPrecisionWithReference
and LLMContextRecall, each with its defaults, one judgment at a time, against BASE_URL.  Prints one
`PEER_RECORD {json}` line per judgment (tool, kind, case, start and end time, score or error), and
`PEER_SKIPPED tool reason` for a tool that cannot be imported.  ragas judges through `llm_factory`,
its recommended LLM (which asks one question for answer relevancy, whatever its `strictness`), and
compares questions by embeddings: a local bag-of-words embedding stands in (no call).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_DISABLE_PROGRESS_BAR", "1")
os.environ.setdefault("ERROR_REPORTING", "NO")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore")

KINDS = ("Faithfulness", "AnswerRelevancy", "ContextPrecision", "ContextRecall")
MODEL = "gpt-4o-mini"  # a name both tools know; the local server answers whatever it is called


def record(tool: str, kind: str, case: dict[str, Any], repeat: int, judge: Callable[[dict[str, Any]], float]) -> None:
    start = time.time()
    try:
        score, error = judge(case), None
    except Exception as exc:  # noqa: BLE001 - reported as the judgment's error
        score, error = None, f"{type(exc).__name__}: {str(exc)[:300]}"
    end = time.time()
    line = {"tool": tool, "kind": kind, "case": case["name"], "repeat": repeat, "start": start, "end": end}
    print("PEER_RECORD " + json.dumps({**line, "score": score, "error": error}), flush=True)
    time.sleep(0.05)  # a request of this judgment logged late is never counted in the next


def deepeval_judges(url: str) -> dict[str, Callable[[dict[str, Any]], float]]:
    from deepeval.metrics import (
        AnswerRelevancyMetric,
        ContextualPrecisionMetric,
        ContextualRecallMetric,
        FaithfulnessMetric,
    )
    from deepeval.models import GPTModel
    from deepeval.test_case import LLMTestCase

    model = GPTModel(model=MODEL, api_key="sk-local-benchmark", base_url=url)
    metrics = {
        "Faithfulness": FaithfulnessMetric,
        "AnswerRelevancy": AnswerRelevancyMetric,
        "ContextPrecision": ContextualPrecisionMetric,
        "ContextRecall": ContextualRecallMetric,
    }

    def judging(metric: Any) -> Callable[[dict[str, Any]], float]:
        def judge(case: dict[str, Any]) -> float:
            test_case = LLMTestCase(
                input=case["question"],
                actual_output=case["answer"],
                expected_output=case["reference"],
                retrieval_context=case["context"],
            )
            measured = metric(model=model)  # the defaults: async, with a reason
            return float(measured.measure(test_case, _show_indicator=False))

        return judge

    return {kind: judging(metric) for kind, metric in metrics.items()}


def ragas_judges(url: str) -> dict[str, Callable[[dict[str, Any]], float]]:
    from openai import AsyncOpenAI
    from ragas.dataset_schema import SingleTurnSample
    from ragas.embeddings.base import BaseRagasEmbeddings
    from ragas.llms import llm_factory
    from ragas.metrics import Faithfulness, LLMContextPrecisionWithReference, LLMContextRecall, ResponseRelevancy

    class Words(BaseRagasEmbeddings):
        """A bag-of-words vector over a fixed hashed vocabulary: deterministic, local, no call."""

        def vector(self, text: str) -> list[float]:
            out = [0.0] * 256
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[sum(map(ord, word)) % 256] += 1.0
            return out

        def embed_query(self, text: str) -> list[float]:
            return self.vector(text)

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self.vector(t) for t in texts]

        async def aembed_query(self, text: str) -> list[float]:
            return self.vector(text)

        async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self.vector(t) for t in texts]

    llm = llm_factory(MODEL, client=AsyncOpenAI(api_key="sk-local-benchmark", base_url=url))
    loop = asyncio.new_event_loop()  # one loop for every judgment: the client's connections belong to it
    metrics = {
        "Faithfulness": lambda: Faithfulness(llm=llm),
        "AnswerRelevancy": lambda: ResponseRelevancy(llm=llm, embeddings=Words()),
        "ContextPrecision": lambda: LLMContextPrecisionWithReference(llm=llm),
        "ContextRecall": lambda: LLMContextRecall(llm=llm),
    }

    def judging(make: Callable[[], Any]) -> Callable[[dict[str, Any]], float]:
        def judge(case: dict[str, Any]) -> float:
            sample = SingleTurnSample(
                user_input=case["question"],
                response=case["answer"],
                reference=case["reference"],
                retrieved_contexts=case["context"],
            )
            return float(loop.run_until_complete(make().single_turn_ascore(sample)))

        return judge

    return {kind: judging(make) for kind, make in metrics.items()}


def main() -> int:
    url, cases_file, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(cases_file, encoding="utf-8") as handle:
        cases = json.load(handle)
    for tool, make in (("deepeval", deepeval_judges), ("ragas", ragas_judges)):
        try:
            judges = make(url)
        except Exception as exc:  # noqa: BLE001 - a tool that cannot be set up is skipped, with why
            print(f"PEER_SKIPPED {tool} {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            continue
        record(tool, "warm-up", cases[0], -1, judges["Faithfulness"])  # imports and connections: untimed
        for kind in KINDS:
            for case in cases:
                for repeat in range(repeats):
                    record(tool, kind, case, repeat, judges[kind])
    return 0


if __name__ == "__main__":
    sys.exit(main())
