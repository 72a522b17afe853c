"""Plain record classes for the objects every command builds (results, converted inputs).

Why not ``dataclasses``: it costs a process about 25 ms before any work (its import pulls in
``inspect``, ``ast`` and ``tokenize``; each class compiles five or six generated methods with
``exec``), a quarter of a 1,000-request ``ssdkit run``. These records behave as the dataclasses
they replace for what ssdkit uses: fields in annotation order (base records' first),
defaults and default factories, ``frozen``, ``eq`` (with a field hash for frozen records),
``repr`` per field; ``fields``, ``asdict`` and ``replace`` work as their ``dataclasses``
namesakes. Methods are shared closures over the field list, not generated code.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MISSING", "Field", "FrozenInstanceError", "asdict", "field", "fields", "is_record", "record", "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: No default given.
MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class Field:
    """One field: its name, annotation (a string: annotations are postponed), default or
    default factory, and whether it takes part in ``repr``, ``==`` and ``hash``."""

    __slots__ = ("compare", "default", "default_factory", "hash", "name", "repr", "type")

    def __init__(
        self,
        *,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        repr: bool = True,
        hash: bool | None = None,
        compare: bool = True,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("a field takes a default or a default_factory, not both")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.hash = hash
        self.compare = compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r})"


def field(**options: Any) -> Any:
    """A field with options (``default``, ``default_factory``, ``repr``, ``hash``,
    ``compare``), as ``dataclasses.field``."""
    return Field(**options)


def _class_fields(cls: type) -> tuple[Field, ...]:
    out: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            out[f.name] = f
    # The class's own annotations (inspect.get_annotations would import inspect).
    for name, ann in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if isinstance(ann, str) and ann.startswith("ClassVar"):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name, f.type = name, ann
        if isinstance(value, Field):
            # The class attribute is the default itself, as dataclasses leaves it.
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        out[name] = f
    seen_default = False
    for f in out.values():
        has = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has:
            raise TypeError(f"{cls.__name__}: field `{f.name}` without a default follows one with a default")
        seen_default |= has
    return tuple(out.values())


def record(cls: type | None = None, /, *, frozen: bool = False, eq: bool = True) -> Any:
    """Class decorator: a record of the class's annotated fields (``@record`` or
    ``@record(frozen=True, eq=False)``)."""

    def wrap(cls: type) -> type:
        fs = _class_fields(cls)
        n = len(fs)
        setter = object.__setattr__

        def __init__(self: Any, *args: Any, **kw: Any) -> None:
            if len(args) > n:
                raise TypeError(f"{cls.__name__}() takes {n} positional arguments but {len(args)} were given")
            for i, f in enumerate(fs):
                if i < len(args):
                    if f.name in kw:
                        raise TypeError(f"{cls.__name__}() got multiple values for argument '{f.name}'")
                    v = args[i]
                elif f.name in kw:
                    v = kw.pop(f.name)
                elif f.default is not MISSING:
                    v = f.default
                elif f.default_factory is not MISSING:
                    v = f.default_factory()
                else:
                    raise TypeError(f"{cls.__name__}() missing required argument: '{f.name}'")
                setter(self, f.name, v)
            if kw:
                raise TypeError(f"{cls.__name__}() got an unexpected keyword argument '{next(iter(kw))}'")
            post = getattr(self, "__post_init__", None)
            if post is not None:
                post()

        shown = tuple(f.name for f in fs if f.repr)

        def __repr__(self: Any) -> str:
            return f"{type(self).__qualname__}({', '.join(f'{k}={getattr(self, k)!r}' for k in shown)})"

        cls.__init__ = __init__  # type: ignore[misc]
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = __repr__  # type: ignore[method-assign]
        if eq:
            compared = tuple(f.name for f in fs if f.compare)

            def __eq__(self: Any, other: Any) -> Any:
                if other.__class__ is not self.__class__:
                    return NotImplemented
                return all(getattr(self, k) == getattr(other, k) for k in compared)

            cls.__eq__ = __eq__  # type: ignore[method-assign]
            if frozen:
                hashed = tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash))

                def __hash__(self: Any) -> int:
                    return hash(tuple(getattr(self, k) for k in hashed))

                cls.__hash__ = __hash__  # type: ignore[method-assign]
            else:
                cls.__hash__ = None  # type: ignore[assignment]
        if frozen:

            def __setattr__(self: Any, name: str, value: Any) -> None:
                raise FrozenInstanceError(f"cannot assign to field '{name}'")

            def __delattr__(self: Any, name: str) -> None:
                raise FrozenInstanceError(f"cannot delete field '{name}'")

            cls.__setattr__ = __setattr__  # type: ignore[method-assign]
            cls.__delattr__ = __delattr__  # type: ignore[method-assign]
        cls.__record_fields__ = fs  # type: ignore[attr-defined]
        cls.__match_args__ = tuple(f.name for f in fs)  # type: ignore[attr-defined]
        return cls

    return wrap if cls is None else wrap(cls)


def is_record(obj: Any) -> bool:
    """Whether ``obj`` is a record class or instance."""
    return hasattr(obj if isinstance(obj, type) else type(obj), "__record_fields__")


def fields(obj: Any) -> tuple[Field, ...]:
    """The fields of a record class or instance, in order."""
    try:
        return (obj if isinstance(obj, type) else type(obj)).__record_fields__
    except AttributeError:
        raise TypeError(f"{obj!r} is not a record") from None


def _copy(v: Any) -> Any:
    if is_record(v) and not isinstance(v, type):
        return {f.name: _copy(getattr(v, f.name)) for f in fields(v)}
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    if isinstance(v, dict):
        return {_copy(k): _copy(x) for k, x in v.items()}
    return v


def asdict(obj: Any) -> dict[str, Any]:
    """A record as a dict, records within turned into dicts and containers copied, as
    ``dataclasses.asdict``."""
    if not is_record(obj) or isinstance(obj, type):
        raise TypeError("asdict() should be called on record instances")
    return _copy(obj)


def replace(obj: Any, /, **changes: Any) -> Any:
    """A copy of the record ``obj`` with ``changes``, as ``dataclasses.replace``."""
    for f in fields(obj):
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)
