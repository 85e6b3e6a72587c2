"""One declaration per config key: `setting(...)` on a section record's field holds the key's default, bounds,
how it is read and the comment `config.example.toml` gives it; the field's name is the key and its annotation
the type. The reader (tui.config), its error lines and the example file (tui.config_example) all derive from it.

Adding a key is one field in its section record, e.g. in UIConfig:

    theme: str | None = setting(None, choices=("dark", "light"), example="dark", commented=True,
                                doc="The colour theme.")

then `stacktop config example > config.example.toml` writes it into the example file.
"""

from __future__ import annotations

import dataclasses
from typing import Any

MB = 1024 * 1024  # bytes in the MB of every `*_mb` key

_UNSET: Any = object()


def mb_bytes(megabytes: float) -> int:
    """A `*_mb` key's value in bytes: the one conversion (each record has a `*_bytes` property using it)."""
    return int(megabytes * MB)


@dataclasses.dataclass(frozen=True, slots=True)
class Bounds:
    """Inclusive bounds of a number key (NaN and inf are always refused), with the unit the error line names."""

    low: float
    high: float
    unit: str = "seconds"

    def describe(self) -> str:
        return f"between {self.low:g} and {self.high:g}" + (f" {self.unit}" if self.unit else "")


@dataclasses.dataclass(frozen=True, slots=True)
class Key:
    """How one key is read and shown. `read` names the reader for a value that is not plain (see tui.config);
    `doc` is the comment above the key in the example file, `example` the value written there (default: the
    default), `commented` writes it as `# key = value`; `example_toml` replaces the key's example lines whole
    (for a table or an array of tables); `names` are the TOML names that fill this one field (a password);
    `choices` the only values a string key takes."""

    doc: str = ""
    bounds: Bounds | None = None
    read: str = ""
    fix: str = ""
    schemes: tuple[str, ...] = ()
    example: Any = _UNSET
    commented: bool = False
    example_toml: str = ""
    names: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()


def setting(default: Any = None, *, factory: Any = None, doc: str = "", bounds: Bounds | None = None,
            read: str = "", fix: str = "", schemes: tuple[str, ...] = (), example: Any = _UNSET,
            commented: bool = False, example_toml: str = "", names: tuple[str, ...] = (),
            choices: tuple[str, ...] = ()) -> Any:
    """A record field declaring a config key (see the module's docstring)."""
    key = Key(doc=doc, bounds=bounds, read=read, fix=fix, schemes=schemes, example=example, commented=commented,
              example_toml=example_toml, names=names, choices=choices)
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"key": key})
    return dataclasses.field(default=default, metadata={"key": key})


def key_of(field: dataclasses.Field[Any]) -> Key:
    """The declaration of a section record's field (a plain field is a plain key)."""
    key = field.metadata.get("key")
    return key if isinstance(key, Key) else Key()


def declared(cls: type) -> list[tuple[dataclasses.Field[Any], Key]]:
    """The config keys of a section record, in declaration order."""
    return [(f, key_of(f)) for f in dataclasses.fields(cls)]


def toml_names(cls: type) -> set[str]:
    """Every key name a section of this record accepts."""
    return {name for f, key in declared(cls) for name in (key.names or (f.name,))}


def default_of(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


def example_of(field: dataclasses.Field[Any], key: Key) -> Any:
    return default_of(field) if key.example is _UNSET else key.example
