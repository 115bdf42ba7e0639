"""Pretraining TFRecord shards: writing (atomic) and reading into per-worker batches.

Shards are `<prefix>-00000-of-00004.tfrecord`; next to them `data_config.json` records the
PretrainingDataConfig and vocab size they were made with, so the trainer knows every feature's
length without being told again.

Reading is deterministic, in one of two modes (`make_dataset(..., sharding=)`):
  "slice" (the default): records are read in file order, optionally shuffled with a fixed seed,
    grouped into GLOBAL batches, and each worker keeps its own contiguous slice of every global
    batch. So step s sees the same global batch whatever the number of workers, which is what
    makes a 2-process run equal to a 1-process run, and resuming at step s is `skip(s)` global
    batches. Every worker reads every record.
  "shards": worker i of n reads only the files i, i + n, i + 2n, ... (disjoint, their union is
    every file) and batches its own records, global batch / n at a time; resuming at step s is
    `skip(s)` of those batches. Each record is read once in all, so input cost does not grow
    with the number of workers; the updates are not those of a 1-process run.
"""

import dataclasses
import glob
import json
import os
from typing import Callable, Dict, Iterable, List, Optional

import numpy as np
import tensorflow as tf

from etc_realformer.autograph import without_autograph
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.io_utils import atomic_write_json

DATA_CONFIG_FILE = "data_config.json"


def shard_paths(prefix: str, num_shards: int) -> List[str]:
  return [f"{prefix}-{i:05d}-of-{num_shards:05d}.tfrecord" for i in range(num_shards)]


def to_tf_example(example: Dict[str, np.ndarray]) -> tf.train.Example:
  """A feature dict -> tf.train.Example: float arrays as float_list, bytes or str values (a
  string or a list of them) as bytes_list (str encoded UTF-8), everything else as int64_list."""
  return tf.train.Example.FromString(serialize_example(example))


def serialize_example(example: Dict[str, np.ndarray]) -> bytes:
  """`to_tf_example(example).SerializeToString()`, written directly in protobuf's wire format.

  Integer arrays are encoded as varints with NumPy (a constant run at the end, such as
  padding, as one varint repeated), floats as little-endian float32, lists of str as their
  UTF-8 bytes; other values (bool, object arrays, ...) go through the protobuf classes as
  before. Parsed, the result equals the tf.train.Example built feature by feature; the map's
  order on the wire is the dict's (protobuf writes it in an order of its own, so the bytes of
  two writers differ, never the records)."""
  entries = []
  for name, value in example.items():
    try:
      feature = _feature_bytes(name, value)
    except (TypeError, ValueError, OverflowError) as e:   # named after the feature
      raise (TypeError if isinstance(e, TypeError) else ValueError)(
          f"feature {name!r}: {e}") from e
    entry = _field(1, name.encode("utf-8")) + _field(2, feature)   # map entry: key, value
    entries.append(_field(1, entry))                               # Features.feature
  return _field(1, b"".join(entries))                              # Example.features


# Feature's oneof fields (tensorflow/core/example/feature.proto), and each list's `value` (1).
_BYTES_LIST, _FLOAT_LIST, _INT64_LIST = 1, 2, 3
_STR_TYPE = {str}
_ONE_BYTE_VARINTS = [bytes([n]) for n in range(0x80)]
_SHORT_BYTES_HEADERS = [bytes([1 << 3 | 2, n]) for n in range(0x80)]   # field 1, length n
# [9] the smallest value needing 2, 3, ... 10 varint bytes.
_VARINT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)
# The varint loop writes the rest of each value at once when at most _FEW distinct values are
# left, looked for when at most _FEW_CHECKED values are.
_FEW, _FEW_CHECKED = 8, 256


def _varint(n: int) -> bytes:
  """A non-negative int as a protobuf varint."""
  if n < 0x80:
    return _ONE_BYTE_VARINTS[n]
  out = bytearray()
  while n > 0x7f:
    out.append((n & 0x7f) | 0x80)
    n >>= 7
  out.append(n)
  return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
  """A length-delimited field (wire type 2): tag, length, payload."""
  return _ONE_BYTE_VARINTS[number << 3 | 2] + _varint(len(payload)) + payload


