"""The assessment question generator: the judge model writes single-focus questions from a specification.

`forms` holds the kinds of question and the check each passes; `prompt` what the model is asked and
how its reply is read; `record` the reviewable questions file; `generator` the recorded call.
`llmjudge questions` (in `cli`) and `Questions.from_file` are built on these.
"""

from __future__ import annotations

from .forms import KINDS, Dropped, check_question
from .generator import QuestionSet, QuestionsWarning, generate_question_set, generate_questions
from .record import QuestionsFile, read_questions_file

__all__ = [
    "KINDS",
    "Dropped",
    "QuestionSet",
    "QuestionsFile",
    "QuestionsWarning",
    "check_question",
    "generate_question_set",
    "generate_questions",
    "read_questions_file",
]
