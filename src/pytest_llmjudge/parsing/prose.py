"""The weakest evidence: ratings stated in prose, and a reply that is only a number.

Prose ratings need a rating verb bound to the number; two that disagree make the reply an error.  A bare
number counts when it is the whole reply or its first line, or the last line after "thinking" lines.
"""

from __future__ import annotations

from ..errors import VerdictParseError
from .candidate import NEGATION, VALUE, Found, Hit, found_from_value, inside_word, negated_before, value_after
from .patterns import gated, install, lazy, matches
from .prepare import DIGIT
from .quotes import Skip, attributed_before

_MAX_PROSE_CANDIDATES = 200  # rating-verb matches examined per reply


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_RATING_VERB = gated(
    r"(?:rate|rated|rating|score|scored|grade|graded|give|gives|giving|given|assign|assigned|gets|receives|merits"
    r"|award|awarded|deserves?|earns?|earned|earning"
    r"|(?:should|would|must|will)[ \t]{1,3}be(?=[ \t]{1,3}an?[ \t]))(?![A-Za-z])(?=[^\d\n.;!?]{0,60}\d)",
    ("rat", "scor", "grad", "giv", "assign", "award", "deserv", "earn", "gets", "receives", "merits", " be "),
    word_start=True,
)
_OBJECT_VERBS = _words("give gives giving given assign assigned award awarded gets receives merits")
_TOKEN = lazy(r"[ \t]{0,4}(?:(?P<word>[A-Za-z\u2019']{1,30})|(?P<num>[-+]?\d)|(?P<punct>\S))")
# A filler word that means the number is not the rating ("rated on a scale from 1",
# "the rating is based on 3 criteria", "scored at least 2").
_STOP_WORDS = _words(
    "scale between from range ranging out up based using across after before per each every about around "
    "approximately least most top number only"
)
# Words that may follow a rating ("a 7 because", "8 out of 10", "4 stars"); any other
# word makes the number a count ("gives 3 examples", "scored 2 goals").
_AFTER_WORDS = _words(
    "out points point pts stars star because for as since overall on given and but in with which due "
    "considering so here this that the to at i it based reflecting from by is was or if while though "
    "although even"
)
_NEXT_WORD = lazy(r"[ \t]{1,3}([A-Za-z]{1,30})")
# "A score of 5 means ...", "a rating of 1 is given when ...", "Score 4: mostly right": the number is
# named while explaining the rubric, not given to the graded output.
_DEFINING = lazy(
    r"[ \t]{0,3}(?:[:=]|(?:means?|indicates?|represents?|signif(?:y|ies)|denotes?|corresponds?|requires?"
    r"|implies|would|should|could|(?:is|are)[ \t]{1,3}(?:given|reserved|for|awarded|assigned|used|meant|when))"
    r"(?![A-Za-z]))"
)
_PROSE_VALUE = lazy(VALUE)
# The rubric's score, named as a requirement, not given: "as required by a score of 5 in the rubric".
_RUBRIC_AFTER = lazy(
    r"[ \t]{1,3}(?:in|of|on|from|per|under|according[ \t]to)[ \t]{1,3}the[ \t]{1,3}(?:rubric|scale|scoring|criteria"
    r"|instructions?|guidelines?|grading)(?![a-z])"
)
_REQUIRED_BEFORE = lazy(
    r"(?<![a-z])(?:required|requires|necessary|needed|reserved|described|defined|specified|demanded|expected|warrants?)"
    r"[ \t]{1,3}(?:by|for|in|of)?[ \t]{0,3}(?:an?[ \t]{1,3}|the[ \t]{1,3})?$"
)
# A score given in Korean, Chinese or Japanese prose: "2점으로 평가하겠습니다", "我给这个回答打7分", "7点を付けます".
_FOREIGN_RATING = gated(
    r"(?:(?:打|给|给予|评为|评分为|得分为|評価は|スコアは|점수는|점수를)[ \t]{0,2}(?P<a>\d{1,3}(?:\.\d{1,2})?)"
    r"[ \t]{0,2}(?:점|分|点)"
    r"|(?P<b>\d{1,3}(?:\.\d{1,2})?)[ \t]{0,2}(?:점|分|点)(?:으로|로|을|를|이|가|은|는|과|を|と|に|が)?[ \t]{0,2}"
    r"(?:평가|드리|드립|주겠|줍니다|부여|매기|매깁|给|給|評価|付け|つけ|とし|评价|評定))",
    ("점", "分", "点"),
)


