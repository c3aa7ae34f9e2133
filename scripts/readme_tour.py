#!/usr/bin/env python3
"""Re-runs the README's real-output blocks (a ``` block whose first line is `$ hwplan ...` followed by output)
with ./build/hwplan and rewrites their output, so the README shows what the current code prints. A block that ends
in '...' keeps its length. Blocks of several commands or of files not in the repository are left alone.
The Python tour's output block is regenerated from data/examples/python_example.py with the module in build/python.
Usage: python3 scripts/readme_tour.py [--check]   (--check: exit 1 when the README is out of date)"""
import os, re, shlex, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
readme = os.path.join(root, "README.md")
binary = os.path.join(root, "build", "hwplan")
text = open(readme).read()
out, pos, changed = [], 0, 0
for m in re.finditer(r"```\n(\$ hwplan [^\n]*)\n(.*?)```", text, flags=re.S):
    command, body = m.group(1), m.group(2)
    lines = body.splitlines()
    if not lines or any(l.startswith("$ ") for l in lines) or "~" in command or " -o " in command:
        continue
    args = shlex.split(command[2:].split("  #")[0])[1:]
    run = subprocess.run([binary] + args, cwd=root, capture_output=True, text=True)
    new = run.stdout.rstrip("\n").splitlines()
    if lines[-1] == "...":
        new = new[: len(lines) - 1] + ["..."]
    block = command + "\n" + "\n".join(new) + "\n"
    if block != m.group(1) + "\n" + body:
        changed += 1
    out.append(text[pos : m.start(1)] + block)
    pos = m.end(2)
out.append(text[pos:])
# The Python tour's output (the block after "python_example.py` is a notebook-style tour; its output:"), from the
# module built in build/python; its table needs pandas (Debian: python3-pandas), else the block is left alone.
text = "".join(out)
m = re.search(r"python_example\.py` is a notebook-style tour; its output:\n\n```\n(.*?)```", text, flags=re.S)
if m:
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "build", "python") + os.pathsep + os.path.join(root, "python"))
    run = subprocess.run([sys.executable, os.path.join(root, "data", "examples", "python_example.py")], cwd=root,
                         capture_output=True, text=True, env=env)
    if run.returncode != 0 or "needs pandas" in run.stdout:
        print("python tour block left alone: " + ("the example failed" if run.returncode else "pandas is missing"), file=sys.stderr)
    elif run.stdout != m.group(1):
        changed += 1
        text = text[: m.start(1)] + run.stdout + text[m.end(1) :]
out = [text]
if "--check" in sys.argv:
    print(f"{changed} README blocks out of date")
    sys.exit(1 if changed else 0)
open(readme, "w").write("".join(out))
print(f"rewrote {changed} README blocks")
