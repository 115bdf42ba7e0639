"""Every layer: get_config/from_config round trip and a SavedModel round trip."""

import tempfile

import numpy as np
import pytest
import tensorflow as tf

from etc_realformer.layers import EtcEmbeddings, FeedForward, GlobalLocalAttention, TransformerBlock
from helpers import random_side_inputs

LAYERS = [
    lambda: GlobalLocalAttention(16, 2, 2, relative_vocab_size=8, share_qkv_projections=False,
                                 share_kv_projections=True, num_persistent_memory=2,
                                 residual_attention="mean", residual_paths=("local",),
                                 layer_index=2, implementation="dense"),
    lambda: TransformerBlock(16, 2, 2, 32, relative_vocab_size=8, use_pre_activation_order=True,
                             use_feed_forward=False, num_persistent_memory=1),
    lambda: EtcEmbeddings(50, 16, embedding_size=8, max_absolute_position_embeddings=20),
    lambda: FeedForward(16, 32, "relu"),
]


@pytest.mark.parametrize("factory", LAYERS)
def test_config_round_trip(factory):
  layer = factory()
  clone = layer.__class__.from_config(layer.get_config())
  assert clone.get_config() == layer.get_config()


def test_block_saved_model_round_trip():
  rng = np.random.default_rng(0)
  side = {k: tf.constant(v) for k, v in random_side_inputs(rng, 1, 9, 3, 2, 2).items()}
  long_x = tf.constant(rng.normal(size=(1, 9, 16)), tf.float32)
  global_x = tf.constant(rng.normal(size=(1, 3, 16)), tf.float32)
  block = TransformerBlock(16, 2, 2, 32, relative_vocab_size=8, hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0, initializer_range=0.3)
  module = tf.Module()
  module.block = block
  module.serve = tf.function(lambda lx, gx: block(lx, gx, side)["long_output"])
  expected = module.serve(long_x, global_x)
  with tempfile.TemporaryDirectory() as d:
    tf.saved_model.save(module, d)
    loaded = tf.saved_model.load(d)
    np.testing.assert_array_equal(loaded.serve(long_x, global_x), expected)
