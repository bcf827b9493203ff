"""The label and verdict catalogue: format markers, labelled fields and verdict words in prose.

A format marker beats stray numbers; the tiers, strongest first, are ``[RESULT]``, ``Rating: [[n]]``,
``GRADE:``, bare ``[[n]]``, ``Score:``-style fields and a lone ``[n]`` line.  ``[RESULT]`` and ``GRADE:``
take the last occurrence, the others the first; verdict words take the last tag, label or bare word.
"""

from __future__ import annotations

import re

from ..errors import VerdictParseError
from .candidate import FRACTION, VALUE, Found, Hit, fits_scale, found_from_value, negated_before, normalize, value_after
from .patterns import MAX_FIRST_SCAN, WORD_CHARS, gated, install, last, lazy, line_end, line_start, matches
from .prepare import DIGIT, ascii_lower
from .quotes import Skip

CONFIDENCE_WORDS = {
    "high": "high", "very high": "high", "medium": "medium", "moderate": "medium", "low": "low", "very low": "low",
}  # fmt: skip
# inspect_ai grades: C/Correct pass, I/Incorrect fail, P/Partial 0.5 with no verdict.
GRADE_LETTERS: dict[str, tuple[float, str | None]] = {
    "c": (1.0, "pass"), "correct": (1.0, "pass"), "i": (0.0, "fail"), "incorrect": (0.0, "fail"), "p": (0.5, None),
}  # fmt: skip
# A yes/no answer to the rubric's question "does the output meet the criteria?" (see the docs).
YES_NO = {"y": "pass", "yes": "pass", "n": "fail", "no": "fail"}

# No re.IGNORECASE: it makes sre several times slower.  Label patterns are lower-case
# and run on ascii_lower(text), which keeps every position of the original.
_SEP = r"[ \t]{0,3}(?:[*_]{1,2})?[ \t]{0,3}"


def _verdict_label(names: str) -> str:
    """A verdict label ("Verdict:", "Final decision ="), then the separator before its value."""
    return r"(?:(?:final|overall)[ \t]{1,3})?(?:" + names + ")" + _SEP + r"[:=：]"


# Prometheus's [RESULT] marker, translated by a non-English judge ("[결과] 3"), or without its brackets on its
# own line ("RESULT 3").
_RESULT_TAG = gated(
    r"(?:\[\s{0,3}(?:result|결과|結果|结果)\s{0,3}\]|(?m:^)[ \t*#]{0,4}result(?=[ \t]{1,3}[-+(]?\d))"
    + _SEP
    + r"[:\-]?"
    + _SEP
    + r"(?:(?:score|result|rating)[ \t]{0,2}(?:of|is|[:=])?[ \t]{0,3})?"
    + VALUE,
    ("result", "결과", "結果", "结果"),
)
_RATING_BRACKETS = gated(
    r"(?:rating[ \t]{0,3}(?:[:=：]|of|is)?|score[ \t]{0,3}[:=：])" + _SEP + r"\[\[\s{0,3}" + VALUE + r"\s{0,3}\]\]",
    ("[[",),
    word_start=True,
)
# The label in the brackets and the value after them: "[[Rating]: 3]", "[[rating]]: 8".
_LABEL_IN_BRACKETS = gated(
    r"\[\[[ \t]{0,2}(?:rating|score)[ \t]{0,2}\]\]?[ \t]{0,2}[:=\uff1a][ \t]{0,3}" + VALUE + r"(?:[ \t]{0,2}\])?",
    ("[[",),
)
_GRADE = gated(
    r"grade[ \t]{0,3}[:=]"
    + _SEP
    + r"(?P<g>[cpi](?![A-Za-z])|incorrect(?![A-Za-z])|correct(?![A-Za-z])"
    + r"|partial(?:ly\s{1,3}correct)?(?![A-Za-z]))",
    ("grade",),
    word_start=True,
)
_DOUBLE_BRACKETS = gated(r"\[\[\s{0,3}" + VALUE + r"\s{0,3}\]\]", ("[[",))
# Score labels of judges writing in other languages: Korean, Japanese, Chinese, German, Spanish, Italian.
_FOREIGN = (
    "점수", "평점", "평가", "スコア", "評価", "点数", "评分", "分数", "得分",
    "bewertung", "punktzahl", "puntuación", "calificación", "punteggio", "valutazione",
)  # fmt: skip
_FIELD = gated(
    r"(?:(?:final|overall|total|aggregate)[ \t]{1,3})?"
    r"(?:score|rating|result|grade|points|overall|conclusion|"
    + "|".join(_FOREIGN)
    + r")(?![A-Za-z_])"
    + _SEP
    + r"(?:\([^()\n]{0,24}\)"
    + _SEP
    + r")?[:=：]"
    + _SEP
    + VALUE,
    ("score", "rating", "result", "grade", "points", "overall", "conclusion", *_FOREIGN),
    word_start=True,
)
# French "Note : 8/10": "note" is also an English word ("Note: 2 claims are wrong"), so its value must end
# the line.
_NOTE_FIELD = gated(r"note" + _SEP + r"[:=]" + _SEP + VALUE + r"(?=[ \t*_.]{0,3}(?:\n|$))", ("note",), word_start=True)
_BRACKET_FIELD = gated(
    r"[(\[][ \t]{0,2}(?:score|rating)[ \t]{0,2}[:=]?[ \t]{0,2}" + VALUE + r"[ \t]{0,2}[)\]]", ("score", "rating")
)
_LONE_BRACKET = gated(r"^[ \t]{0,8}\[[ \t]{0,3}" + VALUE + r"[ \t]{0,3}\][ \t]{0,8}$", ("[",), re.MULTILINE)
_CONFIDENCE = gated(
    r"confidence(?:[ \t]{1,3}(?:level|score|rating))?"
    + _SEP
    + r"(?:[:=]|is)?"
    + _SEP
    + r"(?:(?P<word>very[ \t]{1,3}high|high|medium|moderate|low|very[ \t]{1,3}low)(?![A-Za-z])|"
    + VALUE
    + ")",
    ("confidence",),
    word_start=True,
)


