"""Pass options and pipeline text, read as mlir-opt reads them (one parser for every form).

    --mcu-plan-memory=ram-bytes=65536 overlap=false      (the shell form of "...")
    --pass-pipeline='builtin.module(cse, mcu-attach-target{target=cortex-m4}, mcu-plan-memory{overlap=false})'

Options are `key=value` separated by spaces; a value may be quoted ("a b", 'a b': the quotes are
removed) or bracketed ({...}, [...], (...): kept whole, spaces and commas included). A key alone
means `key=true`.
"""

from __future__ import annotations

_OPEN, _CLOSE = "{[(", "}])"


class PipelineSyntaxError(ValueError):
    """Option or pipeline text that does not parse (unbalanced quote or bracket, empty key)."""


def _scan(text: str):
    """(index, char, depth, quoted) for every character; raises on unbalanced quotes / brackets."""
    depth, quote, stack = 0, None, []
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
                yield i, ch, depth, True
                continue
            yield i, ch, depth, True
            continue
        if ch in "\"'":
            quote = ch
            yield i, ch, depth, True
            continue
        if ch in _OPEN:
            stack.append(_CLOSE[_OPEN.index(ch)])
            depth += 1
        elif ch in _CLOSE:
            if not stack or stack.pop() != ch:
                raise PipelineSyntaxError(f"unbalanced '{ch}' at character {i + 1} of '{text}'")
            depth -= 1
            yield i, ch, depth, False
            continue
        yield i, ch, depth - (1 if ch in _OPEN else 0), False
    if quote:
        raise PipelineSyntaxError(f"unterminated {quote} quote in '{text}'")
    if stack:
        raise PipelineSyntaxError(f"unbalanced brackets in '{text}' (missing '{stack[-1]}')")


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """`text` cut at `sep` outside quotes and brackets, each part stripped (empty parts dropped)."""
    parts, start = [], 0
    for i, ch, depth, quoted in _scan(text):
        if ch == sep and depth == 0 and not quoted:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (quotes respected)."""
    base = None
    for i, ch, depth, quoted in _scan(text[start:]):
        if base is None:
            base = depth
            continue
        if not quoted and ch in _CLOSE and depth == base:
            return start + i
    raise PipelineSyntaxError(f"unbalanced brackets in '{text}'")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def split_options(text: str) -> list[tuple[str, str]]:
    """[(key, value)] of `a=1 b="x y" c={p q}`; a key without `=` is `true`."""
    out = []
    for part in split_top_level(text.strip(), " "):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not key:
            raise PipelineSyntaxError(f"option '{part}' has no name")
        out.append((key, _unquote(value.strip()) if sep else "true"))
    return out
