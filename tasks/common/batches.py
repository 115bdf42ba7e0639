"""Mapping a stream in batches: one call per batch (e.g. one tokenizer call into TensorFlow per
batch of pages), results handed back one item at a time, in order."""

import itertools
from typing import Callable, Iterable, Iterator, List, Sequence, Tuple, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def map_in_batches(items: Iterable[Item], size: int,
                   fn: Callable[[List[Item]], Sequence[Result]]) -> Iterator[Tuple[Item, Result]]:
  """(item, fn(its batch)[its position]) for every item; `fn` sees `size` items at a time (the
  last batch may be smaller), so up to `size` items are read ahead of their results."""
  if size < 1:
    raise ValueError(f"batch size must be >= 1, got {size}")
  items = iter(items)
  while True:
    batch = list(itertools.islice(items, size))
    if not batch:
      return
    yield from zip(batch, fn(batch))
