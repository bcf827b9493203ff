"""The assessment question generator: the judge model writes single-focus questions from a specification.

`forms` holds the kinds of question and the check each passes; `prompt` what the model is asked and
how its reply is read; `generator` the recorded call, written to the reviewable questions file that
`rubrics.questions_file` reads and writes (the `Questions` rubric's format).  `llmjudge questions`
(in `cli`) is built on these.  Internal: the public name is `pytest_llmjudge.generate_questions`.
"""
