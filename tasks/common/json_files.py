"""Reading a JSON file with errors that name it (no TensorFlow import: scorers use it too)."""

import json
import os
from typing import Any, Callable, List


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
