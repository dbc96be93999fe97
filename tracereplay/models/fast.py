"""Building models from values already known to be valid, cheaper than ``model_construct``.

The converter builds a ``Run`` per agent run and scoring a ``ScoreResult`` per check, from values
they produced and already checked. In pydantic 2.x ``model_construct`` is pure
Python and costs more than validating; this does what its final lines do (set ``__dict__`` and
the fields set) for models with no private attributes and no post-init hook, and falls back to
``model_construct`` for any other model.

``build`` is the one place that writes pydantic's internals (the four ``BaseModel.__slots__``);
``tests/test_library_internals.py`` fails when a pydantic release changes them.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_set = object.__setattr__
_PLAIN: dict[type, bool] = {}


def _is_plain(cls: type[BaseModel]) -> bool:
    plain = _PLAIN.get(cls)
    if plain is None:
        plain = (
            not cls.__pydantic_post_init__
            and not cls.__private_attributes__
            and not cls.__pydantic_root_model__
        )
        _PLAIN[cls] = plain
    return plain


def build(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` unvalidated; ``values`` must name every field."""
    if not _is_plain(cls):
        return cls.model_construct(**values)
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def construct(cls: type[M], **values: Any) -> M:
    """``build`` with the values as keyword arguments."""
    return build(cls, values)