# A label or tag that says its score is the final one beats per-item ones.
_FINAL_WORDS = ("final", "overall", "total", "aggregate", "conclusion")
_FINAL_BEFORE = lazy(r"(?<![a-z])(?:final|overall|total|aggregate|conclusion)(?![a-z])[^\n]{0,40}$")
_SCORE_WORDS = ("score", "rating", "grade", "points", "result")
# Words that may stand right before "Score:" without making it a per-item score.
_PLAIN_BEFORE = frozenset(["the", "my", "a", "an", "your", "its", "this", "our", "their", "score", "rating"])
_LAST_WORD = lazy(r"([a-z]{1,30})[ \t*_#:>\-]{0,8}$")
# "Final score:" with the value alone on the next line (or the one after a blank line).
_FIELD_NEXT_LINE = gated(
    r"(?:(?:final|overall|total|aggregate)[ \t]{1,3})?(?:score|rating|grade|points|overall|conclusion)(?![A-Za-z_])"
    + _SEP
    + r"[:=：][ \t*_]{0,6}\n(?:[ \t]{0,8}\n)?[ \t*_#>`]{0,6}"
    + VALUE
    + r"[ \t*_`]{0,6}(?=\n|$)",
    ("score", "rating", "grade", "points", "overall", "conclusion"),
    word_start=True,
)
# A score heading ("### Final Score", "**Rating**") with the value alone on the next line.
_HEADING_NEXT_LINE = gated(
    r"(?m:^)[ \t]{0,3}(?:#{1,6}[ \t]{1,3}|\*\*|__)(?P<lab>(?:(?:final|overall|total)[ \t]{1,3})?(?:score|rating|grade"
    r"|points))(?:\*\*|__)?[ \t]{0,3}[:=\uff1a]?[ \t*_]{0,4}\n(?:[ \t]{0,8}\n)?[ \t*_#>`]{0,6}"
    + VALUE
    + r"[ \t*_`.]{0,6}(?=\n|$)",
    ("# ", "#score", "#rating", "#final", "**", "__"),  # a heading or bold line: most replies have none
)
# A fraction on the declared scale after any label: "The assistant's answer: 8/10." (fits_scale keeps only those
# whose denominator is the scale maximum).
_COLON_FRACTION = gated(r"(?P<colon>[:\uff1a])[ \t*_]{0,4}" + FRACTION, ("/", "out of"))
# The label before such a colon: its last word (searched in a short window, so linear).
_LABEL_BEFORE = lazy(r"[^\W_][\w'\-]{0,30}[ \t*_]{0,3}$")
# A score worked out on its line: "Score: 3 + 4 = 7", "Total: (8 + 9) / 2 = 8.5": the result counts.
_FIELD_SUM = gated(
    r"(?:score|rating|total|points)(?![A-Za-z_])"
    + _SEP
    + r"[:=\uff1a][ \t]{0,3}[(]?[ \t]{0,2}\d[\d. \t+*/x\u00d7()]{1,60}?(?P<sum>=)[ \t]{0,3}"
    + VALUE,
    ("=",),  # a worked-out sum; the label words are in the pattern
    word_start=True,
)
# XML-like score tags of other judge frameworks: <score>4</score>, <final_score>7/10</final_score>.
_SCORE_TAG = gated(
    r"<(?P<tag>(?:[a-z][a-z0-9]{0,20}[_ -])?(?:score|rating|grade|points))>\s{0,8}(?:[*_]{1,2})?"
    + VALUE
    + r"(?:[*_]{1,2})?\s{0,8}</(?P=tag)>",
    ("score>", "rating>", "grade>", "points>"),
)
# Any tag holding only a number: it counts when the rubric's schema names it (a tag named after the rubric).
_NAMED_TAG = gated(r"<(?P<tag>[a-z][a-z0-9_-]{0,30})>\s{0,8}" + VALUE + r"\s{0,8}</(?P=tag)>", ("</",))

FINAL, PLAIN, SUB = 0, 1, 2


_TOTAL_AFTER = lazy(r"[ \t*_]{0,3}[(\[,\-\u2013\u2014]?[ \t]{0,2}(?:in[ \t])?(?:total|overall|final|combined)(?![a-z])")


def _label_start(low: str, m: re.Match[str]) -> int:
    """Where a match's label starts: its ``lab`` group, the words before its ``colon``, or the match itself."""
    groups = m.re.groupindex
    if "lab" in groups:
        return m.start("lab")
    if "colon" in groups:
        colon = m.start("colon")
        window = max(low.rfind("\n", max(0, colon - 80), colon) + 1, colon - 80)
        words = _LABEL_BEFORE.search(low, window, colon)
        return words.start() if words is not None else colon
    return m.start()


