"""Is the judge good enough for these criteria?  Its agreement with labels people wrote, as a test.

`calibration_labels.jsonl` holds 26 support answers labelled pass or fail by hand, including
negations and paraphrases that a keyword judge gets wrong.  The demo judge agrees on 16 of 26 (kappa
0.24): it clears this low bar and no higher.  Ask whether a real judge model does better with
`pytest examples --judge-model=gpt-4o-mini --judge-mode=refresh -k calibration`, and raise the bar.
"""

from pathlib import Path

from pytest_llmjudge import assert_judge_agrees

LABELS = Path(__file__).with_name("calibration_labels.jsonl")


def test_the_judge_agrees_with_people():
    result = assert_judge_agrees(LABELS, min_accuracy=0.6, threshold=0.7)
    print(f"accuracy {result.accuracy:.2f} over {result.n} labelled answers")
