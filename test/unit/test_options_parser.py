"""Pass options and pipeline text, as mlir-opt reads them."""

import pytest

from mcu_mlir.passes.options_parser import PipelineSyntaxError, matching, split_options, split_top_level


def test_options_with_quotes_brackets_and_bare_keys():
    assert split_options('a=1 b="x y" c=\'p, q\' d={m,n} e=[1, 2] flag') == [
        ("a", "1"), ("b", "x y"), ("c", "p, q"), ("d", "{m,n}"), ("e", "[1, 2]"), ("flag", "true")]


def test_pipeline_elements_split_outside_quotes_and_brackets():
    text = 'func.func(cse, canonicalize{max-iterations=2}), p{a="x, y)" b=1}, q'
    assert split_top_level(text) == ["func.func(cse, canonicalize{max-iterations=2})", 'p{a="x, y)" b=1}', "q"]
    assert matching('p{a="}" b=1}', 1) == 11


@pytest.mark.parametrize("text, message", [
    ('a="x', 'unterminated " quote'),
    ("a={x", "missing '}'"),
    ("a=x}", "unbalanced '}'"),
    ("a=(x]", "unbalanced ']'"),
    ("=x", "option '=x' has no name"),
])
def test_malformed_text_is_an_error(text, message):
    with pytest.raises(PipelineSyntaxError, match=message.replace("(", r"\(").replace("[", r"\[")):
        split_options(text)