def _rank(low: str, m: re.Match[str]) -> int:
    """FINAL ("Final score:", "Overall rating:", "<final_score>", "MY FINAL SCORE: <score>", "Score: 7 (total)"),
    SUB ("Accuracy score:": another word names what it scores) or PLAIN."""
    start = _label_start(low, m)
    if "sum" in m.re.groupindex or _TOTAL_AFTER.match(low, m.end()) is not None:
        return FINAL  # "Score: 3 + 4 = 7" and "Score: 7 (total)" are the total
    label = low[start : start + 12]
    if label.startswith(_FINAL_WORDS) or label.startswith(tuple("<" + w for w in _FINAL_WORDS)):
        return FINAL
    if "colon" in m.re.groupindex and not label.startswith(_SCORE_WORDS):
        return SUB  # "Accuracy: 4/5", "The assistant's answer: 8/10": a fraction under another label
    line_start = low.rfind("\n", max(0, start - 80), start) + 1
    before = low[max(line_start, start - 48) : start]
    if _FINAL_BEFORE.search(before):
        return FINAL
    if label.startswith("<"):
        return PLAIN
    w = _LAST_WORD.search(before)
    if w is not None and w.group(1) not in _PLAIN_BEFORE and not before[w.end(1) :].strip(" \t*_#>-").endswith(":"):
        return SUB
    return PLAIN


def _collect(
    pattern: re.Pattern[str],
    low: str,
    skip: Skip,
    scale: tuple[float, float],
    neg: bool = False,
    fields: tuple[str, ...] | None = None,
) -> list[tuple[int, Found, tuple[int, int]]]:
    """Every valid candidate of one marker shape (the first 2,000 matches), with its rank; a tag pattern
    with ``fields`` keeps only tags those fields name."""
    out: list[tuple[int, Found, tuple[int, int]]] = []
    for count, m in enumerate(matches(pattern, low)):
        if count >= MAX_FIRST_SCAN:
            break
        if fields is not None and m.group("tag").replace("-", "_") not in fields:
            continue
        if not value_after(low, m) or (neg and negated_before(low, m.start(), field=True)):
            continue
        if skip.quoted_away(m.start(), _label_start(low, m)):
            continue
        f = found_from_value(m)
        if f is None or not fits_scale(f, scale):
            continue
        out.append((_rank(low, m), f, m.span()))
    return out


# The judge takes back what it said before: "the score above was a mistake", "Correction:", "on second thought".
CORRECTION = lazy(
    r"(?<![a-z])(?:(?:was|is)[ \t]{1,3}(?:a[ \t]{1,3}mistake|an[ \t]{1,3}error|wrong)"
    r"|i[ \t]{1,3}made[ \t]{1,3}an?[ \t]{1,3}(?:mistake|error)|correction[ \t]{0,2}:"
    r"|let[ \t]{1,3}me[ \t]{1,3}correct|on[ \t]{1,3}second[ \t]{1,3}thought"
    r"|(?:revised|corrected|updated)[ \t]{1,3}(?:score|rating|verdict))(?![a-z])"
)


# A verdict marked as the final one, on its line before it: "Final answer:", "**Final**", "最終的な評価", "最终".
MARKED_FINAL = lazy(r"(?<![a-z])final(?![a-z])|最終|最终|최종|τελικ|Τελικ")


def _agreeing(
    cands: list[tuple[int, Found, tuple[int, int]]], what: str, scale: tuple[float, float], low: str = ""
) -> Hit:
    """The first candidate when all state the same score; the last when the judge explicitly corrects the
    ones before it ("the score above was a mistake"); otherwise the reply is an error."""
    first_score = normalize(cands[0][1], scale)
    if all(normalize(f, scale) == first_score for _, f, _ in cands[1:]):
        return cands[0][1], cands[0][2]
    last_score = normalize(cands[-1][1], scale)
    k = len(cands) - 1
    while k > 0 and normalize(cands[k - 1][1], scale) == last_score:
        k -= 1  # the run of candidates that agree with the last one
    if CORRECTION.search(low, cands[k - 1][2][1], cands[k][2][0]) is not None:
        return cands[-1][1], cands[-1][2]
    raise VerdictParseError(f"the reply states several different {what} and nothing ranks one of them as the answer")


# Several numbers in one rating bracket: "Rating: [[5, 1, 3]]", "[[8.5], [8.2], [7.8]]" (one per item rated).
_BRACKET_LIST = gated(
    r"\[\[[ \t]{0,3}[-+]?\d{1,15}(?:\.\d{1,12})?[ \t]{0,3}(?:\][ \t]{0,3})?,[ \t]{0,3}\[?[ \t]{0,3}[-+]?\d", ("[[",)
)


def bracket_list(low: str, skip: Skip) -> bool:
    """Does the reply rate several items in one rating bracket (no single score)?"""
    return any(not skip(m.start()) for m in matches(_BRACKET_LIST, low))


