"""What a run's judgments look like to people and tools: the terminal summary, the JUnit
properties, and the JSON and HTML reports.  Each reads `JudgmentRecord`s and nothing else.

Nothing is imported here: the plugin loads a report module only when it has something to show.
"""
