"""Calibration: how far the judge agrees with human labels.

`examples` reads labelled examples (JSONL, CSV or rows); `stats` computes the figures (accuracy,
Cohen's kappa with its interval, Spearman's rho, the best threshold, per-criteria figures and the
disagreements) from the human labels and the judge's scores; `runner` judges the examples;
`assertion` is `assert_judge_agrees`; `command` is `llmjudge calibrate`.  Internal: the public name
is `pytest_llmjudge.assert_judge_agrees`.
"""