def marker_score(
    text: str, low: str, skip: Skip, scale: tuple[float, float] = (0.0, 1.0), fields: tuple[str, ...] = ()
) -> Hit | None:
    """The strongest format marker or labelled field with a score.

    ``[RESULT]`` (the last) first; then any score labelled final / overall / total (several
    that disagree are an error); then the tiers in order, where a plain label beats one that
    names a criterion ("Accuracy score: 4"), and per-criterion scores that disagree are an error.
    Patterns run on ``low`` (the ASCII-lowered text); ``text`` keeps the case that grade
    letters need.  Quoted markers (``skip``) are not candidates.
    """
    has_digit = DIGIT.search(low) is not None
    if has_digit:
        m = last(_RESULT_TAG, low, lambda c: value_after(low, c) and skip.accept(c) and _fits(c, scale))
        if m is not None and (f := found_from_value(m)) is not None:
            return f, m.span()
        tiers = [
            (_SCORE_TAG, False, "score tags"),
            (_RATING_BRACKETS, False, "ratings"),
            (_DOUBLE_BRACKETS, False, "ratings"),
            (_FIELD, True, "scores"),
            (_FIELD_NEXT_LINE, True, "scores"),
            (_BRACKET_FIELD, True, "scores"),
            (_LONE_BRACKET, False, "scores"),
            (_NOTE_FIELD, True, "scores"),
            (_HEADING_NEXT_LINE, True, "scores"),
            (_FIELD_SUM, True, "scores"),
            (_COLON_FRACTION, True, "scores"),
        ]
        found = [(name, _collect(pattern, low, skip, scale, neg)) for pattern, neg, name in tiers]
        found[1][1].extend(_collect(_LABEL_IN_BRACKETS, low, skip, scale))  # "[[Rating]: 3]" is a rating bracket
        if fields:  # tags named after the rubric's own score fields count as score tags
            found[0] = (found[0][0], sorted(found[0][1] + _collect(_NAMED_TAG, low, skip, scale, False, fields)))
        finals = [c for _, cs in found for c in cs if c[0] == FINAL]
        if finals:
            finals.sort(key=lambda c: c[2])
            return _agreeing(finals, "final scores", scale, low)
        tagged = [c for c in found[0][1] if c[0] == PLAIN]
        if tagged:
            return _agreeing(tagged, "scores in tags", scale, low)
        labelled = [c for c in found[1][1] if c[0] == PLAIN]
        if labelled:  # Rating: [[n]] beats a grade letter; the first wins (later ones are hypothetical)
            return labelled[0][1], labelled[0][2]
    # A grade letter must be upper case: "Grade: i think..." is prose.
    g = last(_GRADE, low, lambda c: (len(c.group("g")) > 1 or text[c.start("g")].isupper()) and skip.accept(c))
    if g is not None:
        fixed, verdict = GRADE_LETTERS.get(g.group("g").lower(), (0.5, None))  # not found: partial(ly correct)
        return Found(fixed=fixed, verdict=verdict), g.span()
    if not has_digit:
        return None
    bare = [c for c in found[2][1] if c[0] == PLAIN]
    if bare:  # bare [[n]]: the first wins (later ones are hypothetical, "would earn [[10]]")
        return bare[0][1], bare[0][2]
    for name, cs in found[3:]:
        own = sorted((c for c in cs if c[0] == PLAIN), key=lambda c: c[2])
        if own:  # "Score: 3 ... Score: 7": nothing ranks one of them, so they must agree
            return _agreeing(own, name, scale, low)
    subs = sorted((c for _, cs in found for c in cs if c[0] == SUB), key=lambda c: c[2])
    if subs:
        return _agreeing(subs, "per-criterion scores", scale, low)
    return None


def _fits(m: re.Match[str], scale: tuple[float, float]) -> bool:
    f = found_from_value(m)
    return f is not None and fits_scale(f, scale)


_ANSWER_TAG = gated(r"<answer>\s{0,20}(?P<v>pass|fail|partial)(?:ed)?\s{0,20}</answer>", ("<answer>",))
_VERDICT_LABEL = gated(
    _verdict_label("verdict|decision|judge?ment|outcome|answer|result")
    + _SEP
    + r"(?P<v>pass|fail|partial)(?:ed)?(?![A-Za-z])",
    ("pass", "fail", "partial"),
    word_start=True,
)
_BARE_VERDICT = lazy(r"(?P<v>PASS|FAIL)(?:ED)?(?![A-Za-z])")
_LONE_VERDICT_LINE = lazy(r"^[ \t*_#>`\"'.\-]{0,8}(?P<v>pass|fail)(?:ed)?[ \t*_`\"'.!]{0,8}$", re.MULTILINE)
_VOCAB_JOIN = lazy(r"\s{0,3}(?:or|and|nor|/|\||,)\s{0,3}")
# The reply's final word, standing alone: a Y/N letter after a sentence end or a line break
# (criteria graders), or a last line that is only yes/no or correct/incorrect.  Decoration
# (emphasis, quotes, a full stop) is allowed around it.  Run on the last 64 characters only.
_DECOR = r"[ \t*_`\"'>#]{0,6}"
_FINAL_LETTER = lazy(r"(?:^|[.!?:;\n])\s{0,8}" + _DECOR + r"(?P<v>[YN])" + _DECOR + r"[.!]?" + _DECOR + r"\s*$")
_FINAL_WORD_LINE = lazy(
    r"(?:^|\n)" + _DECOR + r"(?P<v>yes|no|correct|incorrect)" + _DECOR + r"[.!]?" + _DECOR + r"\s*$"
)
# "Answer: Yes", "Verdict: N": a yes/no value that ends its line or its tag, or is followed by its reason
# ("Judgement: No because ...", "Verdict: no, the proof omits steps").  "Answer: no idea" is no verdict.
_YES_NO_LABEL = gated(
    _verdict_label(r"verdict|decision|judge?ment|answer|meets[ \t]criteria")
    + _SEP
    + r"(?:(?P<v>yes|no|y|n)[ \t*_.!]{0,4}(?=\n|$|</)"
    + r"|(?P<w>yes|no)(?:[ \t*_]{0,4}[,;:\-\u2013\u2014][ \t]|[ \t]{1,2}(?:because|since|as)(?![A-Za-z])))",
    ("verdict", "decision", "judgment", "judgement", "answer", "meets"),
    word_start=True,
)
# A verdict in double brackets, as criteria graders ask for it: "[[YES]]", "[[NO]]", "[[PASS]]".
_BRACKET_VERDICT = gated(r"\[\[[ \t]{0,3}(?P<v>yes|no|pass|fail)[ \t]{0,3}\]\]", ("[[",))


