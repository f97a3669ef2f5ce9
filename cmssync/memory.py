"""Memory held per object on a large site: one object for equal immutable parts, and freed memory given back.

pydantic gives every model instance a set of the field names it was given (``__pydantic_fields_set__``, 216 bytes
even for one name); a site of 10,000 pages holds some 150,000 of them (the page specs with their blocks, the
state's records), nearly all equal. A frozen model never changes its set in place (pydantic refuses the assignment
first, and a copy gets a set of its own), so equal sets can be one object: :func:`share_fields_set`, applied when a
model is validated or unpickled (:class:`SharedFieldsModel`, which also pickles a model as its values in the class's
field order, so that an unpickled model's dict has the class's own field names as keys, not a copy of each name per
pickled file: the parse cache's form of a page spec). :func:`shared` does the same for any equal hashable
immutable values (the state's area shapes: ten strings in six tuples a page, all alike). Both tables hold one entry
per distinct value, which a site has few of, not one per object; a long-lived process (the daemon) that has seen
more than :data:`MAX_DISTINCT` of them starts its table anew (what holds the old objects keeps them).

:func:`give_back_freed_memory`: loading the content and the state frees a working set as large as what they keep
(the parse cache's entries, the files' texts, the state's JSON document). The C allocator keeps such memory for later
``malloc`` calls, but Python's objects come from arenas of their own, so the rest of a run could not reuse it and
the process's peak grew by it; glibc's ``malloc_trim`` returns it to the system (a few milliseconds).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Hashable
from typing import Any, Self, TypeVar

from pydantic import BaseModel, model_validator

_FIELDS_SETS: dict[frozenset[str], set[str]] = {}
_VALUES: dict[Hashable, Any] = {}

MAX_DISTINCT = 65_536
T = TypeVar("T", bound=Hashable)


def shared(value: T) -> T:
    """The one object equal to the hashable, immutable ``value`` (``value`` itself the first time)."""
    if len(_VALUES) >= MAX_DISTINCT and value not in _VALUES:
        _VALUES.clear()
    found: T = _VALUES.setdefault(value, value)
    return found


def share_fields_set(model: BaseModel) -> None:
    """Give the frozen ``model`` the one set of field names equal to its own."""
    names = model.__pydantic_fields_set__
    key = frozenset(names)
    if len(_FIELDS_SETS) >= MAX_DISTINCT and key not in _FIELDS_SETS:
        _FIELDS_SETS.clear()
    found = _FIELDS_SETS.setdefault(key, names)
    if found is not names:
        object.__setattr__(model, "__pydantic_fields_set__", found)


class SharedFieldsModel(BaseModel):
    """A frozen model whose set of given field names is shared with its equals (see the module docstring)."""

    @model_validator(mode="after")
    def _share_fields_set(self) -> Self:
        share_fields_set(self)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its field values in the class's order, its set of given fields as a bit mask and its private
        values: unpickled, its dict's keys are the class's own field names and its set is the shared one, where
        pydantic's form gave every pickled file its own copy of every field name (~1 KiB a page spec)."""
        cls = type(self)
        names = _field_names(cls)
        values = self.__dict__
        given = self.__pydantic_fields_set__
        if self.__pydantic_extra__ or values.keys() != set(names) or not given <= values.keys():
            return _restored_state, (cls, self.__getstate__())  # not a plain validated model: pydantic's form
        mask = sum(1 << index for index, name in enumerate(names) if name in given)
        return _restored, (cls, tuple(values[name] for name in names), mask, self.__pydantic_private__)

    def __setstate__(self, state: dict[Any, Any]) -> None:
        super().__setstate__(state)
        share_fields_set(self)


@functools.cache
def _field_names(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(cls.model_fields)


@functools.cache
def _given(cls: type[BaseModel], mask: int) -> set[str]:
    names = frozenset(name for index, name in enumerate(_field_names(cls)) if mask >> index & 1)
    return _FIELDS_SETS.setdefault(names, set(names))


def _restored_state(cls: type[SharedFieldsModel], state: dict[Any, Any]) -> SharedFieldsModel:
    model = cls.__new__(cls)
    model.__setstate__(state)
    return model


def _restored(cls: type[SharedFieldsModel], values: tuple[Any, ...], mask: int, private: Any) -> SharedFieldsModel:
    model = cls.__new__(cls)
    names = _field_names(cls)
    object.__setattr__(model, "__dict__", dict(zip(names, values, strict=True)))
    object.__setattr__(model, "__pydantic_fields_set__", _given(cls, mask))
    object.__setattr__(model, "__pydantic_extra__", None)
    if isinstance(private, dict):  # the class's own names as keys, as for the field values
        private = {name: private[name] for name in cls.__private_attributes__ if name in private}
    object.__setattr__(model, "__pydantic_private__", private)
    return model


def give_back_freed_memory() -> None:
    """Return the C allocator's free memory to the system (glibc; elsewhere nothing)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim  # the process's own symbols: libc's
    except (OSError, AttributeError, TypeError):  # not glibc (musl, macOS): nothing to do
        return None
    return trim