def _feature_bytes(name: str, value) -> bytes:
  """The serialised tf.train.Feature of one value (see to_tf_example for the kinds)."""
  if type(value) is np.ndarray:
    array = value
  elif type(value) is str:
    return _field(_BYTES_LIST, _field(1, value.encode("utf-8")))
  elif type(value) is list and value and set(map(type, value)) == _STR_TYPE:
    joined = "\x00".join(value)   # encoded at once, cut again at the NULs put between them
    if joined.count("\x00") == len(value) - 1:   # NumPy would cut trailing NULs: left to it below
      return _field(_BYTES_LIST, _bytes_values(joined.encode("utf-8").split(b"\x00")))
    array = np.asarray(value)
  else:
    array = np.asarray(value)
  kind = array.dtype.kind
  if kind in "SUO":
    return _feature_message(name, value, kind).SerializeToString()
  if name in pe.FLOAT_FEATURES or kind == "f":
    if kind not in "iuf":
      return _feature_message(name, value, kind).SerializeToString()
    # via float64, as the Python floats protobuf would convert: [n] little-endian float32
    with np.errstate(over="ignore"):   # past float32's range: inf, as protobuf casts
      data = np.ravel(array).astype(np.float64).astype("<f4").tobytes()
    return _field(_FLOAT_LIST, _field(1, data) if data else b"")
  if kind not in "iu" or (kind == "u" and array.size and int(array.max()) >= 1 << 63):
    return _feature_message(name, value, kind).SerializeToString()   # protobuf's own errors
  data = _varints(np.ravel(array).astype(np.int64))
  return _field(_INT64_LIST, _field(1, data) if data else b"")


def _bytes_values(items: List[bytes]) -> bytes:
  """BytesList's repeated `value` field: every item tagged and length-prefixed."""
  lengths = list(map(len, items))
  if max(lengths) >= 0x80:
    return b"".join([_field(1, item) for item in items])
  parts = [b""] * (2 * len(items))   # tag and one-byte length, item, tag and length, ...
  parts[0::2] = map(_SHORT_BYTES_HEADERS.__getitem__, lengths)
  parts[1::2] = items
  return b"".join(parts)


def _feature_message(name: str, value, kind: str) -> tf.train.Feature:
  """One feature built with the protobuf classes (the kinds serialize_example leaves to them)."""
  if kind in "SUO":
    items = [value] if isinstance(value, (str, bytes)) else list(np.ravel(value))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[
        item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in items]))
  if name in pe.FLOAT_FEATURES or kind == "f":
    return tf.train.Feature(float_list=tf.train.FloatList(value=np.ravel(value).tolist()))
  return tf.train.Feature(int64_list=tf.train.Int64List(value=np.ravel(value).tolist()))


def _varints(values: np.ndarray) -> bytes:
  """int64 [n] -> the packed varints of its values (negatives take 10 bytes, as protobuf
  writes them); a run of one value at the end (padding) is one varint repeated."""
  u = values.astype(np.uint64)   # [n], negatives as two's complement
  if not u.size:
    return b""
  last = u[-1]
  differ = np.flatnonzero(u != last)
  cut = int(differ[-1]) + 1 if differ.size else 0   # u[cut:] all equal `last`
  tail = _varint(int(last)) * (u.size - cut)
  return (_varints_of(u[:cut]) if cut else b"") + tail


def _varints_of(u: np.ndarray) -> bytes:
  """uint64 [n], n > 0 -> their varints, one 7-bit group (a column of bytes) at a time."""
  if int(u.max()) < 0x80:
    return u.astype(np.uint8).tobytes()
  sizes = np.searchsorted(_VARINT_LIMITS, u, side="right") + 1   # [n] bytes of each, 1..10
  ends = np.cumsum(sizes)
  starts = ends - sizes                                          # [n] first byte of each
  out = bytearray(int(ends[-1]))
  view = np.frombuffer(out, np.uint8)                            # writes into `out`
  k = 0   # the group written next; u, starts, sizes: the values that still have one
  while True:
    values = None
    if u.size <= _FEW_CHECKED:
      values, which = np.unique(u, return_inverse=True)
    elif k and u.min() == u.max():   # one value left (such as -1 in a long array)
      values, which = u[:1], np.zeros(u.size, np.int64)
    if values is not None and values.size <= _FEW:
      # A few distinct values left: the rest of each one's varints written at once (the rest
      # of a varint from group k on is the varint of u >> 7k).
      for j, rest in enumerate(values.tolist()):
        tail = _varint(rest)
        at = starts[which.ravel() == j] + k                      # [m] where the rest goes
        view[at[:, None] + np.arange(len(tail))] = np.frombuffer(tail, np.uint8)
      return bytes(out)
    more = sizes > k + 1                                         # [n] a group follows this one
    view[starts + k] = (u & np.uint64(0x7f)).astype(np.uint8) | (more.astype(np.uint8) << 7)
    k += 1
    if not more.any():
      return bytes(out)
    if not more.all():
      u, starts, sizes = u[more], starts[more], sizes[more]
    u = u >> np.uint64(7)


