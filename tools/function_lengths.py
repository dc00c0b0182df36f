#!/usr/bin/env python3
"""Lists C++ functions longer than a limit (default 100 lines, signature to closing brace), longest
first; exits 1 when there is one. A brace-matching reader, not a C++ parser: comments, strings and
raw strings are blanked, and a `{` opens a function when the text before it (since the last `;`,
`{` or `}`) has a parameter list and is no control statement, type, namespace, lambda or
initializer. Lambdas and local classes count as part of their function.

    tools/function_lengths.py [--limit N] FILE_OR_DIR...   # e.g. support tir search cli"""
import argparse
import os
import re
import sys

CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else)\b")
TYPE = re.compile(r"\b(namespace|class|struct|enum|union)\b")
LAMBDA = re.compile(r"\]\s*(\([^)]*\))?[^{]*$")


def blank(text):
    """The text with comments and string/char literals replaced by spaces (newlines kept)."""
    token = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'', re.S)
    return token.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def opens_function(head):
    head = head.strip()
    last_line = head.split("\n")[-1].strip()
    return (")" in head and not CONTROL.match(last_line) and not TYPE.search(head) and not head.endswith("=")
            and not LAMBDA.search(head))


def functions(path):
    """(lines, first line, signature) of each function of one file."""
    text = blank(open(path, encoding="utf-8").read())
    found, stack, start = [], [], 0
    for i, c in enumerate(text):
        if c == "{":
            head = text[start:i]
            inside = any(kind == "fn" for kind, _, _ in stack)
            kind = "fn" if not inside and opens_function(head) else "block"
            first = text.count("\n", 0, start + len(head) - len(head.lstrip())) + 1
            stack.append((kind, first, " ".join(head.split())[-80:]))
            start = i + 1
        elif c == "}":
            if stack:
                kind, first, signature = stack.pop()
                if kind == "fn":
                    found.append((text.count("\n", 0, i) + 2 - first, first, signature))
            start = i + 1
        elif c == ";":
            start = i + 1
    return found


def sources(paths):
    """The files named, and the .cc/.h files under the directories named."""
    for path in paths:
        if not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            yield from (os.path.join(root, f) for f in sorted(files) if f.endswith((".cc", ".h")))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    long = sorted(((n, path, first, sig) for path in sources(args.paths) for n, first, sig in functions(path)
                   if n > args.limit), reverse=True)
    for n, path, first, sig in long:
        print(f"{path}:{first}: {n} lines: {sig}")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
