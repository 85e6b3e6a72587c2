"""A record behaves as the frozen dataclass it stands for: the same class written both ways, side by side."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from tui.records import record


def _secret_factory() -> list[str]:
    return ["fresh"]


@dataclasses.dataclass(frozen=True)
class AsDataclass:
    name: str
    interval: float = 10.0
    tags: tuple[str, ...] = ()
    items: list[str] = dataclasses.field(default_factory=_secret_factory)

    @property
    def slow(self) -> bool:
        return self.interval > 30


@record
class AsRecord:
    name: str
    interval: float = 10.0
    tags: tuple[str, ...] = ()
    items: list[str] = dataclasses.field(default_factory=_secret_factory)

    @property
    def slow(self) -> bool:
        return self.interval > 30


@record
class Hidden:
    value: str | None = None
    origin: str = "none"

    def __repr__(self) -> str:
        return f"Hidden(origin={self.origin!r})"


@record
class Outer:
    name: str
    inner: Hidden = dataclasses.field(default_factory=Hidden)


def _pair(*args: object, **kwargs: object) -> tuple[AsDataclass, AsRecord]:
    return AsDataclass(*args, **kwargs), AsRecord(*args, **kwargs)  # type: ignore[arg-type]


def _repr_of(obj: object) -> str:
    return repr(obj).replace("AsDataclass", "X").replace("AsRecord", "X")


@pytest.mark.parametrize("args, kwargs", [
    (("a",), {}),
    (("a", 30.5), {}),
    (("a", 1.0, ("x", "y"), ["z"]), {}),
    ((), {"name": "a", "tags": ("t",)}),
    (("a",), {"items": []}),
])
def test_construction_repr_and_values_match_the_dataclass(args: tuple, kwargs: dict) -> None:
    d, r = _pair(*args, **kwargs)
    assert _repr_of(d) == _repr_of(r)
    assert dataclasses.asdict(d) == dataclasses.asdict(r)
    assert [f.name for f in dataclasses.fields(d)] == [f.name for f in dataclasses.fields(r)]
    assert d.slow == r.slow


def test_a_default_factory_runs_for_every_instance() -> None:
    a, b = AsRecord("a"), AsRecord("b")
    assert a.items == ["fresh"] and a.items is not b.items
    assert Outer("x").inner == Hidden() and Outer("x").inner is not Outer("y").inner
    assert not hasattr(AsRecord, "items")  # a Field without a default leaves no class attribute, as dataclass does


@pytest.mark.parametrize("call", [
    lambda cls: cls(),  # missing the required field
    lambda cls: cls("a", 1.0, (), [], "extra"),  # too many positional
    lambda cls: cls("a", name="b"),  # twice
    lambda cls: cls("a", colour="red"),  # unknown
])
def test_the_same_calls_are_refused(call: object) -> None:
    with pytest.raises(TypeError):
        call(AsDataclass)  # type: ignore[operator]
    with pytest.raises(TypeError):
        call(AsRecord)  # type: ignore[operator]


def test_frozen() -> None:
    r = AsRecord("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.other = 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del r.name  # type: ignore[misc]
    assert r.name == "a"


def test_equality_and_hash_by_value_and_class() -> None:
    assert AsRecord("a", 2.0, ("t",)) == AsRecord("a", 2.0, ("t",))
    assert AsRecord("a") != AsRecord("b")
    assert AsRecord("a", tags=("x",)) != AsRecord("a", tags=("y",))
    assert AsRecord("a") != AsDataclass("a")  # another class, same values: not equal, as between dataclasses
    assert hash(Hidden("s", "env")) == hash(Hidden("s", "env"))
    assert len({Hidden("s", "env"), Hidden("s", "env"), Hidden("t", "env")}) == 2
    with pytest.raises(TypeError):
        hash(AsRecord("a"))  # a list field: unhashable, as the dataclass is
    with pytest.raises(TypeError):
        hash(AsDataclass("a"))


def test_replace_fields_and_is_dataclass() -> None:
    r = AsRecord("a", 5.0, ("t",))
    moved = dataclasses.replace(r, interval=60.0)
    assert moved == AsRecord("a", 60.0, ("t",), ["fresh"]) and moved.slow and r.interval == 5.0
    assert dataclasses.is_dataclass(r) and dataclasses.is_dataclass(AsRecord)
    assert [f.default for f in dataclasses.fields(AsRecord)][1:3] == [10.0, ()]
    assert dataclasses.replace(Outer("x"), name="y") == Outer("y")


def test_a_class_of_its_own_repr_keeps_it() -> None:
    assert repr(Hidden("hunter2", "file")) == "Hidden(origin='file')"
    assert "hunter2" not in repr(Outer("x", Hidden("hunter2", "file")))


def test_pickles() -> None:
    r = AsRecord("a", 2.0, ("t",))
    assert pickle.loads(pickle.dumps(r)) == r


def test_a_required_field_after_a_default_is_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):
        @record
        class Wrong:
            a: int = 1
            b: int  # type: ignore[misc]
