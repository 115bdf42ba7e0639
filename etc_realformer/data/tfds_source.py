"""Pretraining text from TensorFlow Datasets (TFDS) that are already prepared on disk.

A TFDS source is named by a spec, `tfds:<name>/<config>[:<split>]`, for example
`tfds:wikipedia/20230601.en`, `tfds:c4/en:validation` or `tfds:wikipedia/20230601.en:train[:5%]`
(the split part may use TFDS's slicing syntax; it defaults to "train"). Datasets without
configs are written `tfds:<name>`.

Nothing is ever downloaded here: the dataset must already be prepared under `data_dir`
(`tfds build <name> --config=<config> --data_dir=<dir>` on a machine with network access, or
`builder.download_and_prepare()` there, then copy the directory). A spec whose data is not
prepared raises `TfdsNotPreparedError` naming the directory that was searched.

Which feature holds the text:
  * wikipedia: "text", the article body alone. The title is not added: the project's own
    Wikipedia path (`prepare_wikipedia`) leaves titles out too, and the first sentence of an
    article nearly always names its subject anyway.
  * c4: "text".
  * any other dataset: `text_field` must be given (a top-level feature name, or a "/" path into
    nested features such as "document/title"); the error lists the dataset's scalar string
    features.

Sharding: the n records of the selected split are cut into `num_workers` (W) contiguous,
disjoint ranges, worker k reading records [k*n//W, (k+1)*n//W) of it (sizes differ by at most
one), so the union over all workers is the whole split, in order. A worker whose range is empty
reads nothing.

Record numbers in messages and document ids are 0-based positions in the named split (for
`train[1000:]`, the first record read is train record 1000), so "tfds:c4/en:train:17" is record
17 of c4/en's train split in its stored order.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterator, List, Optional, Sequence, Tuple


TFDS_PREFIX = "tfds:"
DEFAULT_SPLIT = "train"

# Dataset name -> the feature holding a document's raw text.
KNOWN_TEXT_FIELDS = {
    "wikipedia": "text",
    "c4": "text",
}

_NAME_RE = re.compile(r"[a-z][a-z0-9_]*\Z")
_CONFIG_RE = re.compile(r"[\w.\-]+\Z")
_SPLIT_RE = re.compile(r"[\w\[\]:%+\-. ]+\Z")

_SPEC_FORMAT = "tfds:<name>/<config>[:<split>] (e.g. tfds:wikipedia/20230601.en:train)"


class TfdsNotPreparedError(FileNotFoundError):
  """The TFDS dataset is not prepared in the data directory (this module never downloads)."""


@dataclasses.dataclass(frozen=True)
class _Piece:
  """Records [start, end) of one named split."""
  split: str
  start: int
  end: int


def is_tfds_spec(text: Any) -> bool:
  """Whether `text` is a string that starts with "tfds:"."""
  return isinstance(text, str) and text.startswith(TFDS_PREFIX)


def parse_tfds_spec(spec: str) -> Tuple[str, Optional[str], str]:
  """Splits "tfds:<name>/<config>[:<split>]" into (name, config, split).

  The split defaults to "train" and may use TFDS's slicing syntax ("train[:10%]",
  "validation[100:200]", "train+validation"). Without "/<config>" the config is None (datasets
  that have no configs). Versions ("name/config:1.0.0") are not part of the spec: the version
  is the one the installed TFDS code defines.

  Args:
    spec: the spec string.

  Returns:
    (name, config or None, split).

  Raises:
    ValueError: the spec is malformed; the message shows the expected form.
  """
  if not isinstance(spec, str) or not spec.startswith(TFDS_PREFIX):
    raise ValueError(f"TFDS spec {spec!r} must start with {TFDS_PREFIX!r}: {_SPEC_FORMAT}")
  body = spec[len(TFDS_PREFIX):].strip()
  dataset, sep, split = body.partition(":")
  if sep:
    split = split.strip()
    if not split:
      raise ValueError(f"TFDS spec {spec!r}: empty split after ':'; expected {_SPEC_FORMAT}")
  else:
    split = DEFAULT_SPLIT
  name, sep, config = dataset.partition("/")
  name, config = name.strip(), config.strip()
  if not _NAME_RE.match(name):
    raise ValueError(f"TFDS spec {spec!r}: dataset name {name!r} is not a TFDS name (lower "
                     f"case letters, digits and '_'); expected {_SPEC_FORMAT}")
  if sep and not _CONFIG_RE.match(config):
    raise ValueError(f"TFDS spec {spec!r}: config {config!r} is empty or has characters "
                     f"other than letters, digits, '_', '.', '-' (a version or a second '/' "
                     f"is not accepted); expected {_SPEC_FORMAT}")
  if not _SPLIT_RE.match(split) or re.fullmatch(r"\d+(\.\d+)*", split):
    raise ValueError(f"TFDS spec {spec!r}: {split!r} is not a split (a version is not "
                     f"accepted); expected {_SPEC_FORMAT}")
  return name, (config if sep else None), split


def _source_name(name: str, config: Optional[str]) -> str:
  return f"{TFDS_PREFIX}{name}/{config}" if config else f"{TFDS_PREFIX}{name}"


def load_prepared_builder(spec: str, data_dir: Optional[str]):
  """Opens the TFDS builder of a spec whose data is prepared in `data_dir` (never downloads).

  Args:
    spec: "tfds:<name>/<config>[:<split>]".
    data_dir: the TFDS data directory (None: TFDS's default).

  Returns:
    (builder, name, config or None, split).

  Raises:
    TfdsNotPreparedError: no such dataset, or not prepared there (the message names the
      directory searched and how to prepare it elsewhere).
    ValueError: a malformed spec or an unknown config.
  """
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top

  name, config, split = parse_tfds_spec(spec)
  kwargs = {"data_dir": data_dir}
  if config is not None:
    kwargs["config"] = config
  where = f"data_dir {data_dir!r}" if data_dir else "the default TFDS data_dir"
  hint = (f"prepare it where the network is available (`tfds build {name}"
          + (f" --config={config}" if config else "")
          + " --data_dir=<dir>` or `builder.download_and_prepare()`) and copy the directory; "
          "nothing is downloaded here")
  try:
    builder = tfds.builder(name, **kwargs)
  except tfds.core.registered.DatasetNotFoundError:
    raise TfdsNotPreparedError(
        f"{spec}: no TFDS dataset {name!r} in the installed tensorflow-datasets and none "
        f"prepared under {where}; {hint}") from None
  except (ValueError, KeyError) as e:  # e.g. an unknown config
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    raise ValueError(f"{spec}: {first}") from None
  if not builder.is_prepared():
    raise TfdsNotPreparedError(
        f"{spec}: the TFDS dataset is not prepared under {where} (looked for "
        f"{builder.data_dir}); {hint}")
  return builder, name, config, split


def _pieces(builder, spec: str, split: str, num_workers: int,
            worker_index: int) -> List[_Piece]:
  """The worker's share of `split` as ranges of named splits, in reading order."""
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top

  if num_workers < 1 or not 0 <= worker_index < num_workers:
    raise ValueError(f"{spec}: worker_index {worker_index} is not in [0, num_workers) with "
                     f"num_workers {num_workers}")
  splits = builder.info.splits
  try:
    absolute = tfds.core.ReadInstruction.from_spec(split).to_absolute(splits)
  except (ValueError, KeyError, NotImplementedError) as e:
    raise ValueError(f"{spec}: split {split!r} cannot be read: {str(e).strip()[:300]} "
                     f"(the prepared splits are {sorted(splits.keys())})") from None
  whole: List[_Piece] = []
  for instruction in absolute:
    size = splits[instruction.splitname].num_examples
    start = 0 if instruction.from_ is None else max(0, min(size, instruction.from_))
    end = size if instruction.to is None else max(start, min(size, instruction.to))
    if end > start:
      whole.append(_Piece(instruction.splitname, start, end))
  total = sum(p.end - p.start for p in whole)
  first = worker_index * total // num_workers
  last = (worker_index + 1) * total // num_workers
  mine, offset = [], 0
  for piece in whole:
    size = piece.end - piece.start
    lo, hi = max(first, offset), min(last, offset + size)
    if hi > lo:
      mine.append(_Piece(piece.split, piece.start + lo - offset, piece.start + hi - offset))
    offset += size
  return mine


def _string_features(features, prefix: str = "") -> List[str]:
  """The "/" paths of the scalar string features of a FeaturesDict (not inside sequences)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top

  out = []
  for key, feature in features.items():
    if isinstance(feature, tfds.features.FeaturesDict):
      out += _string_features(feature, f"{prefix}{key}/")
    elif getattr(feature, "tf_dtype", None) == tf.string and tuple(feature.shape) == ():
      out.append(f"{prefix}{key}")
  return out


def _text_field(builder, spec: str, name: str, text_field: Optional[str]) -> str:
  """The "/" path of the text feature: `text_field`, or the known one of the dataset."""
  strings = sorted(_string_features(builder.info.features))
  field = text_field or KNOWN_TEXT_FIELDS.get(name)
  if field is None:
    raise ValueError(f"{spec}: no known text field for TFDS dataset {name!r} (known: "
                     f"{sorted(KNOWN_TEXT_FIELDS)}); pass text_field, one of its string "
                     f"features: {strings}")
  if field not in strings:
    raise ValueError(f"{spec}: text field {field!r} is not a scalar string feature of the "
                     f"dataset; its string features are {strings}")
  return field


def _as_dataset(builder, pieces: Sequence[_Piece], field: str):
  """A tf.data.Dataset of the field's scalar strings over `pieces` (only that field decoded)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top

  if not pieces:
    return tf.data.Dataset.from_tensor_slices(tf.constant([], dtype=tf.string))
  keys = field.split("/")
  wanted: Any = True
  for key in reversed(keys):
    wanted = {key: wanted}
  split = "+".join(f"{p.split}[{p.start}:{p.end}]" for p in pieces)
  dataset = builder.as_dataset(split=split, shuffle_files=False,
                               decoders=tfds.decode.PartialDecoding(wanted))

  def text(example):
    for key in keys:
      example = example[key]
    return example

  return dataset.map(text, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def tfds_text_dataset(spec: str, data_dir: Optional[str], num_workers: int = 1,
                      worker_index: int = 0, text_field: Optional[str] = None):
  """A `tf.data.Dataset` of scalar tf.string, one raw document text per record.

  Reads an already prepared TFDS dataset (never downloads), in its stored order, only this
  worker's share: with `num_workers` n, worker k reads the k-th of n contiguous, disjoint record
  ranges of the split; the union over k = 0..n-1 is the whole split. Texts are passed through
  unchanged (empty ones included): cleaning, sentence splitting and counting skips are the
  consumer's job (`corpus.tfds_documents` does them for the offline converter).

  Args:
    spec: "tfds:<name>/<config>[:<split>]" (see `parse_tfds_spec`).
    data_dir: the TFDS data directory holding the prepared dataset (None: TFDS's default).
    num_workers: how many workers share the split (>= 1).
    worker_index: this worker, in [0, num_workers).
    text_field: the feature holding the text ("a/b" for nested features); None uses the known
      field of wikipedia / c4 and is an error for other datasets.

  Returns:
    The dataset (element spec TensorSpec([], tf.string)).

  Raises:
    TfdsNotPreparedError: the dataset is not prepared under `data_dir`.
    ValueError: a malformed spec, an unknown split or config, bad worker arguments, or no
      usable text field (the message lists the dataset's string features).
  """
  builder, name, _, split = load_prepared_builder(spec, data_dir)
  field = _text_field(builder, spec, name, text_field)
  pieces = _pieces(builder, spec, split, num_workers, worker_index)
  return _as_dataset(builder, pieces, field)


def tfds_texts(spec: str, data_dir: Optional[str], num_workers: int = 1, worker_index: int = 0,
               text_field: Optional[str] = None) -> Tuple[str, Iterator[Tuple[str, int, Any]]]:
  """(text field, iterator over (where, record number, raw value)) of a prepared TFDS split:
  `where` reads "tfds:<name>/<config>:<split>", the raw value is the record's text field as
  TFDS gives it (bytes, normally). `corpus.read_corpus` turns them into documents.

  The dataset is opened, and its errors raised, when this is called; records are read while
  iterating, in the split's stored order. Worker sharding is as in `tfds_text_dataset`.

  Raises:
    TfdsNotPreparedError, ValueError: as `tfds_text_dataset`.
  """
  builder, name, config, split = load_prepared_builder(spec, data_dir)
  field = _text_field(builder, spec, name, text_field)
  pieces = _pieces(builder, spec, split, num_workers, worker_index)
  source = _source_name(name, config)

  def records() -> Iterator[Tuple[str, int, Any]]:
    import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top

    values = iter(tfds.as_numpy(_as_dataset(builder, pieces, field)))
    for piece in pieces:
      for index in range(piece.start, piece.end):
        yield f"{source}:{piece.split}", index, next(values)

  return field, records()
