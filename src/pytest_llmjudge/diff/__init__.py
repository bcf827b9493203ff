"""`llmjudge diff`: what a branch did to its judgments, read from the committed verdict files of two sides.

`git` reads a revision's verdict files in bulk; `sides` reads each side through the store's one reader
into judgments; `compare` pairs them and computes the pass rates; `reporting.diff` renders the result;
`command` is the CLI's.  Nothing here calls a judge or runs a test.
"""
