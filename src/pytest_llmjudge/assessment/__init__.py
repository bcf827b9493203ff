"""The assessment question generator: the judge model writes single-focus questions from a specification.

`forms` holds the kinds of question and the check each passes; `prompt` what the model is asked and
how its reply is read; `generator` the recorded call, written to the reviewable questions file that
`rubrics.questions_file` reads and writes (the `Questions` rubric's format; re-exported here).
`llmjudge questions` (in `cli`) is built on these.
"""

from __future__ import annotations

from ..rubrics.questions_file import QuestionsFile, read_questions_file
from .forms import KINDS, Dropped, check_question
from .generator import QuestionSet, QuestionsWarning, generate_question_set, generate_questions

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
