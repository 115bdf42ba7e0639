"""layers/autograph.py: a method marked `without_autograph` runs unconverted inside tf.function,
also when Keras calls it, and Keras still reads its arguments."""

import inspect

import pytest
import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.layers.autograph import without_autograph
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
