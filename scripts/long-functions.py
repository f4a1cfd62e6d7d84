#!/usr/bin/env python3
"""Lists the C++ functions in src/ whose body is over 80 lines.

A long function is one a reader cannot hold in their head; the house rule is
that none is longer than about 80 lines unless a reason is stated beside it.
A reason is a comment containing `long:` on one of the 3 lines before the
function's signature, for example

    // long: one row per option of `enroot start`, read as a table.
    void startOptions() {

Each function over the limit without one is printed as `path:line name lines`
(line: where its name stands; lines: from the first line of its signature to
its closing brace), and the script exits 1 if it printed any.

Usage: scripts/long-functions.py [--max N] [PATH...]   (default: src)

It matches braces, not a C++ grammar: braces in strings, character literals,
comments and raw strings are passed over, a lambda counts as part of the
function it is written in, and a brace at namespace or class level counts as
a function body when what stands before it reads like a signature.
"""

import argparse
import os
import re
import sys

MAX_LINES = 80
REASON_LINES = 3
EXTENSIONS = (".cc", ".h")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Words that can stand right before a `(` without naming a function.
NOT_A_NAME = {
    "alignas", "alignof", "decltype", "sizeof", "noexcept", "static_assert",
    "if", "for", "while", "switch", "catch", "return", "throw", "typeid",
    "__attribute__", "__declspec", "requires",
}
ACCESS_LABEL = re.compile(r"\b(public|private|protected)\s*:(?!:)")
QUALIFIED_NAME = re.compile(r"(~?[A-Za-z_][A-Za-z0-9_]*(?:\s*::\s*~?"
                            r"[A-Za-z_][A-Za-z0-9_]*)*)\s*$")
# A comment that states why a function is long.
REASON = re.compile(r"(//|/\*).*\blong:")
# Scopes whose braces hold declarations, and so can hold functions.
CONTAINERS = ("namespace", "class", "struct", "union", "extern")


def blank_literals(text):
    """Returns `text` with comments and the insides of literals as spaces.

    Newlines are kept, so a position's line number is the same in both.
    """
    out = []
    i, n = 0, len(text)

    def keep_newlines(chunk):
        return "".join(c if c == "\n" else " " for c in chunk)

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c == "/" and nxt == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(keep_newlines(text[i:end]))
            i = end
        elif c == '"':
            raw = re.search(r"(?:\b|^)(?:u8|u|U|L)?R$", text[max(0, i - 3):i])
            if raw:
                match = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if match:
                    close = ")" + match.group(1) + '"'
                    end = text.find(close, i + len(match.group(0)))
                    end = n if end < 0 else end + len(close)
                    out.append('"' + keep_newlines(text[i + 1:end - 1]) + '"')
                    i = end
                    continue
            end = skip_quoted(text, i, '"')
            out.append('"' + keep_newlines(text[i + 1:end - 1]) + '"')
            i = end
        elif c == "'" and not is_digit_separator(text, i):
            end = skip_quoted(text, i, "'")
            out.append("'" + keep_newlines(text[i + 1:end - 1]) + "'")
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_quoted(text, start, quote):
    """Returns the position just after the literal that opens at `start`."""
    i, n = start + 1, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text[i] == quote or text[i] == "\n":
            return i + 1
        else:
            i += 1
    return n


def is_digit_separator(text, i):
    """Whether the `'` at `i` separates digits, as in `1'000'000`."""
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if not (before.isalnum() and after.isalnum()):
        return False
    word = re.search(r"[A-Za-z0-9_']*$", text[:i]).group(0)
    return word[:1].isdigit()


def blank_preprocessor(text):
    """Blanks preprocessor lines (with their continuations)."""
    lines = text.split("\n")
    continued = False
    for k, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[k] = " " * len(line)
    return "\n".join(lines)


def blank(match):
    return " " * len(match.group(0))


def strip_template_prefix(header):
    """Blanks a leading `template <...>` (nested angles included)."""
    start = 0
    while True:
        match = re.compile(r"\s*template\s*<").match(header, start)
        if not match:
            return header
        depth, i = 1, match.end()
        while i < len(header) and depth:
            depth += {"<": 1, ">": -1}.get(header[i], 0)
            i += 1
        header = header[:start] + " " * (i - start) + header[i:]
        start = i


