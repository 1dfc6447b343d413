#!/usr/bin/env python3
"""split_set.py OUT_DIR SET.jsonl [SET.jsonl ...]: the dev / held-out split of
docs/index.md's localization set. Per repository, in file order, every third row
(index 2, 5, 8, ...) goes to OUT_DIR/held.jsonl, the others to OUT_DIR/dev.jsonl."""
import collections, json, os, sys

out, sets = sys.argv[1], sys.argv[2:]
by = collections.defaultdict(list)
for name in sets:
    for line in open(name, encoding="utf-8"):
        row = json.loads(line)
        by[row["repo"]].append(row)
with open(os.path.join(out, "dev.jsonl"), "w") as dev, open(os.path.join(out, "held.jsonl"), "w") as held:
    for repo, rows in by.items():
        for i, row in enumerate(rows):
            (held if i % 3 == 2 else dev).write(json.dumps(row) + "\n")
