"""Where verdicts live: the committed verdict files, the local cache under them, and the run's spend.

Two tiers.  The verdict files (`verdict_file`) are the source of truth for replay: one readable JSON file
per test item.  The local cache (`cache`, git-ignored diskcache) sits under them, keyed the same way.
Both are untrusted input: verdict files are parsed as JSON and validated, and cache rows are read
back only when they hold inline text (`json_disk`).  `spend` shares the run's dollars across xdist
workers; `atomic` writes every file so a reader never sees half of one.  `finder` walks a tree for
verdict files; `index` finds a key in any verdict file, on a miss; `merge` is the git merge driver
for verdict files.  Internal: import from the module that defines a name.
"""