def final_word_verdict(text: str) -> tuple[str, tuple[int, int]] | None:
    """A verdict the reply ends on, standing alone: ``Y``/``N``, ``Yes``/``No``, ``CORRECT``/``INCORRECT``.

    Yes means pass: every pass/fail rubric asks whether the output meets the criteria.  Only
    the final word counts, alone on its line (or a Y/N letter after a sentence end): a yes or
    no inside the prose answers some other question.
    """
    end = len(text.rstrip())
    start = max(0, end - 64)
    # A cut-off tail starts with a stand-in character, so that "^" only matches the reply's start.
    tail = ("" if start == 0 else "x") + text[start:end]
    m = _FINAL_LETTER.search(tail) or _FINAL_WORD_LINE.search(ascii_lower(tail))
    if m is None:
        return None
    shift = start - (start > 0)
    return _VERDICT_OF[m.group("v").lower()], (shift + m.start("v"), shift + m.end("v"))


# Verdict words that answer "does the output meet the criteria?": they count only where a pass/fail verdict
# was asked (`Asked.verdict`), in a label, alone on a line, or as the verdict of a sentence.
WORD_VERDICTS = {
    "correct": "pass", "right": "pass", "valid": "pass", "true": "pass", "yes": "pass", "acceptable": "pass",
    "incorrect": "fail", "wrong": "fail", "invalid": "fail", "false": "fail", "no": "fail", "unacceptable": "fail",
}  # fmt: skip
_VERDICT_OF = {**WORD_VERDICTS, **YES_NO}
_WORDS = r"(?P<v>correct|incorrect|right|wrong|valid|invalid|true|false|yes|no|acceptable|unacceptable)(?![A-Za-z])"
_WORD_LABEL = gated(
    _verdict_label("verdict|decision|judge?ment|answer|result|evaluation|assessment|conclusion")
    + r"[ \t*_\"'`]{0,6}\n?[ \t*_\"'`]{0,6}"
    + _WORDS,
    ("verdict", "decision", "judgment", "judgement", "answer", "result", "evaluation", "assessment", "conclusion"),
    word_start=True,
)
_WORD_LINE = lazy(r"^[ \t*_#>`\"'.\-]{0,8}" + _WORDS + r"[ \t*_`\"'.!]{0,8}$", re.MULTILINE)
# "The student's answer is correct.", "the prediction provided is not correct", "I find the solution **correct**":
# the sentence's own verdict on the output.  ``neg`` turns it over.
_VERDICT_NOUN = (
    r"(?:answer|response|output|solution|submission|prediction|result|claim|statement|conclusion|reasoning|proof"
    r"|calculation|translation|summary|code|reply)"
)
_VERDICT_AFTER = r"[*_\"']{0,2}(?=[ \t]{0,2}(?:[.!;,:\n]|$|because|since|as[ \t]))"
_WORD_SENTENCE = gated(
    r"(?:the|this|your|its)[ \t]{1,3}(?:[a-z'\-]{1,14}[ \t]{1,3}){0,2}?" + _VERDICT_NOUN
    + r"(?:[ \t]{1,3}(?:given|provided|above|here|shown|produced|generated|submitted)){0,2}[ \t]{1,3}"
    r"is(?P<neg>n't|[ \t]{1,3}not)?"
    r"[ \t]{1,3}(?:(?:fully|entirely|completely|mathematically|factually|therefore|thus|indeed|also|ultimately"
    r"|overall)[ \t]{1,3})?[*_\"']{0,2}(?P<v>correct|incorrect|right|wrong|valid|invalid)" + _VERDICT_AFTER
    + r"|(?:find|consider|deem|judge|mark|grade|rate|evaluate|assess)[ \t]{1,3}(?:the|this|your|its)[ \t]{1,3}"
    r"(?:[a-z'\-]{1,14}[ \t]{1,3}){0,2}?" + _VERDICT_NOUN + r"[ \t]{1,3}(?:(?:to[ \t]{1,3}be|as)[ \t]{1,3})?"
    r"[*_\"']{0,2}(?P<w>correct|incorrect|right|wrong|valid|invalid)" + _VERDICT_AFTER,
    (" is ", "is n", "find", "consider", "deem", "judge", "mark", "grade", "rate", "evaluate", "assess"),
    word_start=True,
)  # fmt: skip
# A verdict word that opens the reply ("Correct. The steps ...", "No, the proof omits ...") or ends it after a
# sentence ("... The reasoning is sound. Correct"): said once, standing apart from the prose.
_FIRST_WORD = lazy(
    r"[ \t*_#>\"'`]{0,6}(?P<v>correct|incorrect|yes|no|true|false|valid|invalid|right|wrong)[*_\"'`]{0,3}"
    r"(?:[.,:;!\-\u2013\u2014]|[ \t]*\n|[ \t]*$)"
)
_LAST_WORD_AFTER = lazy(
    r"[.!?:;][ \t]{1,8}" + _DECOR + r"(?P<v>correct|incorrect)" + _DECOR + r"[.!]?" + _DECOR + r"\s*$"
)
# How a concluding sentence starts: "Therefore, ...", "In conclusion, ...", and in the languages of the judges met.
CONCLUDES = lazy(
    r"[ \t*_#>\-]{0,6}(?:therefore|thus|hence|so|overall|in[ \t]conclusion|in[ \t]summary|to[ \t]conclude|in[ \t]short"
    r"|in[ \t]the[ \t]end|ultimately|consequently|as[ \t]a[ \t]result|all[ \t]in[ \t]all|finally|based[ \t]on"
    r"|given|considering|taking|after[ \t]|in[ \t]light|summary|conclusion)(?![a-z])"
    r"|[ \t*_#>\-]{0,6}(?:결론적으로|따라서|그러므로|종합하면|결론|因此|所以|综上|总之|总的来说|结论|したがって|よって"
    r"|結論|総合的に|επομένως|συνεπώς|συνολικά|συμπερασματικά|Επομένως|Συνεπώς|Συνολικά|Συμπερασματικά)"
)
_SENTENCE_START = lazy(r"[.!?](?=\s)|\n")


