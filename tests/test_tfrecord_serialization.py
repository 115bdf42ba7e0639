"""tfrecords.serialize_example writes tf.train.Example's wire format itself (NumPy varints): parsed
back it must equal the Example built feature by feature with the protobuf classes, on random
arrays and on the edge cases of the format."""

import numpy as np
import pytest
import tensorflow as tf

from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import tfrecords


def reference(example):
  """The Example built with the protobuf classes (what to_tf_example built before)."""
  feature = {}
  for name, value in example.items():
    kind = np.asarray(value).dtype.kind
    if kind in "SUO":
      items = [value] if isinstance(value, (str, bytes)) else list(np.ravel(value))
      feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[
          item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in items]))
    elif name in pe.FLOAT_FEATURES or kind == "f":
      feature[name] = tf.train.Feature(float_list=tf.train.FloatList(
          value=np.ravel(value).tolist()))
    else:
      feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(
          value=np.ravel(value).tolist()))
  return tf.train.Example(features=tf.train.Features(feature=feature))


def check(example):
  parsed = tf.train.Example.FromString(tfrecords.serialize_example(example))
  assert parsed == reference(example)
  assert tfrecords.to_tf_example(example) == parsed


def test_random_integer_float_and_string_features_parse_to_the_protobuf_example():
  rng = np.random.default_rng(0)
  for trial in range(200):
    n = int(rng.integers(0, 300))
    scale = [2, 200, 70_000, 1 << 40, 1 << 62][trial % 5]
    ints = rng.integers(-scale, scale, n)
    padded = np.concatenate([ints, np.full(int(rng.integers(0, 50)), rng.integers(-2, 3))])
    check({"token_ids": padded.astype(np.int64), "small": ints.astype(np.int32) % 100,
           "masked_lm_weights": rng.random(n).astype(np.float32),
           "scores": rng.normal(size=[2, n // 2]), "words": [f"w{i}é" for i in range(n % 7)],
           "id": f"record-{trial}", "raw": np.array([b"a\x00b", b""], dtype=object)})


@pytest.mark.parametrize("value", [
    np.array([], np.int64), np.array([0]), np.array([127, 128, 16383, 16384]),
    np.array([-1, -1, -1]), np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]),
    np.array([2**63 - 1], np.uint64), np.array([[1, 2], [3, 4]], np.int16),
    [1, 2, 3], 7, np.int64(-5),
])
def test_integer_edge_cases(value):
  check({"x": value})


@pytest.mark.parametrize("value", [
    np.array([], np.float32), np.array([1e39, -1e39, np.nan, -0.0]), [0.5, 1.5], 2.25,
    np.array([1, 2], np.int64),   # an integer array under a float feature name
])
def test_float_edge_cases(value):
  name = "cpc_weights" if isinstance(value, np.ndarray) and value.dtype.kind == "i" else "f"
  check({name: np.asarray(value, np.float64) if name == "f" else value})


@pytest.mark.parametrize("value", [
    "", "x" * 300, ["a", "b\x00", "c"], ["é" * 200, "z"], np.array(["ab", "c"]), b"\xff\x00",
])
def test_string_edge_cases(value):
  check({"s": value})


def test_a_value_protobuf_refuses_names_its_feature():
  with pytest.raises(TypeError):   # as the protobuf classes refuse booleans in an int64 list
    reference({"flags": np.array([True, False])})
  with pytest.raises(TypeError, match="'flags'"):
    tfrecords.serialize_example({"flags": np.array([True, False])})
  with pytest.raises((TypeError, ValueError), match="'too_big'"):
    tfrecords.serialize_example({"ok": np.array([1]), "too_big": np.array([2**64 - 1],
                                                                            np.uint64)})
