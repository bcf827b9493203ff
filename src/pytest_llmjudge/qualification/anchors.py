"""Published figures of known judges on the bundled sets, printed beside a qualification's own.

From the LLMBar repository (github.com/princeton-nlp/LLMBar, commit 900616bff90b6c6c8e1681f7d079250637c55992),
`Dataset/<set>/evaluators/<judge>/<prompt>/`: GPT-4 and ChatGPT with LLMBar's "Vanilla" prompt (its rules
included: the paper's Vanilla+Rules) on the adversarial sets, and with "Vanilla_NoRules" on MT-Bench (the
only plain prompt recorded there).  Accuracy and position consistency are the `statistics.json` fields
`correct_average` (the mean of the two orders' accuracies) and `equal` (the same winner in both orders),
as quoted beside each figure.  The first-slot rate, the length figures and kappa are not in those files:
they are computed here from the same folders' `result.json` (each pair's winner in both orders) with this
package's definitions (see `figures`); the same computation gives back every `statistics.json` figure
above exactly.  LLMBar's own `kappa_*` fields are not used: they compare the judge's winners coded 1/0
against labels coded 1/2, which is no agreement measure.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANCHORS", "JUDGES", "POOLED", "Anchor", "Pooled"]

JUDGES = ("GPT-4", "ChatGPT")  # in the order they are printed


@dataclass(frozen=True)
class Anchor:
    """One judge's published figures on one bundled subset."""

    accuracy: float
    position_consistency: float
    first_slot_rate: float
    source: str  # the statistics.json the first two figures are quoted from


@dataclass(frozen=True)
class Pooled:
    """One judge's figures over all four bundled subsets (computed from LLMBar's result.json files)."""

    accuracy: float
    position_consistency: float
    first_slot_rate: float
    better_longer: float  # accuracy where the better output is the longer
    better_shorter: float  # ... the shorter
    length_gap: float  # better_longer - better_shorter
    kappa: float  # Cohen's kappa on MT-Bench, both orders' answers


_ADVERSARIAL = "Dataset/LLMBar/Adversarial/{}/evaluators/{}/Vanilla/statistics.json"
_MT_BENCH = "Dataset/Processed/MT-Bench/evaluators/{}/Vanilla_NoRules/statistics.json"

ANCHORS: dict[str, dict[str, Anchor]] = {
    # correct_average "86.41304347826086%", equal "87 / 92 = 94.56521739130434%";
    # ChatGPT: "26.6304347826087%", "57 / 92 = 61.95652173913043%"
    "GPTInst": {
        "GPT-4": Anchor(0.8641, 0.9457, 0.5054, _ADVERSARIAL.format("GPTInst", "GPT-4")),
        "ChatGPT": Anchor(0.2663, 0.6196, 0.6685, _ADVERSARIAL.format("GPTInst", "ChatGPT")),
    },
    # "77.6595744680851%", "44 / 47 = 93.61702127659575%"; ChatGPT: "41.48936170212766%", "28 / 47 = 59.57446808510638%"
    "GPTOut": {
        "GPT-4": Anchor(0.7766, 0.9362, 0.5106, _ADVERSARIAL.format("GPTOut", "GPT-4")),
        "ChatGPT": Anchor(0.4149, 0.5957, 0.6809, _ADVERSARIAL.format("GPTOut", "ChatGPT")),
    },
    # "80.43478260869566%", "38 / 46 = 82.6086956521739%"; ChatGPT: "34.78260869565217%", "24 / 46 = 52.17391304347826%"
    "Manual": {
        "GPT-4": Anchor(0.8043, 0.8261, 0.5435, _ADVERSARIAL.format("Manual", "GPT-4")),
        "ChatGPT": Anchor(0.3478, 0.5217, 0.7391, _ADVERSARIAL.format("Manual", "ChatGPT")),
    },
    # "81.0%", "174 / 200 = 87.0%"; ChatGPT: "71.25%", "115 / 200 = 57.49999999999999%"
    "MT-Bench": {
        "GPT-4": Anchor(0.8100, 0.8700, 0.5100, _MT_BENCH.format("GPT-4")),
        "ChatGPT": Anchor(0.7125, 0.5750, 0.7025, _MT_BENCH.format("ChatGPT")),
    },
}

POOLED: dict[str, Pooled] = {
    "GPT-4": Pooled(0.8182, 0.8909, 0.5130, 0.8531, 0.7822, 0.0709, 0.6200),
    "ChatGPT": Pooled(0.5260, 0.5818, 0.6961, 0.6921, 0.3787, 0.3134, 0.4249),
}
