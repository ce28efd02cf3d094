"""JoinedTexts: its joined text is always what joining its texts anew gives, whatever came before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.hub.joined import JoinedTexts

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, st.sampled_from(["", "x", "yy", "z.z"])),
        st.tuples(st.just("del"), KEYS, st.just("")),
        st.tuples(st.just("read"), KEYS, st.just("")),
    ),
    max_size=40,
)


@given(STEPS)
def test_the_joined_text_follows_every_change(steps: list[tuple[str, str, str]]) -> None:
    texts = JoinedTexts("/")
    model: dict[str, str] = {}
    for step, key, text in steps:
        if step == "set":
            texts[key] = text
            model[key] = text
        elif step == "del" and key in model:
            del texts[key]
            del model[key]
        assert texts.joined == "/".join(filter(None, model.values()))
        assert list(texts.items()) == list(model.items())


def test_a_text_added_at_the_end_extends_the_joined_text_without_joining_again() -> None:
    texts = JoinedTexts(".")
    texts["a"], texts["b"] = "a", "b"
    assert texts.joined == "a.b"
    texts["c"] = "c"
    assert texts._joined == "a.b.c"  # kept up to date, not left for a join of every text when read


def test_a_change_in_the_middle_keeps_its_place() -> None:
    texts = JoinedTexts("/")
    texts["a"], texts["b"], texts["c"] = "1", "2", "3"
    texts["b"] = "4"
    assert texts.joined == "1/4/3"
    texts["b"] = ""
    assert texts.joined == "1/3"