def _sentence_word(m: re.Match[str]) -> str:
    """The verdict of a `_WORD_SENTENCE` match, turned over by its negation ("is not correct")."""
    said = WORD_VERDICTS[m.group("v") or m.group("w")]
    if m.group("neg"):
        return "fail" if said == "pass" else "pass"
    return said


def _word_verdict(low: str, skip: Skip) -> tuple[str, tuple[int, int], bool] | None:
    """The verdict word of a reply whose rubric asked for a verdict: the last label; else a verdict word standing
    apart (opening the reply, alone on the last such line, or ending the reply after a sentence), which must
    agree; else sentence verdicts, which must agree unless the reply's concluding sentence settles them."""
    m = last(_WORD_LABEL, low, skip.accept)
    if m is not None:
        return WORD_VERDICTS[m.group("v")], m.span(), True
    lead = len(low) - len(low.lstrip())
    apart = [
        x
        for x in (
            _FIRST_WORD.match(low, lead),
            last(_WORD_LINE, low, skip.accept),
            _LAST_WORD_AFTER.search(low, max(0, len(low.rstrip()) - 64)),
        )
        if x is not None and not skip(x.start("v"))
    ]
    if apart:
        verdicts = {_VERDICT_OF[x.group("v")] for x in apart}
        first = apart[0]
        if first.start("v") < lead + 8:  # "Yes, the answer is incorrect.": its own sentence says the other
            end = _SENTENCE_START.search(low, first.end())
            same = matches(_WORD_SENTENCE, low[: end.start() if end is not None else len(low)], first.end())
            verdicts.update(_sentence_word(m) for m in same)
        if len(verdicts) > 1:
            raise VerdictParseError("the reply states one verdict word and argues the other in the same breath")
        return verdicts.pop(), apart[-1].span("v"), True
    said = [m for count, m in enumerate(matches(_WORD_SENTENCE, low)) if count < MAX_FIRST_SCAN and not skip(m.start())]
    if not said:
        return None
    verdicts = {_sentence_word(m) for m in said}
    if len(verdicts) > 1 and not _concludes(low, said[-1].start()):
        raise VerdictParseError(
            "the reply calls the output both correct and incorrect, and no label says which it means"
        )
    return _sentence_word(said[-1]), said[-1].span(), False


def _concludes(low: str, pos: int) -> bool:
    """Is ``pos`` in the reply's last sentence, one that opens with a conclusion ("Therefore, the answer is ...")?"""
    start = 0
    for m in _SENTENCE_START.finditer(low, max(0, pos - 300), pos):
        start = m.end()
    end = _SENTENCE_START.search(low, pos)
    return CONCLUDES.match(low, start) is not None and (end is None or not low[end.end() :].strip())


def marker_verdict(
    text: str, low: str, skip: Skip, verdict: bool | None = None
) -> tuple[str | None, bool, tuple[int, int] | None, bool]:
    """(verdict, partial, span, strong): a tag or label is strong, a bare word is not.

    ``verdict``: whether a pass/fail verdict was asked (None: unknown).  Verdict words such as
    correct/incorrect count only when it was; yes/no ones not when a score was asked instead.
    Quoted tags, labels and words (``skip``) are not candidates; a verdict alone on its
    line may wear quotes as decoration.
    """
    # (Declared tags are read before, see answers.declared_found; the membership tests spare most replies a call.)
    tagged = _tag_verdict(low, skip, verdict) if "</" in low else None
    if tagged is not None:
        return tagged[0], False, tagged[1], True
    patterns: tuple[re.Pattern[str], ...] = (_ANSWER_TAG, _BRACKET_VERDICT, _VERDICT_LABEL)
    if "boxed" in low:
        patterns = (_BOXED_VERDICT, *patterns)
    if verdict is not False:
        patterns += (_YES_NO_LABEL,)
    for pattern in patterns:
        found = _labelled_verdicts(pattern, low, skip, verdict)
        if found:
            v, span = _one_verdict(found, low)
            if v == "partial":
                return None, True, span, True
            return v, False, span, True
    said = _word_verdict(low, skip) if verdict else None
    if said is not None:
        return said[0], False, said[1], said[2]
    final = final_word_verdict(text) if verdict is not False else None
    if final is not None and not skip(final[1][0]):
        return final[0], False, final[1], False
    if "pass" not in low and "fail" not in low:
        return None, False, None, False

    def joined(a: re.Match[str], b: re.Match[str]) -> bool:
        # "PASS or FAIL", "PASS/FAIL": the vocabulary, not a decision.
        if a.group("v").lower() == b.group("v").lower():
            return False
        return _VOCAB_JOIN.fullmatch(low, a.end(), b.start("v")) is not None

    # The last bare word that is not part of such a pair wins.  Look at a growing tail
    # of the reply so that a reply full of verdict words stays cheap.
    n = len(text)
    size = 4096
    while True:
        start = max(0, n - size)
        tokens = [
            m
            for m in _BARE_VERDICT.finditer(text, start)
            if (m.start() == 0 or text[m.start() - 1] not in WORD_CHARS)
            and not low[max(0, m.start() - 5) : m.start()].endswith(("not ", "n't "))  # "NOT PASS"
        ]
        tokens += list(_LONE_VERDICT_LINE.finditer(low, start))
        tokens.sort(key=lambda m: m.start("v"))
        for idx in range(len(tokens) - 1, max(-1, len(tokens) - 1 - MAX_FIRST_SCAN), -1):
            t = tokens[idx]
            if idx == 0 and start > 0:
                break  # its left neighbour may lie before the window: widen it
            if idx > 0 and joined(tokens[idx - 1], t):
                continue
            if idx + 1 < len(tokens) and joined(t, tokens[idx + 1]):
                continue
            if t.re is _BARE_VERDICT and skip(t.start("v")):
                continue  # 'the output says "PASS"': quoted, not the judge's word
            if conditional(low, t.start("v"), t.end("v")):
                continue  # "would PASS if it cited sources": a condition, not the decision
            taken_back = retraction(low, t.end())
            if taken_back is not None:
                if taken_back[0] is None:
                    continue
                return taken_back[0], False, taken_back[1], False
            return t.group("v").lower(), False, t.span(), False
        else:  # no break: the window holds every candidate it needs
            if start == 0 or len(tokens) > MAX_FIRST_SCAN:
                return None, False, None, False
        size *= 8