def write_shards(examples: Iterable[Dict[str, np.ndarray]], prefix: str, num_shards: int,
                 progress_every: int = 0, log=print) -> int:
  """Writes examples round-robin into `num_shards` files; returns the number written.

  Each shard is written under a temporary name and renamed when complete, so a crash never
  leaves a truncated shard under a final name.
  """
  paths = shard_paths(prefix, num_shards)
  os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
  tmp_paths = [p + ".tmp" for p in paths]
  writers = [tf.io.TFRecordWriter(p) for p in tmp_paths]
  count = 0
  try:
    for example in examples:
      writers[count % num_shards].write(serialize_example(example))
      count += 1
      if progress_every and count % progress_every == 0:
        log(f"  {count} examples written")
  finally:
    for w in writers:
      w.close()
  for tmp, final in zip(tmp_paths, paths):
    os.replace(tmp, final)
  return count


def write_shard(examples: Iterable[Dict[str, np.ndarray]], path: str) -> int:
  """Writes examples to one TFRecord file; returns the number written.

  The file is written under `<path>.tmp` and renamed when complete, so a crash never leaves a
  truncated file under its final name.
  """
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  tmp = path + ".tmp"
  count = 0
  try:
    with tf.io.TFRecordWriter(tmp) as writer:
      for example in examples:
        writer.write(serialize_example(example))
        count += 1
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise
  os.replace(tmp, path)
  return count


def write_data_config(directory: str, config: pe.PretrainingDataConfig, vocab_size: int,
                      extra: Optional[dict] = None) -> str:
  payload = {"data_config": dataclasses.asdict(config), "vocab_size": int(vocab_size)}
  payload.update(extra or {})
  return atomic_write_json(os.path.join(directory, DATA_CONFIG_FILE), payload)


def read_data_config(directory: str):
  """-> (PretrainingDataConfig, vocab_size) saved next to the shards in `directory`."""
  path = os.path.join(directory, DATA_CONFIG_FILE)
  if not os.path.exists(path):
    raise FileNotFoundError(f"{path}: missing; it is written by "
                            "`python -m etc_realformer.create_pretraining_data` next to the shards")
  with open(path) as f:
    payload = json.load(f)
  try:
    return pe.PretrainingDataConfig(**payload["data_config"]), int(payload["vocab_size"])
  except (KeyError, TypeError) as e:
    raise ValueError(f"{path}: not a pretraining data config ({e})") from None


def expand_files(patterns) -> List[str]:
  """Comma-separated or listed glob patterns -> sorted file list; an empty match is an error."""
  if isinstance(patterns, str):
    patterns = [p for p in patterns.split(",") if p]
  files = []
  for pattern in patterns:
    matched = sorted(glob.glob(pattern))
    if not matched:
      raise FileNotFoundError(f"no files match {pattern!r}")
    files.extend(matched)
  return files


def parse_batch(serialized: tf.Tensor, config: pe.PretrainingDataConfig) -> Dict[str, tf.Tensor]:
  """[batch] serialized tf.Examples -> dict of int32 / float32 tensors [batch, length]."""
  spec = {}
  for name, length in pe.feature_lengths(config).items():
    dtype = tf.float32 if name in pe.FLOAT_FEATURES else tf.int64
    spec[name] = tf.io.FixedLenFeature([length], dtype)
  parsed = tf.io.parse_example(serialized, spec)
  out = {name: (value if value.dtype == tf.float32 else tf.cast(value, tf.int32))
         for name, value in parsed.items()}
  out["cpc_sentence_token_ids"] = tf.reshape(
      out["cpc_sentence_token_ids"], [-1, config.max_cpc_per_seq, config.cpc_sentence_len])
  return out


SHARDING_MODES = ("slice", "shards")


