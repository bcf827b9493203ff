"""Qualification: how a judge, with your prompt and settings, agrees with careful human labels on public pairs.

It is calibration with public labels: each bundled pair (two outputs for one instruction, and which is
better) goes through the same `Pairwise` judgment a test's `judge.compare` makes, in both orders, recorded
in the store like any verdict.  `pairs` reads the bundled sets (package data, with their licences) and
files of the same shape; `runner` judges them; `figures` computes the report (accuracy, kappa, position
consistency and first-slot rate, length bias, each with its interval) and the decision against the
thresholds; `anchors` holds the published figures printed beside them; `command` is `llmjudge qualify`;
`assertion` is `assert_judge_qualified`.  Internal: the public name is
`pytest_llmjudge.assert_judge_qualified`.
"""