# XML verdict tags of other judge frameworks: <is_correct>true</is_correct>, <verdict>FAIL</verdict>; <answer> only as
# the reply's last tag (earlier ones hold the graded answer).
_TAG_VERDICT = gated(
    r"<(?P<tag>is_correct|correct|correctness|verdict|judge?ment|decision|result|passed|pass|grade|answer)>\s{0,8}"
    r"[*_\"'`]{0,2}(?P<v>true|false|yes|no|pass|fail|passed|failed|correct|incorrect)[*_\"'`.]{0,3}\s{0,8}</(?P=tag)>",
    ("</",),
)
_TAG_OPEN_AFTER = lazy(r"<[a-z]")
_TAG_WORDS = {"pass": "pass", "fail": "fail", "passed": "pass", "failed": "fail", **_VERDICT_OF}
# A verifier's boxed letter with its verdict word: "Final Judgment: \boxed{A} - CORRECT".
_BOXED_VERDICT = gated(
    r"\\boxed\{[^{}\n]{1,24}\}[ \t*_]{0,3}(?:[-:\u2013\u2014][ \t*_]{0,3})?(?P<v>correct|incorrect)(?![a-z])",
    ("boxed",),
)


def _tag_verdict(low: str, skip: Skip, verdict: bool | None) -> tuple[str, tuple[int, int]] | None:
    """The verdict in an XML verdict tag, wherever the other tags sit; `<answer>` counts only as the last tag.
    Tags that disagree are no verdict unless one is marked final."""
    if verdict is False:
        return None
    found: list[tuple[str, tuple[int, int]]] = []
    for count, m in enumerate(matches(_TAG_VERDICT, low)):
        if count >= MAX_FIRST_SCAN:
            break
        if skip(m.start()):
            continue
        if m.group("tag") == "answer" and _TAG_OPEN_AFTER.search(low, m.end()) is not None:
            continue  # an <answer> followed by other tags holds an answer, not the verdict
        word = m.group("v")
        if m.group("tag") == "answer" and word in ("true", "false") and not verdict:
            continue
        found.append((_TAG_WORDS[word], m.span()))
    return _one_verdict(found, low) if found else None


def _labelled_verdicts(
    pattern: re.Pattern[str], low: str, skip: Skip, verdict: bool | None
) -> list[tuple[str, tuple[int, int]]]:
    """Every verdict one label shape states (the first 2,000), as (verdict, span): a verdict under a condition
    ("PASS if it cited sources") is none, and one taken back on its line ("PASS. No wait, FAIL.") is the one after."""
    out: list[tuple[str, tuple[int, int]]] = []
    for count, m in enumerate(matches(pattern, low)):
        if count >= MAX_FIRST_SCAN:
            break
        if not skip.accept(m):
            continue
        group = "v" if m.group("v") else "w"
        word = m.group(group).lower()
        if verdict is False and word not in ("pass", "fail"):
            continue  # "[[YES]]" answers no question this rubric asked
        if conditional(low, m.start(group), m.end()):
            continue
        taken_back = retraction(low, m.end())
        if taken_back is not None:
            if taken_back[0] is not None:
                out.append((taken_back[0], taken_back[1]))
            continue
        said = _VERDICT_OF.get(word, word)
        out.append((said, m.span()))
        if said in ("pass", "fail"):
            # Another verdict word later on its line ("Verdict: PASS, but really FAIL") disagrees with it: the two
            # are weighed like two labels (none marked final: no verdict), never the first taken alone.
            out += [(x.group("v"), x.span()) for x in _other_on_line(low, m.end(), said)]
    return out


