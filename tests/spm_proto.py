"""Writing SentencePiece `ModelProto` bytes by hand (protobuf wire format), for test models."""

import struct


def varint(n: int) -> bytes:
  out = bytearray()
  while n >= 0x80:
    out.append(n & 0x7f | 0x80)
    n >>= 7
  out.append(n)
  return bytes(out)


def field_bytes(field: int, data) -> bytes:
  """A length-delimited field (a string or a nested message)."""
  data = data.encode("utf-8") if isinstance(data, str) else data
  return varint(field << 3 | 2) + varint(len(data)) + data


def field_int(field: int, value: int) -> bytes:
  return varint(field << 3) + varint(value)


def field_float(field: int, value: float) -> bytes:
  return varint(field << 3 | 5) + struct.pack("<f", value)
