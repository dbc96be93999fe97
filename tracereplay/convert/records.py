"""Build the run models without re-validating what the converter already made well-typed.

``construct`` is ``model_construct`` for a call that passes every field: the same object (same
``__dict__``, fields set, no extra, no private state), without ``model_construct``'s per-field
alias and default handling, which costs more than the rest of a small trace's conversion.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from tracereplay.models.run import AgentResult, Document, LlmCall, Run, ToolCallRecord

M = TypeVar("M", bound=BaseModel)

_setattr = object.__setattr__
_PLAIN = {
    cls
    for cls in (AgentResult, Document, LlmCall, Run, ToolCallRecord)
    if not cls.__pydantic_post_init__ and not cls.__private_attributes__
}


def construct(cls: type[M], **values: Any) -> M:
    """An instance of ``cls`` from ``values``, which must hold every field, already valid."""
    if cls not in _PLAIN:
        return cls.model_construct(**values)
    model = cls.__new__(cls)
    _setattr(model, "__dict__", values)
    _setattr(model, "__pydantic_fields_set__", set(values))
    _setattr(model, "__pydantic_extra__", None)
    _setattr(model, "__pydantic_private__", None)
    return model