def _other_on_line(low: str, end: int, said: str) -> list[re.Match[str]]:
    """The verdict words after ``end`` on its line that say the other verdict, stated (not negated, not under a
    condition, not part of the "PASS or FAIL" vocabulary)."""
    stop = line_end(low, end, 200)
    return [
        x
        for x in _LATER_VERDICT.finditer(low, end, stop)
        if x.group("v") != said
        and not conditional(low, *x.span())
        and not low[max(0, x.start() - 5) : x.start()].endswith(("not ", "n't "))
        and _JOINED_BEFORE.search(low, max(0, x.start() - 8), x.start()) is None
        and _VOCAB_JOIN.match(low, x.end()) is None
    ]


_JOINED_BEFORE = lazy(r"(?<![a-z])(?:or|and|nor)[ \t]{1,3}$|[/|][ \t]{0,3}$")


def _one_verdict(found: list[tuple[str, tuple[int, int]]], low: str) -> tuple[str, tuple[int, int]]:
    """The verdict several of one kind state: they agree; or the ones marked final agree ("Draft verdict: PASS ...
    Final verdict: FAIL"); or the judge says it corrects the ones before; else `VerdictParseError`."""
    verdicts = [v for v, _ in found]
    if len(set(verdicts)) == 1:
        return found[-1]
    marked = [f for f in found if MARKED_FINAL.search(low, line_start(low, f[1][0]), f[1][1]) is not None]
    if marked and len({v for v, _ in marked}) == 1:
        return marked[-1]
    k = len(found) - 1
    while k > 0 and verdicts[k - 1] == verdicts[-1]:
        k -= 1  # the run of verdicts that agree with the last one
    between = (found[k - 1][1][1], found[k][1][0])
    if CORRECTION.search(low, *between) is not None or _CORRECTED.search(low, *between) is not None:
        return found[-1]  # "Judgement: NO ... actually Judgement: YES": the judge corrects itself
    raise VerdictParseError(
        f"the reply gives verdicts that disagree ({', then '.join(dict.fromkeys(verdicts))}) and none is marked final"
    )


# A verdict under a condition: "would PASS", "could pass if ...", "PASS if it cited sources", "PASS unless ...".
_CONDITION_BEFORE = lazy(
    r"(?<![a-z])(?:would|could|might|should|will|may|if|unless|were|once|conditional(?:ly)?|tentative(?:ly)?"
    r"|provisional(?:ly)?|partial(?:ly)?)(?:[ \t]{1,3}(?:have[ \t]{1,3})?(?:been|be))?[ \t*_\"']{1,4}$"
)
_CONDITION_AFTER = lazy(
    r"(?:ed)?[*_\"']{0,2}[ \t,]{1,3}(?:if|unless|provided|assuming|once|only[ \t]if|as[ \t]long[ \t]as|when)(?![a-z])"
)
# A verdict taken back on its line: "PASS. No wait, FAIL.", "PASS (no, FAIL)", "PASS. Actually, FAIL".
_RETRACT = lazy(
    r"[^a-z0-9\n]{0,6}(?:(?:hmm+|well|oh|uh|um)[^a-z0-9\n]{1,4})?"
    r"(?:(?P<hard>(?:no|nope)(?=[ \t]{0,2}(?:[,:!\-\u2013\u2014]|wait))|wait|scratch[ \t]that|correction|oops)"
    r"|actually|sorry|i[ \t]mean|or[ \t]rather|rather|make[ \t]that|on[ \t]second[ \t]thought|on[ \t]reflection"
    r"|not[ \t](?:quite|really)|in[ \t]fact)(?![a-z])"
    r"[ \t,:!.\-\u2013\u2014]{0,4}"
)
_CORRECTED = lazy(r"(?<![a-z])(?:actually|wait|on[ \t]second[ \t]thought|scratch[ \t]that|i[ \t]mean|oops)(?![a-z])")
_LATER_VERDICT = lazy(r"(?<![a-z])(?P<v>pass|fail)(?:ed)?(?![a-z])")


def conditional(low: str, start: int, end: int) -> bool:
    """Is the verdict word at [start, end) stated under a condition on its line ("would PASS", "PASS if ...")?"""
    if _CONDITION_BEFORE.search(low, max(line_start(low, start, 40), start - 40), start) is not None:
        return True
    return _CONDITION_AFTER.match(low, end) is not None


def retraction(low: str, end: int) -> tuple[str | None, tuple[int, int]] | None:
    """None when the verdict ending at ``end`` stands; else the verdict the judge gives instead later on the line
    ("PASS. No wait, FAIL." is fail), or (None, span) when it takes the verdict back for none."""
    m = _RETRACT.match(low, end)
    if m is None:
        return None
    hard = m.group("hard") is not None or "wait" in m.group() or "scratch" in m.group() or "correction" in m.group()
    later = [
        x for x in _LATER_VERDICT.finditer(low, m.end(), line_end(low, m.end(), 200)) if not conditional(low, *x.span())
    ]
    if not later:
        # "PASS. No wait." takes it back for nothing; "PASS. Actually, the steps are fine." keeps it.
        return (None, m.span()) if hard or "oops" in m.group() else None
    return later[-1].group("v"), later[-1].span()


def confidence_word(text: str, spans: list[tuple[int, int]]) -> str | None:
    """The confidence word the reply states, if any; every confidence figure's span goes to ``spans``."""
    word = None
    for m in matches(_CONFIDENCE, text):
        spans.append(m.span())
        if m.group("word"):
            word = CONFIDENCE_WORDS.get(" ".join(m.group("word").lower().split()))
    return word


install(globals())  # first uses swap the compiled patterns in (see patterns)
