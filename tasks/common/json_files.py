"""Reading a JSON file with errors that name it (no TensorFlow import: scorers use it too).

`iter_json_array` streams the elements of a large array (a training file) one at a time.
"""

import json
import os
from typing import Any, Callable, Iterator, List


def load_json(path: str, what: str) -> Any:
  """Reads a JSON file, with errors that name the file.

  Args:
    path: The file to read.
    what: What the file holds, for messages (e.g. "prediction", "gold").

  Returns:
    The parsed JSON value.

  Raises:
    FileNotFoundError: If `path` is not an existing file.
    ValueError: If the file is empty, not UTF-8 or not valid JSON (the
      message gives the line and column of the error).
  """
  if not os.path.isfile(path):
    raise FileNotFoundError(f"{what} file not found: {path}")
  try:
    with open(path, encoding="utf-8") as f:
      text = f.read()
  except UnicodeDecodeError as e:
    raise ValueError(f"{what} file {path} is not UTF-8 text: {e}") from e
  if not text.strip():
    raise ValueError(f"{what} file is empty: {path}")
  try:
    return json.loads(text)
  except json.JSONDecodeError as e:
    raise ValueError(
        f"{what} file {path} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
    ) from e


def load_json_array(path: str, what: str, unit: str,
                    error: Callable[[str], Exception] = ValueError) -> List[Any]:
  """A JSON file holding one array (of `unit`s); `error(message)` names the file when it does
  not parse or holds something else (FileNotFoundError when it is missing)."""
  try:
    data = load_json(path, what)
  except ValueError as e:
    raise error(str(e)) from None
  if not isinstance(data, list):
    raise error(f"{path}: expected a JSON array of {unit}, got a JSON {type(data).__name__}")
  return data


def iter_json_array(path: str, what: str, unit: str,
                    error: Callable[[str], Exception] = ValueError,
                    chunk_chars: int = 1 << 20) -> Iterator[Any]:
  """The elements of a JSON file holding one array, one at a time.

  Memory holds one element and a read chunk, never the whole file. Errors are those of
  `load_json_array` (a missing, empty, non-UTF-8 or non-array file), raised when met; a syntax
  error part-way through the array stops the stream with `error`, naming the line and column.
  """
  if not os.path.isfile(path):
    raise FileNotFoundError(f"{what} file not found: {path}")
  with open(path, encoding="utf-8") as f:
    stream = _ArrayStream(f, path, what, error, chunk_chars)
    try:
      yield from stream.elements(unit)
    except UnicodeDecodeError as e:
      raise error(f"{what} file {path} is not UTF-8 text: {e}") from None


_NUMBER_CHARS = "0123456789.eE+-"


class _ArrayStream:
  """A buffered text file decoded one JSON value at a time (json.JSONDecoder.raw_decode)."""

  def __init__(self, f, path: str, what: str, error: Callable[[str], Exception],
               chunk_chars: int):
    self.f, self.path, self.what, self.error = f, path, what, error
    self.chunk_chars = chunk_chars
    self.decoder = json.JSONDecoder()
    self.buffer, self.pos = "", 0
    self.eof = False
    self.lines_before, self.column_before = 0, 0   # of the text dropped from the buffer

  def _read(self, at_least: int = 0) -> bool:
    """Appends the next chunk (at least `at_least` characters when the file has them)."""
    if self.eof:
      return False
    self._drop_consumed()
    chunk = self.f.read(max(self.chunk_chars, at_least))
    if not chunk:
      self.eof = True
      return False
    self.buffer += chunk
    return True

  def _drop_consumed(self) -> None:
    """Forgets the decoded text before `pos`, keeping count of its lines for messages."""
    if not self.pos:
      return
    dropped = self.buffer[:self.pos]
    newlines = dropped.count("\n")
    self.lines_before += newlines
    self.column_before = (len(dropped) - dropped.rfind("\n") - 1 if newlines
                          else self.column_before + len(dropped))
    self.buffer, self.pos = self.buffer[self.pos:], 0

  def _next_char(self) -> str:
    """The next non-whitespace character (not consumed), or "" at the end of the file."""
    while True:
      while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\n\r":
        self.pos += 1
      if self.pos < len(self.buffer) or not self._read():
        return self.buffer[self.pos:self.pos + 1]

  def _where(self, pos: int) -> str:
    """"line L, column C" of a buffer position, counted from the start of the file."""
    before = self.buffer[:pos]
    newlines = before.count("\n")
    column = (pos - before.rfind("\n") if newlines else self.column_before + pos + 1)
    return f"line {self.lines_before + newlines + 1}, column {column}"

  def _invalid(self, message: str, pos: int) -> Exception:
    return self.error(f"{self.what} file {self.path} is not valid JSON: {message} at "
                      f"{self._where(pos)}")

  def _value(self) -> Any:
    """Decodes the value at `pos`, reading on while it may run past the buffer."""
    self._drop_consumed()   # the value now starts the buffer: reading more shifts nothing
    while True:
      try:
        value, end = self.decoder.raw_decode(self.buffer, self.pos)
      except json.JSONDecodeError as e:
        if self._read(at_least=len(self.buffer)):
          continue
        raise self._invalid(e.msg, e.pos) from None
      if self._complete(value, end) or not self._read(at_least=len(self.buffer)):
        self.pos = end
        return value

  def _complete(self, value: Any, end: int) -> bool:
    """Whether a decoded value surely ends at `end` (a number may go on in the next chunk)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
      return True
    return end < len(self.buffer) and self.buffer[end] not in _NUMBER_CHARS

  def elements(self, unit: str) -> Iterator[Any]:
    first = self._next_char()
    if not first:
      raise self.error(f"{self.what} file is empty: {self.path}")
    if first != "[":
      load_json_array(self.path, self.what, unit, self.error)  # raises, naming what it holds
      raise self.error(f"{self.path}: expected a JSON array of {unit}")
    self.pos += 1
    if self._next_char() == "]":
      self.pos += 1
    else:
      while True:
        if not self._next_char():
          raise self._invalid("Expecting value", self.pos)
        yield self._value()
        separator = self._next_char()
        if separator not in (",", "]"):
          raise self._invalid("Expecting ',' delimiter", self.pos)
        self.pos += 1
        if separator == "]":
          break
    if self._next_char():
      raise self._invalid("Extra data", self.pos)
