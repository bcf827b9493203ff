"""Decisions on suites, above the judgment pipeline: a test repeated and decided by how many of its runs
pass, and a group of judged cases decided by its pass rate (a gate).

- `marker`: what `@pytest.mark.judge` (and `--judge-runs`) says of a test's runs and of its group's gate,
  checked at the test's setup;
- `repeat`: the runs of one test, in its one item, and the outcome each test hands on (as plain data);
- `gates`: the decision on each group, made where every test's report arrives (the session, or the
  xdist controller), from the cases' outcomes riding on those reports;
- `reports`: a gate's outcome as a test report of its own (terminal, exit status, JUnit, other plugins).

A repeated run is one more field of the test (`TestContext.run`), folded into the keys of its judgments
and generations only when it is not 0: every key of a test that is not repeated stays as it was, and a
replay decides every run, and so every gate, exactly as the recording did.  Nothing here is imported by
a run that neither repeats nor gates.
"""
