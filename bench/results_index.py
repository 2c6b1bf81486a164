#!/usr/bin/env python3
"""Prints the index of bench/results/ as a Markdown table: each folder and the first line of
its README.md (what it measured). Folders without one are described in bench/results/README.md
itself. The README's "Every folder" section is this script's output:

    bench/results_index.py > /tmp/index.md   # then paste it between the markers
"""
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
print("| folder | what it measured |")
print("|---|---|")
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name)
    if not os.path.isdir(path):
        continue
    title = "described below"
    readme = os.path.join(path, "README.md")
    if os.path.exists(readme):
        with open(readme) as f:
            title = f.readline().strip().lstrip("#").strip().replace("|", "/")
    print(f"| `{name}` | {title} |")
