"""`@record`: a frozen dataclass built without generating code.

`dataclasses.dataclass(frozen=True)` compiles six functions for every class (on Python 3.11 about 0.8 ms a
class): the config's sections and the other classes loaded before the first frame cost ~12 ms of start-up that
way. A record is a frozen dataclass for every purpose stacktop has: construction by position or keyword, with
defaults and `field(default_factory=...)`; immutability (`dataclasses.FrozenInstanceError`); equality and
hashing by value; the dataclass repr (a class's own `__repr__` is kept); and the `dataclasses` functions
(`fields`, `replace`, `asdict`, `is_dataclass`). Its `__init__` is generic: building one costs ~1.5 us more
than a dataclass's, so records are for classes built a few times or a few dozen times a poll (the config, the
source registry, observations, findings), not for the rows a poll builds by the ten thousand.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")
_MISSING: Any = dataclasses.MISSING


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar"))


def _fields_of(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The fields in definition order (inherited records' first), each a dataclasses.Field as dataclass makes
    them; a Field default on the class is replaced by its default value, or removed, as dataclass does."""
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(getattr(base, "__dataclass_fields__", {}))
    for name, annotation in inspect.get_annotations(cls).items():
        if _is_classvar(annotation):
            continue
        given = cls.__dict__.get(name, _MISSING)
        if isinstance(given, dataclasses.Field):
            made = given
            if not (made.init and made.repr and made.compare and made.hash is None):
                raise TypeError(f"{cls.__qualname__}.{name}: a record's field takes only default or default_factory")
            if made.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, made.default)
        else:
            made = dataclasses.field(default=given)
        made.name, made.type = name, annotation
        made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what fields() and replace() read
        fields[name] = made
    seen_default = ""
    for name, made in fields.items():
        if made.default is not _MISSING or made.default_factory is not _MISSING:
            seen_default = name
        elif seen_default:
            raise TypeError(f"{cls.__qualname__}: non-default argument {name!r} follows default argument "
                            f"{seen_default!r}")
    return fields


def _init(cls: type, fields: dict[str, dataclasses.Field[Any]]) -> Callable[..., None]:
    names = tuple(fields)
    defaults = {n: f.default for n, f in fields.items() if f.default is not _MISSING}
    factories = {n: f.default_factory for n, f in fields.items() if callable(f.default_factory)}
    post_init = getattr(cls, "__post_init__", None)
    where = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{where}.__init__() takes {len(names) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name in values:
                raise TypeError(f"{where}.__init__() got multiple values for argument {name!r}")
            if name not in fields:
                raise TypeError(f"{where}.__init__() got an unexpected keyword argument {name!r}")
            values[name] = value
        state = self.__dict__
        for name in names:
            if name in values:
                state[name] = values[name]
            elif name in defaults:
                state[name] = defaults[name]
            elif name in factories:
                state[name] = factories[name]()
            else:
                raise TypeError(f"{where}.__init__() missing 1 required positional argument: {name!r}")
        if post_init is not None:
            post_init(self)

    return __init__


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: type[T]) -> type[T]:
    """Make `cls` a frozen dataclass (see the module's docstring)."""
    fields = _fields_of(cls)
    names = tuple(fields)

    def values(self: Any) -> tuple[Any, ...]:
        state = self.__dict__
        return tuple(state[name] for name in names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self: Any, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return values(self) == values(other)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(names, values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"

    made: dict[str, Any] = {"__init__": _init(cls, fields), "__setattr__": __setattr__,
                            "__delattr__": __delattr__, "__eq__": __eq__, "__hash__": __hash__,
                            "__repr__": __repr__, "__match_args__": names, "__dataclass_fields__": fields}
    for name, value in made.items():
        if name == "__repr__" and "__repr__" in cls.__dict__:
            continue  # the class's own (e.g. one that hides a secret)
        if callable(value):
            value.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, value)
    return cls
