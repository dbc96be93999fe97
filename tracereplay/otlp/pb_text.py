"""OTLP protobuf whose text is not UTF-8, read with U+FFFD in place of what cannot be read.

Protobuf's string fields must hold UTF-8, and its parser refuses the whole message otherwise.
JavaScript's protobuf writer (protobuf.js, under OpenTelemetry JS's OTLP/protobuf exporters)
writes half of a UTF-16 surrogate pair on its own (a string cut inside an emoji) as three bytes
that are not UTF-8, so one cut string would lose every span of the request. When the parser
refuses a request, it is read again as a message of the same schema with every string field
declared ``bytes`` (a descriptor pool made once from the real one: the protobuf library does
all the parsing and writing); each such field is decoded, unreadable bytes and lone surrogates
becoming U+FFFD (``readable``), and the message is written and parsed again as itself.
A message the lenient parse refuses too is not protobuf of that schema: the first error stands.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message

M = TypeVar("M", bound=Message)


def parse(cls: type[M], data: bytes) -> M:
    """``cls.FromString(data)``, except that text that is not UTF-8 is read with U+FFFD in its
    place; ``DecodeError`` (the parser's own) when ``data`` is not a ``cls`` message."""
    try:
        return cls.FromString(data)
    except (DecodeError, UnicodeDecodeError) as error:  # the pure-Python parser: the latter
        err = error if isinstance(error, DecodeError) else DecodeError(str(error))
        lenient, strings = _lenient(cls.DESCRIPTOR.full_name)
        try:
            msg = lenient.FromString(data)
        except DecodeError:
            raise err from None
        _repair(msg, strings)
        return cls.FromString(msg.SerializeToString())


def readable(raw: bytes) -> bytes:
    """``raw`` as UTF-8: a UTF-16 pair written as two three-byte halves (CESU-8) joined, a lone
    half and any byte that is not UTF-8 made U+FFFD."""
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
    else:  # UTF-16's decoder joins the halves of a pair and makes a lone one U+FFFD
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.encode("utf-8")


@functools.cache
def _lenient(full_name: str) -> tuple[type[Message], frozenset[str]]:
    """The class of message ``full_name`` in a pool where every string field is ``bytes``, and
    the full names of those fields."""
    pool = descriptor_pool.DescriptorPool()
    strings: set[str] = set()
    default = descriptor_pool.Default()
    _add(pool, default.FindMessageTypeByName(full_name).file, strings, set())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name)), frozenset(
        strings
    )


def _add(pool: Any, file: FileDescriptor, strings: set[str], added: set[str]) -> None:
    if file.name in added:
        return
    added.add(file.name)
    for dependency in file.dependencies:
        _add(pool, dependency, strings, added)
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    prefix = f"{proto.package}." if proto.package else ""
    for message in proto.message_type:
        _strings_as_bytes(message, prefix, strings)
    pool.Add(proto)


def _strings_as_bytes(message: Any, prefix: str, strings: set[str]) -> None:
    name = prefix + message.name
    for field in message.field:
        if field.type == FieldDescriptor.TYPE_STRING:
            field.type = FieldDescriptor.TYPE_BYTES
            strings.add(f"{name}.{field.name}")
    for nested in message.nested_type:
        _strings_as_bytes(nested, name + ".", strings)


def _repair(msg: Message, strings: frozenset[str]) -> None:
    """Every former string field of ``msg``, at any depth, as readable UTF-8."""
    for field, value in msg.ListFields():
        if field.full_name in strings:
            if _repeated(field):
                fixed = [readable(v) for v in value]
                del value[:]
                value.extend(fixed)
            else:
                setattr(msg, field.name, readable(value))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if _repeated(field):
                for item in value:
                    _repair(item, strings)
            else:
                _repair(value, strings)


def _repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf 6.31 and later; label before
    return bool(repeated) if repeated is not None else field.label == FieldDescriptor.LABEL_REPEATED
