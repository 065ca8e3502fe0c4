"""IPython's clean-up of a cell before it reads any of its syntax (IPython 9.18's inputtransformer2:
TransformerManager.cleanup_transforms, then cell_magic's reading of a `%%` line), done as IPython does it, step by
step, in linear time: the grader's reading of what a cell binds (program.read_as_python) starts from it, so that a
cell Jupyter dedents or unprompts binds there what it binds in Jupyter. IPython's own code is never run in the
grader's process: its doctest prompt stripper copies each line's text before every triple quote on it (quadratic on
a line of quotes). Lines are split and joined as IPython does (str.splitlines, endings kept); leading blank lines
stay, as empty ones.
"""
from __future__ import annotations

import re
from textwrap import dedent

_TRIPLE = re.compile(r"(?<!\\)(\"\"\"|''')")
_DOCTEST_START = re.compile(r"^\s*>>>")
_DOCTEST_PS1 = re.compile(r"^\s*>>>[ \t]?")
_DOCTEST_PS2 = re.compile(r"^\s*\.\.\.[ \t]?")
_STRING_PREFIX = re.compile(r"(?i)[rubf]*")
# ipython_prompt: `In [1]: ` (after a vi mode's `[nav] `/`[ins] `), or a continuation's `...: `
_IPYTHON_PROMPT = re.compile(r"^(?:(?:(?:\[nav\]|\[ins\])? )?In \[\d+\]: |\s*\.{3,}: ?)")


def cleaned(cell: str) -> str:
    """`cell` as IPython's clean-up leaves it: leading blank lines (made empty here), the rest dedented as a
    whole, then stripped of `>>>`/`...` prompts (doctest) and of `In [n]:` prompts."""
    lines = (cell if cell.endswith("\n") else cell + "\n").splitlines(keepends=True)
    first = next((at for at, line in enumerate(lines) if line and not line.isspace()), len(lines))
    rest = _lines(dedent("".join(lines[first:])))
    return "\n" * first + "".join(_ipython_prompt(_classic_prompt(rest)))


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def cell_magic(first_line: str) -> tuple[str, str] | None:
    """(name, line) of the cell magic a cleaned cell's first line opens, as cell_magic splits it (None for none;
    `%%time?` is help)."""
    if not first_line.startswith("%%") or re.match(r"%%\w+\?", first_line):
        return None
    name, _, line = first_line[2:].rstrip().partition(" ")
    return name, line


def _classic_prompt(lines: list[str]) -> list[str]:
    """PromptStripper(doctest=True): if a line outside a docstring-like triple-quoted string begins with `>>>`,
    each such line loses its `>>>`/`...` prompt, and each run of them holding a stripped line is dedented."""
    if not any(_DOCTEST_START.match(line) for line in lines):  # most cells: no string to mask
        return lines
    inside = _triple_quote_mask(lines)
    if not any(not masked and _DOCTEST_START.match(line) for line, masked in zip(lines, inside)):
        return lines
    out, stripped = [], []
    for line, masked in zip(lines, inside):
        prompt = None if masked else _DOCTEST_PS1.match(line) or _DOCTEST_PS2.match(line)
        out.append(line[prompt.end():] if prompt else line)
        stripped.append(bool(prompt))
    result, at = [], 0
    while at < len(out):
        end = at
        while end < len(out) and inside[end] == inside[at]:
            end += 1
        run = out[at:end]
        result.extend(_lines(dedent("".join(run))) if not inside[at] and any(stripped[at:end]) else run)
        at = end
    return result


def _triple_quote_mask(lines: list[str]) -> list[bool]:
    """PromptStripper._triple_quote_mask: for each line, whether it is in (or opens) a triple-quoted string whose
    prompts are kept (a string standing alone, as a docstring does). Only a line's first triple quote can open
    such a string (before any later one stands a quote), so only its text is read: linear."""
    mask: list[bool] = []
    quote: str | None = None
    preserve = seen_prompt = False
    for line in lines:
        mask.append(quote is not None and preserve)
        for number, found in enumerate(_TRIPLE.finditer(line)):
            if quote is None:
                quote, preserve = found.group(1), False
                if number == 0:
                    before = line[:found.start()]
                    unprompted = _DOCTEST_PS2.sub("", _DOCTEST_PS1.sub("", before, count=1), count=1)
                    prompted_code = unprompted != before and seen_prompt
                    preserve = not prompted_code and _STRING_PREFIX.fullmatch(unprompted.strip()) is not None
                mask[-1] = preserve
            elif quote == found.group(1):
                quote, preserve = None, False
        seen_prompt = seen_prompt or bool(_DOCTEST_START.match(line))
    return mask


def _ipython_prompt(lines: list[str]) -> list[str]:
    """PromptStripper(ipython_prompt): a prompt on the first or second line strips one from every line."""
    if not lines or not (_IPYTHON_PROMPT.match(lines[0]) or len(lines) > 1 and _IPYTHON_PROMPT.match(lines[1])):
        return lines
    return [_IPYTHON_PROMPT.sub("", line, count=1) for line in lines]
