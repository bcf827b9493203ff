"""Pairwise verdicts: which of two responses a judge prefers, read through one vocabulary of labels.

Judges name the winner in many forms: Arena-Hard's ``[[A>>B]]`` ... ``[[B>>A]]`` (``>>`` a strong preference,
``>`` a slight one, ``=`` a tie), MT-Bench's ``[[A]]`` / ``[[B]]`` / ``[[C]]`` (C: a tie), LLMBar's "Output (a)",
labelled values (``WINNER: B``, "My final verdict is Assistant A ..."), a JSON field (``winner``, ``better``,
``preference``, ``response``...), a verdict sentence ("Therefore, Output (b) is better.", also in Korean, Chinese,
Japanese and Greek around the English names) and, where the prompt asked for it, one score per response
("8 9" on the first line, "Assistant 1: 10").  Each candidate gets a rank:

* FINAL: called the final verdict ("My final verdict is ...", "Verdict:", "WINNER:"), a JSON winner, the scores
  asked for;
* LABEL: a bracket label or a labelled value with no such cue, a line that is only a response's name;
* CONCLUSION: a verdict sentence that concludes ("Therefore, ..."), opens the reply or ends it;
* PLAIN: a verdict sentence inside the discussion.

The highest rank present decides, and its candidates must agree on the winner: two final verdicts that disagree
are an error unless the judge says it corrects itself.  Nothing the judge copied from its prompt, quoted,
attributed to a response or gave as an example is a candidate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import VerdictParseError
from .answers import COMPARISON, Answer, declared_spots
from .funnel import Asked, own_text, parse_json_object, read_reply, reasoning_from, text_without
from .json_scan import MAX_JSON_CANDIDATES, RepairBudget, load_json, load_whole, scan_objects
from .json_verdict import fields_of, revision_mark
from .labels import CONCLUDES, CORRECTION, MARKED_FINAL
from .patterns import MAX_FIRST_SCAN, gated, install, lazy, line_start, matches, present
from .prepare import ascii_lower
from .quotes import Skip, attributed_before, example_cued

PLAIN, CONCLUSION, LABEL, FINAL = 0, 1, 2, 3
_RANK_NAMES = ("discussion", "concluding", "labelled", "final")
TIE = "tie"
STRONG, SLIGHT = "strong", "slight"


@dataclass(frozen=True)
class Preference:
    """What a pairwise reply says: ``winner`` "A", "B" or "tie"; ``strength`` "strong" (``A>>B``), "slight"
    (``A>B``) or None (the judge did not say, or a tie); the reasoning; the kind of marker that decided."""

    winner: str
    strength: str | None
    reasoning: str
    strategy: str


# -- the vocabulary: how judges name the two responses, a tie, and a preference ------------------------------

# What a response is called, before its letter or number (lower-case, as the patterns run on ascii_lower text;
# Greek is not lowered by it, so both cases are listed).
_NOUNS = (
    "assistant", "response", "output", "answer", "model", "candidate", "option", "submission", "completion",
    "reply", "solution", "summary", "version", "chatbot",
    "어시스턴트", "응답", "답변", "助手", "回答", "答案", "回复", "响应", "アシスタント", "応答", "解答",
    "βοηθός", "βοηθού", "βοηθό", "Βοηθός", "Βοηθού", "Βοηθό", "απάντηση", "απάντησης", "Απάντηση", "Απάντησης",
)  # fmt: skip
_SIDE_OF = {"a": "A", "1": "A", "\u0391": "A", "b": "B", "2": "B", "\u0392": "B"}  # \u0391/\u0392: Greek capitals


def _side(group: str) -> str:
    """A named response ("Assistant A", "Output (b)", "Response 2", "어시스턴트 A"), its letter in ``group``."""
    return (
        r"(?:" + "|".join(_NOUNS) + r")[ \t]{0,2}[(\[]?(?P<" + group + r">[ab12\u0391\u0392])[)\]]?"
        r"(?![a-z0-9_\u0391-\u03c9])"
    )


# "A>>B", "Assistant A >> B", "B<A": the letters with their comparison.
_OPFORM = (
    r"(?:assistant[ \t]{1,2})?(?P<x>[ab])[ \t]{0,2}(?P<op>>>|\u226b|>|=|<<|\u226a|<)[ \t]{0,2}"
    r"(?:assistant[ \t]{1,2})?(?P<y>[ab])(?![a-z])"
)
_TIE_WORDS = frozenset(["tie", "tied", "a tie", "draw", "equal", "even", "neither", "both", "same", "c"])
_STRONG_WORDS = lazy(
    r"(?<![a-z])(?:significantly|much|clearly|far|substantially|vastly|considerably|greatly|markedly|strongly"
    r"|decisively)(?![a-z])|σημαντικά|πολύ|훨씬|상당히|현저히|明显|显著|遥遥|はるかに|大幅に"
)
_SLIGHT_WORDS = lazy(
    r"(?<![a-z])(?:slightly|marginally|somewhat|a[ \t]bit|a[ \t]little|a[ \t]tad|modestly|barely)(?![a-z])"
    r"|ελαφρώς|λίγο|약간|조금|略微|稍微|略|わずかに|やや|少し"
)

# Bracket labels: [[A>>B]], [[Assistant A > B]], [[A]], [[C]], [[Tie]]; and Arena-Hard's label in single brackets.
_BRACKET = gated(
    r"\[\[[ \t*]{0,3}(?:" + _OPFORM + r"|(?:(?:assistant|response|output|answer|model)[ \t]{1,2})?\(?(?P<one>[abc])\)?"
    r"|(?P<tie>tie|tied|draw|equal))[ \t*]{0,3}\]\]",
    ("[[",),
)
# Words around the label inside the brackets: "[[Assistant A is slightly better: A>B]]", "[[A>>B: A is far better]]".
_WORDY_BRACKET = gated(r"\[\[(?P<inner>[^\[\]\n]{4,100})\]\]", ("[[",))
_OPFORM_IN = lazy(r"(?<![a-z])" + _OPFORM)
_SINGLE_BRACKET = gated(r"\[[ \t]{0,2}" + _OPFORM + r"[ \t]{0,2}\](?!\])", ("[",))
# A verdict label and its value: "WINNER: B", "Final verdict: Tie", "My final verdict is Assistant A ...",
# "Better response: Output (b)", "Verdict: A>B".
# The pattern starts at the label word itself (an optional "My final" before it would make the regex try every
# position of a long reply); what stands before it is looked at afterwards.
_LABEL_WORDS = (
    r"(?P<label>\[result\]|최종[ \t]?(?:판정|결정|평가|결론)|판정|最终(?:裁决|判决|结论|判断|选择)|裁决|判决|选择"
    r"|最終(?:判定|評価|結論)|判定|結論|τελική[ \t]ετυμηγορία|ετυμηγορία|Τελική[ \t]ετυμηγορία|Ετυμηγορία"
    r"|verdict|winner|decision|choice"
    r"|preference|judge?ment|conclusion|result|ruling|answer|better(?:[ \t]{1,3}(?:response|output|answer|one"
    r"|assistant))?|preferred(?:[ \t]{1,3}(?:response|output|answer|one))?)"
)
_LABELLED = gated(
    _LABEL_WORDS
    + r"[ \t]{0,3}(?:\*\*|__)?[ \t]{0,3}(?:[:\uff1a=][ \t*_]{0,4}"
    r"|[ \t]{1,3}is[ \t]{1,3}(?:that[ \t]{1,3})?:?[ \t*_]{0,4}|(?<=\])[ \t]{1,3})"
    r"(?:"
    + _side("s")
    + r"|(?P<l>[ab])(?=[ \t]{0,3}(?:$|\n|[.,;:!)\]*_\"'`(]|is[ \t]|wins))|(?P<t>a[ \t]tie|tie|draw|equal|neither|both"
    r"|same|同等|引き分け|互角|무승부|동점|平局)"
    r"(?![a-z])|"
    + _OPFORM
    + r")",
    ("verdict", "winner", "decision", "choice", "preference", "judgment", "judgement", "conclusion", "result",
     "ruling", "answer", "better", "preferred", "판정", "결정", "평가", "결론", "裁决", "判决", "结论", "判断", "选择",
     "判定", "評価", "結論", "ετυμηγορία", "Ετυμηγορία"),
    word_start=True,
)  # fmt: skip
# A line that is only a response's name, a letter or a tie: the whole answer of a judge asked for one.
_LONE = lazy(
    r"^[ \t*_#>\"'`\-]{0,6}(?:"
    + _side("s")
    + r"|(?P<l>[ab])|(?P<t>tie|same|equal|同等|引き分け|互角)|"
    + _OPFORM
    + r")[ \t*_\"'`.!。]{0,6}$",
    re.MULTILINE,
)

# Words that say a preference (or a tie) in a sentence, in English and in the languages of the judges met so far.
_PREFER_EN = r"better|superior|preferable|preferred|the[ \t]winner|wins|win|outperforms|outperform|beats|excels"
_PREFER_FOREIGN = (
    r"더[ \t]?(?:낫|좋|우수|뛰어|나은)|우수합니다|更好|更优|更佳|较好|胜出|更出色|より良い|の方が良|優れ"
    r"|より(?:有用|詳細|正確|適切|包括的|具体的|完全|良|優)|καλύτερ|Καλύτερ"
)
# (The word-start check is in the pattern: a Chinese or Korean verdict word may follow a letter directly, "B更好".)
_TRIGGER = gated(
    r"(?<![a-z])(?:" + _PREFER_EN + r"|prefer|tie|equally|neither)(?![a-z])|" + _PREFER_FOREIGN
    + r"|ισοπαλία|무승부|동점|平局|平手|引き分け|同等|互角|甲乙"
    + r"|を[ \t]{0,2}(?:選|高く評価)|が[ \t]{0,2}(?:より[ \t]{0,2})?高い",
    ("better", "superior", "prefer", "winner", "wins", "outperform", "tie", "equally", "neither", "더", "우수",
     "更", "较好", "胜出", "より良い", "の方が良", "優れ", "αλύτερ", "ισοπαλία", "무승부", "동점", "平局", "平手",
     "引き分け", "同等", "互角", "甲乙", "より有用", "より詳細", "より正確", "より適切", "より包括", "より具体",
     "より完全", "より良", "より優", "を選", "を高く評価", "が高い"),
)  # fmt: skip
_PREFER = lazy(r"(?<![a-z])(?:" + _PREFER_EN + r")(?![a-z\-])|" + _PREFER_FOREIGN)
# A response named in a sentence; a bare capital letter counts as a name where a verb follows it ("A is better").
_SIDE_IN_TEXT = lazy(
    _side("s") + r"|(?<![a-z0-9_'])(?P<b>[ab])(?=[ \t]{1,3}(?:is|was|wins|seems|appears|performs|does|provides|gives"
    r"|offers|answers)(?![a-z])|'s[ \t]|[ \t]?(?:가|이|는|은|의|的|が|は|の|更|较))"
)
_NEITHER_NOR = lazy(r"(?<![a-z])neither(?![a-z])[^.!?\n]{1,60}(?<![a-z])nor(?![a-z])")
_CHOOSE = lazy(
    r"(?<![a-z])(?:i[ \t]{1,3}(?:would[ \t]{1,3})?(?:prefer|choose|pick|select|favou?r)"
    r"|the[ \t]{1,3}(?:better|preferred|stronger|superior)[ \t]{1,3}(?:response|output|answer|one|choice|option)"
    r"[ \t]{1,3}is|the[ \t]{1,3}winner[ \t]{1,3}is)[ \t:]{1,3}(?:clearly[ \t]{1,3})?" + _side("s")
)
# Japanese puts the choice after the name: "アシスタント1の回答を選びます", "評価はアシスタント2が高いです".
_CHOOSE_AFTER = lazy(
    _side("s") + r"(?:の(?:回答|答え|解答|応答))?[ \t]{0,2}(?:を[ \t]{0,2}(?:選び|選択し|選ぶ|選択す|高く評価)"
    r"|が[ \t]{0,2}(?:より[ \t]{0,2})?高い)(?![^\n。.!?]{0,8}?(?:ない|ません|なく))"
)
_TIE_SENTENCE = lazy(
    r"(?<![a-z])(?:(?:it(?:'s|[ \t]is)|this[ \t]is|(?:results?|ends?)[ \t]in|is[ \t]a|as[ \t]a)[ \t]{1,3}"
    r"(?:a[ \t]{1,3})?tie"
    r"|tie[ \t]{1,3}between|equally[ \t]{1,3}(?:good|bad|strong|weak|helpful|valid|correct|well|matched|effective"
    r"|acceptable|poor|incorrect|wrong|useful|appropriate)|neither(?:[ \t]{1,3}[^.!?\n]{0,80}?)?[ \t]{1,3}(?:is|are|was"
    r"|can[ \t]be[ \t](?:considered|deemed|said[ \t]to[ \t]be))[ \t]{1,3}(?:clearly[ \t]{1,3})?(?:better|superior"
    r"|preferable)|no[ \t]{1,3}(?:clear[ \t]{1,3})?winner|(?:of|have)[ \t]{1,3}(?:equal|the[ \t]same|similar)"
    r"[ \t]{1,3}quality)(?![a-z])|ισοπαλία|무승부|동점|平局|平手|引き分け"
    r"|(?:同等|互角|甲乙(?:つけ|付け)がた)(?!では|とは|じゃ|でな|と(?:は)?言えな)"
)
# What between a response's name and "better" makes it no verdict for that response: a negation anywhere, or a
# hedge right before it ("could be better", "to better explain").
_NOT_A_VERDICT = lazy(
    r"(?<![a-z])(?:not|never|no|less|neither|nor|hardly|if)(?![a-z])|n't|않|안[ \t]|不|没|ない|δεν"
    r"|(?<![a-z])(?:could|would|might|may|should|can|to|needs?|must)(?:[ \t]{1,3}(?:be|have[ \t]been))?[ \t]{0,3}$"
)
# A comparison that points away from the response named before it ("B is worse", "A is inferior", "A不如B").
_AWAY = lazy(
    r"(?<![a-z])(?:worse|inferior|weaker|poorer|loses|lose|lost[ \t]to|lags[ \t]behind|falls[ \t]short"
    r"|less[ \t](?:good|helpful|useful"
    r"|accurate|relevant|effective|complete|correct|preferable|suitable|appropriate|clear|informative))(?![a-z])"
    r"|劣る|劣って|劣り|劣ります|더[ \t]?(?:나쁘|못하|떨어)|更差|较差|不如|χειρότερ|Χειρότερ"
)
# An explicit negation between a response's name and its comparison: the sentence says what the response is not.
_NEGATION = lazy(r"(?<![a-z])(?:not|never|no|neither|nor|hardly|isn't|wasn't|aren't)(?![a-z])|n't|않|안[ \t]|不|没|δεν")
# The same after a comparison in the languages that put it there: "優れていません", "낫지 않다".
_NEGATED_AFTER = lazy(r"[^\n。.!?]{0,8}?(?:ない|なく|ません|ず[、。 ]|않|없|못)")
# A response named as the one compared against ("B より", "B보다", "比B"): never the one a sentence prefers.
_THAN_AFTER = lazy(
    r"[ \t]{0,2}(?:の(?:回答|答え|解答|応答))?[ \t]{0,2}(?:より|보다)|(?:의[ \t]?(?:응답|답변))?[ \t]{0,2}보다"
)
NONE = "none"  # a candidate that blocks: its sentence names a side with a negation or points away from it

# How a final verdict is announced.
_FINAL_CUE = lazy(
    r"(?<![a-z])(?:final|verdict|winner|decision|ruling)(?![a-z])|최종|판정|판결|最终|最終|裁决|裁決|判决|判決|判定"
    r"|τελικ|ετυμηγορ|απόφασ|Τελικ|Ετυμηγορ|Απόφασ"
)
_ANNOUNCES = lazy(
    r"[ \t*_#>\-]{0,6}(?:(?:my|the|our)[ \t]{1,3})?(?:final[ \t]{1,3})?(?:verdict|winner|decision|ruling|judge?ment)"
    r"[ \t*_]{0,3}(?:is|:|\uff1a)|[ \t*_#>\-]{0,6}(?:최종|最终|最終|τελικ|Τελικ)"
)
_SENTENCE_END = lazy(r"[.!?\u3002\uff01\uff1f](?=[\s*_\"')\]]|$)|\n")
_ENDS_CLEANLY = lazy(r"[.!?\u3002\uff01\uff1f)\]*_\"'`>]\s*$")

# One score per response, where the prompt asked for that: "8 9" or "9.5, 8" on the first line, "[[8, 9]]",
# a tuple alone on its line, or one line per response ("Assistant 1: 10").
_NUM = r"\d{1,3}(?:\.\d{1,2})?"
_OUT_OF = r"(?:[ \t]{0,2}(?:/|out[ \t]of)[ \t]{0,2}\d{1,3})?"
_FIRST_LINE_PAIR = lazy(
    r"[ \t*#>]{0,4}(?:scores?[ \t*]{0,3}[:\uff1a][ \t*]{0,3})?(?P<a>" + _NUM + r")" + _OUT_OF
    + r"[ \t]{0,3}(?:,|;|[ \t]|and|vs\.?)[ \t]{0,3}(?P<b>" + _NUM + r")" + _OUT_OF + r"[ \t*.]{0,4}"
)  # fmt: skip
_PAIR_BRACKETS = gated(
    r"\[\[[ \t]{0,2}(?P<a>" + _NUM + r")[ \t]{0,2},[ \t]{0,2}(?P<b>" + _NUM + r")[ \t]{0,2}\]\]", ("[[",)
)
_PAIR_LINE = lazy(
    r"^[ \t*_>`\-]{0,6}[(\[][ \t]{0,2}(?P<a>" + _NUM + r")[ \t]{0,2},[ \t]{0,2}(?P<b>" + _NUM + r")[ \t]{0,2}[)\]]"
    r"[ \t*_`.]{0,4}$",
    re.MULTILINE,
)
_SIDE_SCORE = lazy(
    _side("s") + r"(?:'s)?(?:[ \t]{1,2}(?:score|rating))?[ \t*_]{0,3}[:=\uff1a\-\u2013][ \t*_]{0,3}(?P<n>" + _NUM + r")"
    + _OUT_OF + r"(?![\d])"
)  # fmt: skip
# The first twelve name a winner unmistakably; the others only in an object that is the whole reply.
_JSON_WINNER_KEYS = (
    "winner", "better", "better_response", "better_output", "better_answer", "preferred", "preferred_response",
    "preference", "choice", "chosen", "verdict", "final_verdict",
    "decision", "selection", "selected", "result", "response", "answer", "output", "judgment", "judgement",
)  # fmt: skip
_JSON_KEY_HINT = lazy(
    r"[\"'](?:winner|better|prefer|choice|chosen|verdict|selection|selected|decision|response|answer|result|output"
    r"|judge?ment|score|assistant|rating|model|[ab12])[\w ]{0,20}[\"'][ \t]{0,3}:"
)
_JSON_SIDE_KEY = lazy(r"(?:assistant|response|output|answer|model|score|rating)?_?(?P<s>a|b|1|2)(?:_(?:score|rating))?")
_MAX_SENTENCES = 200  # verdict words examined per reply, from its end
_MAX_LABELS = 500  # matches of one label shape examined per reply (more are no single verdict anyway)

Candidate = tuple[int, int, int, str, "str | None", str]  # start, end, rank, winner, strength, strategy


# -- reading ----------------------------------------------------------------------------------------------


def parse_preference(text: str, asked: Asked | None = None, *, scores: bool = False) -> Preference:
    """The response a pairwise judge prefers ("A", "B" or "tie") and how strongly, or `VerdictParseError`.

    ``asked``: what the judge was asked (see `Asked`): copies of its prompt are never the verdict.  ``scores``:
    the prompt asked for one score per response (JudgeLM, the Vicuna-bench reviews): the higher wins, equal is a
    tie; without it two numbers on a line are no verdict.  Error messages never quote the reply (it is on the
    exception's ``.text``).
    """
    return read_reply(text, asked, lambda reply: _read(reply, asked, scores))


def _read(original: str, asked: Asked | None, scores: bool) -> Preference:
    text = own_text(original, asked)
    low = ascii_lower(text)
    # Looked for only where a key could name a winner: JSON is slow to find among code, and most replies have none.
    obj = parse_json_object(original, asked) if "{" in low and _JSON_KEY_HINT.search(low) else None
    whole = obj is not None and isinstance(load_whole(text), dict)
    cands: list[Candidate] = []
    if obj is not None:
        cands += _json_candidates(obj, len(text), scores, whole)
        if whole and not cands:
            raise VerdictParseError("the JSON reply names no winner (A, B or tie) in a field the parser knows")
        if not whole:
            _objects_agree(text, low, scores)
    if not whole:
        skip = Skip(text, low, None)
        if asked is not None and asked.answer is not None and asked.answer.words:
            cands += _declared_candidates(text, asked.answer, skip)
        cands += _label_candidates(text, low, skip)
        cands += _sentence_candidates(text, low, skip)
        if scores:
            cands += _score_candidates(text, low)
    if not cands:
        raise VerdictParseError("the reply names no winner (A, B or tie)")
    start, end, rank, winner, strength, strategy = _decide(cands, low)
    if rank == PLAIN and not _ENDS_CLEANLY.search(text[-8:]):
        raise VerdictParseError(
            "the reply names a winner only inside its discussion and ends mid-sentence: cut off before its verdict?"
        )
    if obj is not None and strategy == "json":
        reasoning = reasoning_from(obj, asked)
    else:
        reasoning = text_without(text, (start, end))
    return Preference(winner, None if winner == TIE else strength, reasoning, strategy)


def _decide(cands: list[Candidate], low: str) -> Candidate:
    """The verdict: the highest rank's candidates must agree (the judge may correct itself); the last one wins."""
    top = max(c[2] for c in cands)
    ranked = sorted(c for c in cands if c[2] == top)
    if any(c[3] == NONE for c in ranked):
        raise VerdictParseError(
            f"the reply's {_RANK_NAMES[top]} verdict names a response with a negation or a comparison pointing away"
            " from it ('not better', 'worse than') and names no winner plainly: never read as the opposite"
        )
    winners = [c[3] for c in ranked]
    if len(set(winners)) > 1:
        marked = [c for c in ranked if MARKED_FINAL.search(low, line_start(low, c[0], 160), c[0])]
        if marked and len({c[3] for c in marked}) == 1:
            ranked, winners = marked, [c[3] for c in marked]  # "Answer: 2 ... Final answer: 1": the one marked final
    if len(set(winners)) > 1:
        k = len(ranked) - 1
        while k > 0 and winners[k - 1] == winners[-1]:
            k -= 1  # the run of candidates that agree with the last one
        if CORRECTION.search(low, ranked[k - 1][1], ranked[k][0]) is None:
            said = ", then ".join(dict.fromkeys(winners))
            raise VerdictParseError(
                f"the reply gives {_RANK_NAMES[top]} verdicts that disagree ({said}) and nothing says which one stands"
            )
        ranked = ranked[k:]
    last = ranked[-1]
    if last[5] == "declared":
        # The template's own answer word must not contradict the reply's concluding sentence ("Assistant 1 is better.
        # \n\n2"): the judge said both, so it said neither.
        against = {c[3] for c in cands if c[2] == CONCLUSION and c[3] not in (last[3], NONE)}
        if against:
            raise VerdictParseError(
                "the reply's answer word and its concluding sentence name different winners: no single verdict"
            )
    strength = next((c[4] for c in reversed(ranked) if c[4] is not None), None)
    return last[0], last[1], last[2], last[3], strength, last[5]


def _op(x: str, op: str, y: str) -> tuple[str, str | None] | None:
    """An Arena-Hard comparison as (winner, strength): A>>B is A strong, B<A is A slight, A=B a tie."""
    x, y = x.upper(), y.upper()
    if x == y:
        return None
    if op == "=":
        return TIE, None
    if op in ("<", "<<", "\u226a"):
        x, y = y, x
    return x, STRONG if op in (">>", "<<", "\u226b", "\u226a") else SLIGHT


def _letter(text: str, start: int) -> str | None:
    """The side the letter at ``start`` names, if it is written as a name: upper case, a digit, or in brackets
    ("Output (a)"); "the answer a user needs" names none."""
    c = text[start]
    if not (c.isupper() or c.isdigit() or (start > 0 and text[start - 1] in "([")):
        return None
    return _SIDE_OF.get(c.lower()) or _SIDE_OF.get(c)


def _value(text: str, m: re.Match[str]) -> tuple[str, str | None] | None:
    """(winner, strength) of a matched label value, or None when it names neither response."""
    groups = m.groupdict()
    if groups.get("inner"):
        return _inner(text, m)
    if groups.get("op"):
        return _op(groups["x"], groups["op"], groups["y"])
    if groups.get("tie") or groups.get("t"):
        return TIE, None
    if groups.get("one"):
        one = groups["one"].lower()
        return (TIE, None) if one == "c" else ((one.upper(), None) if text[m.start("one")].isupper() else None)
    for group in ("s", "l"):
        if groups.get(group):
            side = _letter(text, m.start(group))
            return None if side is None else (side, None)
    return None


def _inner(text: str, m: re.Match[str]) -> tuple[str, str | None] | None:
    """A bracket with words around its label: the one comparison inside it ("[[Assistant A is slightly better:
    A>B]]"), else a response named alone ("[[Assistant B]]"); a plain label is `_BRACKET`'s."""
    start, inner = m.start("inner"), m.group("inner")
    ops = [o for o in _OPFORM_IN.finditer(inner) if text[start + o.start("x")].isupper()]
    if len(ops) == 1:
        o = ops[0]
        return _op(o.group("x"), o.group("op"), o.group("y"))
    if ops or _BRACKET.fullmatch(m.group()) is not None:
        return None  # several comparisons, or a plain label (read by _BRACKET)
    side = _SIDE_IN_TEXT.fullmatch(inner.strip(" \t*"))
    if side is None or side.lastgroup != "s":
        return None
    letter = _letter(text, start + (len(inner) - len(inner.lstrip(" \t*"))) + side.start("s"))
    return None if letter is None else (letter, None)


def _cue_rank(text: str, low: str, start: int) -> int:
    """FINAL when the candidate's line announces a final verdict before it ("My final verdict is", "Verdict:"), or
    when it stands alone after a line that does ("**Final Verdict:**"); else LABEL."""
    line_start = low.rfind("\n", 0, start) + 1
    before = low[max(line_start, start - 160) : start]
    if _FINAL_CUE.search(before):
        return FINAL
    if not before.strip(" \t*_#>-\"'`") and line_start > 0:
        prev_start = low.rfind("\n", 0, line_start - 1) + 1
        prev = low[prev_start : line_start - 1].strip(" \t*_#>`")
        heading = prev.endswith((":", "\uff1a")) or low[prev_start:line_start].lstrip().startswith("#")
        if heading and _FINAL_CUE.search(prev):
            return FINAL
    return LABEL


def _usable(text: str, low: str, skip: Skip, start: int) -> bool:
    """Not attributed to a response, not an example, not quoted (unless the quotation ends the reply: the judge
    quoting the format it was asked for)."""
    if attributed_before(low, start) or example_cued(text, start):
        return False
    return not skip.quoted_away(start, start)


def _label_candidates(text: str, low: str, skip: Skip) -> list[Candidate]:
    out: list[Candidate] = []
    # Named by role, not compared by identity: a pattern's first use swaps the module's name to the compiled one.
    for pattern, single, labelled in (
        (_BRACKET, False, False),
        (_WORDY_BRACKET, False, False),
        (_SINGLE_BRACKET, True, False),
        (_LABELLED, False, True),
    ):
        for count, m in enumerate(matches(pattern, low)):
            if count >= _MAX_LABELS:
                break
            if single and not (text[m.start("x")].isupper() and text[m.start("y")].isupper()):
                continue  # "[a>b]" in code or maths
            said = _value(text, m)
            if said is None or not _usable(text, low, skip, m.start()):
                continue
            if labelled and said[0] != TIE:
                said = _turned(text, low, m.end(), said)
            rank = _labelled_rank(low, m) if labelled else _cue_rank(text, low, m.start())
            out.append((m.start(), m.end(), rank, said[0], said[1], "label"))
    first = _first_line(low)
    for m in matches(_LONE, low):
        if m.start() != first and low[m.end() :].strip():
            continue  # only the first line or the last one answers alone
        said = _value(text, m)
        if said is not None and not skip(m.start()):
            out.append((m.start(), m.end(), LABEL, said[0], said[1], "label"))
    return out


def _declared_candidates(text: str, answer: Answer, skip: Skip) -> list[Candidate]:
    """The template's own answer words where the reply gives them as its answer (see `declared_spots`): final."""
    spots = declared_spots(text, answer.meanings(COMPARISON))
    return [(start, end, FINAL, side, None, "declared") for start, end, side in spots if not skip.quoted(start)]


def _labelled_rank(low: str, m: re.Match[str]) -> int:
    # "Answer:" and "Result:" name no verdict by themselves; "Verdict:", "Winner:", "Final answer:" do.
    plain = m.group("label") in ("answer", "result", "conclusion", "judgment", "judgement")
    return LABEL if plain and "final" not in low[max(0, m.start() - 10) : m.start()] else FINAL


def _first_line(low: str) -> int:
    stripped = len(low) - len(low.lstrip())
    return low.rfind("\n", 0, stripped) + 1


def _sentence_candidates(text: str, low: str, skip: Skip) -> list[Candidate]:
    """Verdict sentences: each sentence holding a verdict word, read once, from the end of the reply."""
    triggers = _last_triggers(low)
    seen: set[int] = set()
    out: list[Candidate] = []
    first = _first_line(low)
    for t in triggers:
        start, end = _sentence_around(low, t.start())
        if start in seen:
            continue
        seen.add(start)
        if skip.quoted(t.start()) or attributed_before(low, t.start()):
            continue
        said = _sentence_verdict(text, low, start, end)
        if said is None:
            continue
        out.append((start, end, _sentence_rank(low, start, end, first), said[0], said[1], "sentence"))
    return out


def _last_triggers(low: str) -> list[re.Match[str]]:
    """The last `_MAX_SENTENCES` verdict words, found in a growing tail: a long reply full of them costs its end."""
    if not present(_TRIGGER, low):
        return []  # the words it needs are checked once, not once per window
    size = 16_384
    while True:
        start = max(0, len(low) - size)
        found = list(_TRIGGER.finditer(low, start))
        if len(found) > _MAX_SENTENCES or start == 0:
            return found[-_MAX_SENTENCES:]
        size *= 8


def _sentence_around(low: str, pos: int) -> tuple[int, int]:
    """The sentence (or line) holding ``pos``, at most 400 characters either side."""
    start = max(0, pos - 400)
    for m in _SENTENCE_END.finditer(low, start, pos):
        start = m.end()
    end = _SENTENCE_END.search(low, pos, min(len(low), pos + 400))
    return start, (end.end() if end is not None else min(len(low), pos + 400))


def _sentence_rank(low: str, start: int, end: int, first: int) -> int:
    head = low[start : start + 60].lstrip()
    if _ANNOUNCES.match(head) is not None:
        return FINAL  # "My final verdict is that Assistant B ...", "Final verdict: Assistant A is ..."
    if CONCLUDES.match(head) is not None:
        return CONCLUSION
    if start <= first and end - start <= 160:
        return CONCLUSION  # the answer comes first ("Output (b) is better.")
    if not any(c.isalnum() for c in low[end:]) and _ENDS_CLEANLY.search(low, start, end) is not None:
        return CONCLUSION  # the reply's last sentence, if it ends as a sentence does
    return PLAIN


def _sentence_verdict(text: str, low: str, start: int, end: int) -> tuple[str, str | None] | None:
    """The side one sentence prefers, a tie, `NONE` (it names a side only with a negation or a comparison pointing
    away from it), or None (no verdict, or both sides preferred)."""
    sentence = low[start:end]
    if _TIE_SENTENCE.search(sentence) is not None:
        return TIE, None
    named = [
        (m.end() + start, side)
        for m in _SIDE_IN_TEXT.finditer(sentence)
        if (side := _letter(text, m.start(m.lastgroup or "s") + start)) is not None
        and not _compared_against(low, m, start)
    ]
    found: set[str] = set()
    away: set[str] = set()
    blocked = False
    for pattern, into in ((_PREFER, found), (_AWAY, away)):
        k = -1  # the last response named before the comparison word (one pass over both lists)
        for m in pattern.finditer(sentence):
            at = m.start() + start
            while k + 1 < len(named) and named[k + 1][0] <= at:
                k += 1
            if k < 0 or at - named[k][0] > 80:
                continue
            if _NEGATION.search(low, named[k][0], at) is not None or _NEGATED_AFTER.match(low, m.end() + start):
                blocked = True  # "B is not better", "優れていません": says what B is not
                continue
            if into is found and _NOT_A_VERDICT.search(low, named[k][0], at) is not None:
                continue  # a hedge ("could be better"): no verdict
            into.add(named[k][1] if into is found else _OTHER[named[k][1]])
    for choose in (_CHOOSE, _CHOOSE_AFTER):
        for m in choose.finditer(sentence):
            side = _letter(text, m.start("s") + start)
            if side is not None:
                found.add(side)
    if not found and not away and _NEITHER_NOR.search(sentence) is not None:
        return TIE, None  # "Neither A nor B is good.": no side preferred
    sides = found | away
    if len(sides) > 1:
        return None
    if blocked or (away and not found):
        # Only a negation or a comparison pointing away: read for the other side where a final verdict is announced
        # ("Final verdict: B is worse than A"), else it blocks ("B is worse than A." alone is no verdict).
        return (
            (NONE, None)
            if blocked or _ANNOUNCES.match(low[start : start + 60].lstrip()) is None
            else (sides.pop(), None)
        )
    if not sides:
        return None
    strong = _STRONG_WORDS.search(sentence) is not None
    slight = _SLIGHT_WORDS.search(sentence) is not None
    return sides.pop(), (STRONG if strong and not slight else SLIGHT if slight and not strong else None)


_OTHER = {"A": "B", "B": "A"}


def _compared_against(low: str, m: re.Match[str], offset: int) -> bool:
    """Is the response named by this match the one compared against ("B より", "B보다", "比B")?"""
    if _THAN_AFTER.match(low, m.end() + offset) is not None:
        return True
    before = low[max(0, m.start() + offset - 3) : m.start() + offset]
    return before.rstrip().endswith("比")


def _turned(text: str, low: str, pos: int, said: tuple[str, str | None]) -> tuple[str, str | None]:
    """A labelled side read with what follows it in its sentence: "WINNER: B is inferior" is A; "Verdict: B is not
    better than A" names no winner (`NONE`); "Verdict: A, as B is worse" stays A."""
    end = _SENTENCE_END.search(low, pos, min(len(low), pos + 200))
    stop = end.start() if end is not None else min(len(low), pos + 200)
    words = [m for p in (_PREFER, _AWAY) if (m := p.search(low, pos, stop)) is not None]
    if not words:
        return said
    first = min(words, key=lambda m: m.start())
    other = _SIDE_IN_TEXT.search(low, pos, first.start())
    if other is not None and _letter(text, other.start(other.lastgroup or "s")) is not None:
        return said  # another response is named first: the comparison is about it
    if _NEGATION.search(low, pos, first.start()) is not None or _NEGATED_AFTER.match(low, first.end()):
        return NONE, None
    if _AWAY.fullmatch(first.group()) is not None:
        return _OTHER[said[0]], None
    return said


def _score_candidates(text: str, low: str) -> list[Candidate]:
    """One score per response, as the prompt asked: the higher wins, equal ones are a tie."""
    out: list[Candidate] = []
    first = _first_line(low)
    nl = low.find("\n", first)
    line_end = len(low) if nl == -1 else nl
    pair = _FIRST_LINE_PAIR.fullmatch(low, first, line_end)
    if pair is not None:
        out.append((pair.start(), pair.end(), FINAL, _compare(pair.group("a"), pair.group("b")), None, "scores"))
    for pattern in (_PAIR_BRACKETS, _PAIR_LINE):
        for m in matches(pattern, low):
            out.append((m.start(), m.end(), LABEL, _compare(m.group("a"), m.group("b")), None, "scores"))
    last: dict[str, re.Match[str]] = {}
    for count, m in enumerate(matches(_SIDE_SCORE, low)):
        side = _letter(text, m.start("s"))
        if count < MAX_FIRST_SCAN and side is not None:
            last[side] = m
    if len(last) == 2:
        a, b = last["A"], last["B"]
        out.append((min(a.start(), b.start()), max(a.end(), b.end()), LABEL, _compare(a["n"], b["n"]), None, "scores"))
    return out


def _compare(a: str, b: str) -> str:
    x, y = float(a), float(b)
    return "A" if x > y else "B" if y > x else TIE


def _objects_agree(text: str, low: str, scores: bool) -> None:
    """Several JSON objects in the reply that name different winners are no verdict, unless the ones marked final
    agree ("Draft: {"winner": "A"} ... Final: {"winner": "B"}" reads the final one, as `parse_json_object` does)."""
    spans, _ = scan_objects(text)
    if len(spans) < 2:
        return
    budget = RepairBudget()
    said: list[tuple[int, str]] = []
    for span in spans[:MAX_JSON_CANDIDATES]:
        value = load_json(text[span.start : span.end], budget)[0]
        named = _json_candidates(value, 0, scores, False) if isinstance(value, dict) else []
        if named:
            said.append((span.start, named[0][3]))
    if len({w for _, w in said}) > 1 and len({w for at, w in said if revision_mark(low, at) == "final"}) != 1:
        raise VerdictParseError("the reply holds JSON verdicts that name different winners, and none is marked final")


def _json_candidates(obj: Mapping[str, Any], end: int, scores: bool, whole: bool) -> list[Candidate]:
    """A winner field of the judge's JSON object (`winner`, `better`, `preference`; `response`, `answer`... only
    when the object is the whole reply, as an object in prose may be code), or with ``scores`` one score field
    per response."""
    fields = fields_of(obj)
    for key in _JSON_WINNER_KEYS if whole else _JSON_WINNER_KEYS[:12]:
        said = _json_value(fields.get(key), whole)
        if said is not None:
            return [(0, end, FINAL, said[0], said[1], "json")]
    if scores:
        per_side: dict[str, float] = {}
        for key, value in fields.items():
            m = _JSON_SIDE_KEY.fullmatch(key)
            if m is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
                per_side.setdefault(_SIDE_OF[m.group("s")], float(value))
        pair = fields.get("scores")
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, (int, float)) for v in pair):
            per_side = {"A": float(pair[0]), "B": float(pair[1])}
        if len(per_side) == 2:
            return [(0, end, FINAL, _compare(str(per_side["A"]), str(per_side["B"])), None, "scores")]
    return []


_JSON_VALUE = lazy(r"(?:" + _OPFORM + r"|(?:" + "|".join(_NOUNS[:14]) + r")?[ _]{0,2}\(?(?P<l>[ab12])\)?)")


def _json_value(value: Any, whole: bool) -> tuple[str, str | None] | None:
    """(winner, strength) a JSON value names: "A", "Response B", "[[A]]", "A>>B", "tie"; in a whole-reply object
    also 1 or 2."""
    if whole and isinstance(value, int) and not isinstance(value, bool) and value in (1, 2):
        return ("A" if value == 1 else "B"), None
    if not isinstance(value, str) or len(value) > 64:
        return None
    word = value.strip().strip("[]()*\"'`. ").lower()
    if word in _TIE_WORDS:
        return TIE, None
    m = _JSON_VALUE.fullmatch(word)
    if m is None:
        return None
    if m.group("op"):
        return _op(m.group("x"), m.group("op"), m.group("y"))
    return _SIDE_OF[m.group("l")], None


install(globals())  # first uses swap the compiled patterns in (see patterns)