def prose_score(text: str, skip: Skip) -> Hit | None:
    """Ratings stated in a sentence; disagreeing ones make the reply ambiguous.

    A rating inside quotation marks ('it says "rate this a 10"') is not a candidate.
    """
    found: list[Hit] = []
    if DIGIT.search(text) is None:
        return None
    for count, m in enumerate(matches(_RATING_VERB, text)):
        if count >= _MAX_PROSE_CANDIDATES:
            break
        if negated_before(text, m.start()) or skip.quoted(m.start()) or attributed_before(text, m.start()):
            continue  # "the output includes a rating of 5/5": the output's rating, not the judge's
        after = _number_after(text, m.end())  # the lookarounds after the verb are zero-width
        if after is None or (after[1] == 0 and text[m.start() : m.end()] in _OBJECT_VERBS):
            continue  # no number, or "gives 3 examples": a count, not a rating
        start = after[0]
        v = _PROSE_VALUE.match(text, start)
        # value_after also rules out a range or alternatives: "from 1 to 10", "a 3 or 4".
        if v is None or not value_after(text, v) or inside_word(text, start):
            continue
        if _DEFINING.match(text, v.end()) or _RUBRIC_AFTER.match(text, v.end()):
            continue
        if _REQUIRED_BEFORE.search(text, max(0, m.start() - 40), m.start()):
            continue  # "as required by a score of 5": the rubric's score, not the judge's
        nxt = _NEXT_WORD.match(text, v.end())
        if nxt is not None and nxt.group(1) not in _AFTER_WORDS:
            continue
        f = found_from_value(v)
        if f is not None:
            found.append((f, (m.start(), v.end())))
    for m in matches(_FOREIGN_RATING, text):
        if not skip.quoted(m.start()):
            found.append((Found(raw=float(m.group("a") or m.group("b"))), m.span()))
    if not found:
        return None
    first = found[0][0]
    if any((f.raw, f.den) != (first.raw, first.den) for f, _ in found[1:]):
        raise VerdictParseError(
            "the reply states several different ratings in prose and no labelled score;"
            " cannot tell which one rates the graded output"
        )
    return found[0]


def _number_after(text: str, pos: int) -> tuple[int, int] | None:
    """Where the number after a rating verb starts, and how many words come before it; None when a
    negation, a stop word, a seventh word or other punctuation comes first."""
    words = 0
    while (t := _TOKEN.match(text, pos, min(len(text), pos + 80))) is not None:
        if t.group("num") is not None:
            return t.start("num"), words
        if t.group("word") is not None:
            w = t.group("word").lower().replace("\u2019", "'")
            words += 1
            if NEGATION.fullmatch(w) or w.endswith("n't") or w in _STOP_WORDS or words > 6:
                return None
        elif t.group("punct") not in (":", '"', "*", "(", "'", "=", "\u201c"):
            return None
        pos = t.end()
    return None


_BARE = lazy(
    r"[*_`\"'\s]{0,6}(?P<num>[-+]?(?:\d{1,15}(?:\.\d{1,12})?|\.\d{1,12}))"
    r"(?:\s{0,2}(?:/|out\s{1,3}of)\s{0,2}(?P<den>\d{1,15}(?:\.\d{1,12})?))?(?P<pct>\s{0,2}%)?"
    r"(?:\s{0,2}points?)?[*_`\"'\s]{0,6}"
)


def _decoration(line: str) -> bool:
    """Lines a UI adds around a bare answer: quotes ('> ...'), italics, fences."""
    s = line.strip()
    return (
        s.startswith((">", "```"))
        or (len(s) > 2 and s[0] in "*_" and s[-1] in "*_")
        or s.lower() in ("<think>", "</think>")
    )


def bare_first(text: str) -> Hit | None:
    """The whole reply, or its first non-fence line, is a number."""
    pos = 0
    for line in text.split("\n", 64)[:64]:  # only the first few lines can hold a score-first answer
        if line.strip() and not line.strip().startswith("```"):
            m = _BARE.fullmatch(line) if len(line) <= 80 else None
            f = None if m is None else found_from_value(m)
            return None if f is None else (f, (pos, pos + len(line)))
        pos += len(line) + 1
    return None


def bare_last(text: str) -> Hit | None:
    """The last line is a number and every line before it is decoration."""
    stripped = text.rstrip()
    nl = stripped.rfind("\n")
    line = stripped[nl + 1 :]
    if len(line) > 80:
        return None
    m = _BARE.fullmatch(line)
    if m is None:
        return None
    head = stripped[: max(nl, 0)]
    if len(head) > 2000 or not all(_decoration(x) for x in head.split("\n") if x.strip()):
        return None
    f = found_from_value(m)
    return (f, (nl + 1, len(stripped))) if f is not None else None


install(globals())  # first uses swap the compiled patterns in (see patterns)