def make_dataset(files: List[str], config: Optional[pe.PretrainingDataConfig],
                 global_batch_size: int, num_slices: int = 1, slice_index: int = 0,
                 shuffle_buffer: int = 0, seed: int = 0, repeat: bool = True,
                 skip_batches: int = 0,
                 parse_fn: Optional[Callable[[tf.Tensor], Dict[str, tf.Tensor]]] = None,
                 sharding: str = "slice") -> tf.data.Dataset:
  """Batches of this worker's slice: [global_batch_size / num_slices, ...] per element.

  Args:
    files: TFRecord shards, read in this order.
    global_batch_size: examples per step over all workers; must divide by num_slices.
    num_slices, slice_index: how many input pipelines (workers) there are and which one this
      is. "slice": the part of each global batch this pipeline keeps (contiguous: slice i =
      examples [i*b, (i+1)*b)); "shards": which files it reads (see the module docstring).
    shuffle_buffer: 0 = file order; otherwise a seeded shuffle ("slice": the same order on every
      worker; "shards": each worker shuffles its own records, seed + slice_index).
    skip_batches: steps to skip (resume).
    parse_fn: [batch] serialized records -> features; default: the pretraining features of
      `config` (tasks pass their own).
    sharding: "slice" (every worker reads every record; N workers equal 1) or "shards" (each
      worker reads its own files; needs at least num_slices files).
  """
  if sharding not in SHARDING_MODES:
    raise ValueError(f"input sharding: {sharding!r} is not one of {', '.join(SHARDING_MODES)}")
  if global_batch_size % num_slices:
    raise ValueError(f"global_batch_size: {global_batch_size} does not divide into "
                     f"{num_slices} workers/replicas")
  per_slice = global_batch_size // num_slices
  if sharding == "shards":
    ds = _own_shards(files, num_slices, slice_index, shuffle_buffer, seed, repeat)
    ds = ds.batch(per_slice, drop_remainder=True)
    if skip_batches:
      ds = ds.skip(skip_batches)
  else:
    ds = record_dataset(files)
    if shuffle_buffer:
      ds = ds.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
    if repeat:
      ds = ds.repeat()
    ds = ds.batch(global_batch_size, drop_remainder=True)
    if skip_batches:
      ds = ds.skip(skip_batches)
    start = slice_index * per_slice
    ds = ds.map(without_autograph(lambda batch: batch[start:start + per_slice]))
  if parse_fn is None:
    parse_fn = lambda batch: parse_batch(batch, config)  # pylint: disable=unnecessary-lambda-assignment
  ds = ds.map(without_autograph(parse_fn), num_parallel_calls=tf.data.AUTOTUNE)
  options = tf.data.Options()
  options.deterministic = True
  options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
  return ds.with_options(options).prefetch(2)


def worker_files(files: List[str], num_workers: int, worker_index: int) -> List[str]:
  """The files worker `worker_index` of `num_workers` reads in "shards" mode (disjoint)."""
  if len(files) < num_workers:
    raise ValueError(f"input sharding \"shards\": {len(files)} TFRecord file(s) for "
                     f"{num_workers} workers; convert into at least as many shards as workers "
                     "(train.num_conversion_shards, convert --num_shards) or read with "
                     "input sharding \"slice\"")
  return list(files[worker_index::num_workers])


def _own_shards(files, num_workers, worker_index, shuffle_buffer, seed, repeat):
  """The records of this worker's own files, shuffled and repeated (not yet batched)."""
  ds = record_dataset(worker_files(files, num_workers, worker_index))
  if shuffle_buffer:
    ds = ds.shuffle(shuffle_buffer, seed=seed + worker_index, reshuffle_each_iteration=True)
  return ds.repeat() if repeat else ds


def compression_of(files: List[str]) -> str:
  """"GZIP" when the files are gzip-compressed (as Google's Beam pipelines write them, read
  from their first two bytes), else "": all files must agree."""
  kinds = {}
  for path in files:
    with tf.io.gfile.GFile(path, "rb") as f:
      kinds[path] = "GZIP" if f.read(2) == b"\x1f\x8b" else ""
  if len(set(kinds.values())) > 1:
    gz = [p for p, kind in kinds.items() if kind]
    raise ValueError(f"TFRecord files mix gzip-compressed ({gz[0]}, ...) and uncompressed "
                     "ones; give one kind")
  return next(iter(kinds.values()), "")


def record_dataset(files: List[str]) -> tf.data.Dataset:
  """The serialized records of `files` in order, gzip-compressed or not."""
  return tf.data.TFRecordDataset(files, compression_type=compression_of(files))


def count_records(files: List[str]) -> int:
  return sum(1 for f in files for _ in record_dataset([f]))


def fixed_length_parse_fn(lengths: Dict[str, int],
                          float_shapes: Optional[Dict[str, tuple]] = None) -> Callable:
  """A parse_fn for `make_dataset`: [batch] serialized records -> dict of tensors.

  `lengths` maps each int64 feature to its length (0 = a scalar, parsed as [batch]); they come
  back int32. `float_shapes` maps float features to their per-example shape (e.g. (G, 20)),
  parsed as float32 [batch, *shape].
  """
  float_shapes = dict(float_shapes or {})
  spec = {name: tf.io.FixedLenFeature([length] if length else [], tf.int64)
          for name, length in lengths.items()}
  for name, shape in float_shapes.items():
    spec[name] = tf.io.FixedLenFeature([int(np.prod(shape))], tf.float32)

  def parse(serialized):
    parsed = tf.io.parse_example(serialized, spec)
    out = {name: tf.cast(value, tf.int32) for name, value in parsed.items()
           if name not in float_shapes}
    for name, shape in float_shapes.items():
      out[name] = tf.reshape(parsed[name], [-1, *shape])
    return out
  return parse


def stack_features(features, names) -> Dict[str, np.ndarray]:
  """List of per-example feature dicts -> dict of arrays [N, ...] of `names` (float features
  float32, the others int32)."""
  out = {}
  for name in names:
    value = np.stack([f[name] for f in features])
    out[name] = value.astype(np.float32 if value.dtype.kind == "f" else np.int32)
  return out
