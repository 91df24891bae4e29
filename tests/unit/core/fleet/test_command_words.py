"""A run's command given word by word reaches the host word for word; parallel's replacement
strings stay live, also inside a word."""

from __future__ import annotations

import shlex

import pytest

from gpu_companion.core.fleet.runs import command_from_words


def test_each_word_is_quoted_and_replacement_strings_stay():
    words = ["printf", "[%s]\\n", "two words", "{1}"]
    assert command_from_words(words) == "printf '[%s]\\n' 'two words' {1}"


@pytest.mark.parametrize(
    "word", ['a"b', "it's", "back\\slash", "$HOME", "`id`", "a;b", "", " lead", "*"]
)
def test_a_word_without_replacement_strings_reads_back_as_itself(word):
    assert shlex.split(command_from_words(["echo", word])) == ["echo", word]


@pytest.mark.parametrize(
    ("word", "template"),
    [
        ("pre{}post", "pre{}post"),
        ("out-{1}-{2}.txt", "out-{1}-{2}.txt"),
        ("{/.}", "{/.}"),
        ("a b{#}", "'a b'{#}"),
        ("{}.$x", "{}'.$x'"),
    ],
)
def test_replacement_strings_inside_a_word(word, template):
    assert command_from_words([word]) == template
