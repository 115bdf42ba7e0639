"""etc_realformer/autograph.py: a method marked `without_autograph` runs unconverted inside
tf.function, also when Keras calls it, and Keras still reads its arguments; the input pipeline
runs its functions unconverted too."""

import inspect

import pytest
import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph
from etc_realformer.config import EtcConfig
from etc_realformer.data import tfrecords
from etc_realformer.models.encoder import EtcModel


class _Branchy(tf_keras.layers.Layer):
  """Branches in Python on a tensor: only autograph can turn that into graph control flow."""

  def call(self, x, training=None):
    if tf.reduce_sum(x) > 0:
      return x + 1.0
    return x - 1.0


class _PlainBranchy(_Branchy):
  call = without_autograph(_Branchy.call)


def test_keras_converts_an_unmarked_call_and_leaves_a_marked_one_alone():
  x = tf.ones([2])
  converted = tf.function(lambda v: _Branchy()(v))
  assert converted(x).numpy().tolist() == [2.0, 2.0]
  plain = tf.function(lambda v: _PlainBranchy()(v))
  with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
    plain(x)


def test_keras_still_reads_the_arguments_of_a_marked_call():
  # Without the kept signature Keras would see (*args, **kwargs) and pass a `mask` on.
  for layer in (_PlainBranchy(), EtcModel(EtcConfig(vocab_size=32, hidden_size=8,
                                                    num_attention_heads=2))):
    assert layer._expects_training_arg  # pylint: disable=protected-access
    assert not layer._expects_mask_arg  # pylint: disable=protected-access
  assert list(inspect.signature(EtcModel.call).parameters)[:3] == ["self", "features",
                                                                   "training"]


def test_the_training_input_runs_its_parse_function_unconverted(tmp_path):
  path = str(tmp_path / "x.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    for value in range(4):
      writer.write(tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
          int64_list=tf.train.Int64List(value=[value]))})).SerializeToString())
  plain = tfrecords.fixed_length_parse_fn({"x": 0})

  def branchy(serialized):  # autograph would make the `if` a tf.cond
    parsed = plain(serialized)
    if tf.reduce_sum(parsed["x"]) > 0:
      return parsed
    return parsed

  batch = next(iter(tfrecords.make_dataset([path], None, 4, parse_fn=plain, repeat=False)))
  assert batch["x"].numpy().tolist() == [0, 1, 2, 3]
  with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
    tfrecords.make_dataset([path], None, 4, parse_fn=branchy, repeat=False)