def plain_header(header):
    """`header` with access labels, a template prefix and attributes blanked.

    Every position stays where it was.
    """
    header = ACCESS_LABEL.sub(blank, header)
    header = strip_template_prefix(header)
    return re.sub(r"\[\[.*?\]\]", blank, header)


def function_name(header):
    """The name a brace's header declares a function by, and where it stands.

    `header` is the code between the previous `;`, `{` or `}` and the brace
    (blanked by `plain_header`). Returns (None, 0) for anything else.
    """
    words = header.split()
    if not words or words[0] in CONTAINERS + ("enum",):
        return None, 0
    operator = re.search(r"\boperator\b\s*(\(\)|[^\s(]+)\s*\(", header)
    if operator:
        prefix = re.search(r"[A-Za-z0-9_:~<>]*$", header[:operator.start()])
        return prefix.group(0) + "operator" + operator.group(1), prefix.start()
    # A variable with an initializer, unless it is a lambda.
    depth = 0
    for k, c in enumerate(header):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "=" and depth == 0 and header[k - 1:k] not in "=!<>" \
                and header[k + 1:k + 2] != "=":
            variable = list(IDENT.finditer(header[:k]))
            if variable and header[k + 1:].lstrip().startswith("["):
                return variable[-1].group(0), variable[-1].start()
            return None, 0
    angle = 0
    for k, c in enumerate(header):
        if c == "<":
            angle += 1
        elif c == ">":
            angle = max(0, angle - 1)
        elif c == "(" and angle == 0:
            match = QUALIFIED_NAME.search(header[:k])
            if not match:
                return None, 0
            name = re.sub(r"\s+", "", match.group(1))
            if name.split("::")[-1] in NOT_A_NAME:
                return None, 0
            return name, match.start()
    return None, 0


def long_functions(path, max_lines):
    """Yields (line, name, lines, has_reason) for each function over the limit."""
    with open(path, encoding="utf-8", errors="replace") as f:
        original = f.read()
    code = blank_preprocessor(blank_literals(original))
    source_lines = original.split("\n")

    def line_of(pos):
        return code.count("\n", 0, pos) + 1

    # Each entry of the stack: whether the scope holds declarations
    # (namespace, class, file) that can themselves hold functions.
    stack = [True]
    header_start = 0
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "{" and stack[-1]:
            header = plain_header(code[header_start:i])
            name, name_pos = function_name(header)
            if name is None:
                words = header.split()
                if words and words[0] in CONTAINERS:
                    stack.append(True)
                    i += 1
                    header_start = i
                    continue
                # Data (an enum, an initializer): skip to its closing brace.
                i = matching_brace(code, i)
                header_start = i
                continue
            end = matching_brace(code, i)
            first = len(header) - len(header.lstrip())
            signature_line = line_of(header_start + first)
            lines = line_of(end - 1) - signature_line + 1
            if lines > max_lines:
                before = source_lines[max(0, signature_line - 1 - REASON_LINES):
                                      signature_line - 1]
                has_reason = any(REASON.search(l) for l in before)
                yield line_of(header_start + name_pos), name, lines, has_reason
            i = end
            header_start = i
            continue
        if c == "}":
            if len(stack) > 1:
                stack.pop()
            i += 1
            header_start = i
            continue
        if c == ";" or (c == "{" and not stack[-1]):
            i += 1
            header_start = i
            continue
        i += 1


def matching_brace(code, i):
    """The position just after the brace that closes the one at `i`."""
    depth = 0
    n = len(code)
    while i < n:
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def sources(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(root, name)


def main():
    parser = argparse.ArgumentParser(
        description="Lists C++ functions whose body is over --max lines "
                    "without a `long:` comment before them.")
    parser.add_argument("--max", type=int, default=MAX_LINES,
                        help="the most lines a body may have (default %(default)s)")
    parser.add_argument("paths", nargs="*", default=["src"],
                        help="files or folders to read (default: src)")
    args = parser.parse_args()
    found = 0
    for path in sources(args.paths):
        for line, name, lines, has_reason in long_functions(path, args.max):
            if not has_reason:
                print(f"{path}:{line} {name} {lines}")
                found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
