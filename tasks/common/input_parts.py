"""Which records of a training input one conversion shard takes (tasks.common.conversion).

A sharded conversion cuts the input into `count` parts without holding it in memory: every part
streams the input and keeps the records whose key hashes to its index. The key is the record's
id when it has one, so every copy of an id lands in the same part (where the reader's duplicate
check sees it) and what a part holds depends only on the input and `count`, never on how many
processes convert the parts. A record without a usable id is keyed by its position.

An input of several files (NQ's 50 training shards) with at least as many files as parts is cut
by whole files instead (file j goes to part j % count), so that each part reads only its own
files; the reader then finds a duplicate id only among the files of one part, and the
conversion finds copies in files of different parts when it merges its shards (an error).

No TensorFlow here: the readers of every task use it.
"""

import dataclasses
import functools
import json
import re
import zlib
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple, Union


@dataclasses.dataclass(frozen=True)
class Part:
  """Part `index` of `count` of an input (the default, 0 of 1, is the whole input)."""
  index: int = 0
  count: int = 1

  def __post_init__(self):
    if not 0 <= self.index < self.count:
      raise ValueError(f"part {self.index} of {self.count}: expected 0 <= index < count")

  def owns(self, key: str) -> bool:
    """Whether the record with this key (`id_key`, `position_key`) belongs to this part."""
    return self.count == 1 or part_of(key, self.count) == self.index

  def select(self, records: Iterable[Any], id_field: str) -> Iterator[Tuple[int, Any]]:
    """(position, record) of this part's records of a JSON array, keyed by `id_field`."""
    for position, record in enumerate(records):
      if self.owns(record_key(record, id_field, position)):
        yield position, record

  def files(self, paths: Sequence[str]) -> Tuple[List[str], "Part"]:
    """The files this part reads and the part that selects records within them: whole files
    when there are at least as many files as parts, else every file and a record selection."""
    if self.count > 1 and len(paths) >= self.count:
      return list(paths[self.index::self.count]), WHOLE
    return list(paths), self


WHOLE = Part()


def part_of(key: str, count: int) -> int:
  """The part of `count` a key belongs to (a stable hash: the same in every process)."""
  return zlib.crc32(key.encode("utf-8")) % count


def id_key(value: Any) -> Optional[str]:
  """The key of a record id (a JSON string or integer), None for anything else."""
  if isinstance(value, bool) or not isinstance(value, (int, str)):
    return None
  return json.dumps(value)


def position_key(*position: Any) -> str:
  """The key of a record without a usable id: its position (e.g. file and line)."""
  return "#" + ":".join(str(p) for p in position)


def record_key(record: Any, id_field: str, position: int) -> str:
  """The key of a decoded record: its `id_field`, else its position."""
  value = record.get(id_field) if isinstance(record, dict) else None
  return id_key(value) or position_key(position)


@functools.lru_cache(maxsize=None)
def _id_pattern(field: str, binary: bool) -> re.Pattern:
  pattern = f'"{re.escape(field)}"\\s*:\\s*(-?\\d+|"(?:[^"\\\\]|\\\\.)*")'
  return re.compile(pattern.encode("utf-8") if binary else pattern)


def line_id_key(line: Union[str, bytes], field: str) -> Optional[str]:
  """The key of the id under `field` of a JSON line, found without decoding the line (a routing
  pass reads every line of the input); None when there is none.

  A quoted name followed by a colon can only be an object key (inside a string its quotes
  would be escaped), so this finds the record's `field` as long as no nested object has one.
  """
  name = f'"{field}"'
  name = name.encode("utf-8") if isinstance(line, bytes) else name
  pattern = _id_pattern(field, isinstance(line, bytes))
  start = line.find(name)
  while start >= 0:
    match = pattern.match(line, start)
    if match:
      try:
        return id_key(json.loads(match.group(1)))
      except ValueError:
        return None
    start = line.find(name, start + 1)
  return None
