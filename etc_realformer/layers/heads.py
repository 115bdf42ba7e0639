"""Pretraining heads: masked-LM tied to the token table, and the CPC projection."""

import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.ops.activations import activation


class MlmHead(tf_keras.layers.Layer):
  """logits = LN(act(x W + c)) E^T + bias, with E the (shared) token embedding table.

  x: [..., hidden_size]; E: [vocab, width] passed to call, so the output weights are tied to the
  embeddings (width = embedding_size or hidden_size).
  """

  def __init__(self, hidden_size, width, vocab_size, hidden_act="gelu", initializer_range=0.02,
               **kwargs):
    super().__init__(**kwargs)
    self.hidden_size = hidden_size
    self.width = width
    self.vocab_size = vocab_size
    self.hidden_act = hidden_act
    self.initializer_range = initializer_range
    self.transform = tf_keras.layers.Dense(
        width, name="transform",
        kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=initializer_range))
    self.norm = tf_keras.layers.LayerNormalization(epsilon=1e-12, name="transform_norm")
    self._act = activation(hidden_act)

  def build(self, input_shape=None):
    build_in_scope(self.transform, [None, self.hidden_size])
    build_in_scope(self.norm, [None, None, self.width])
    self.output_bias = self.add_weight("output_bias", [self.vocab_size], initializer="zeros")
    super().build(input_shape)

  @without_autograph
  def call(self, x, embedding_table):
    h = self.norm(self._act(self.transform(x)))              # [..., width]
    table = tf.cast(embedding_table, h.dtype)
    # One [N, width] x [width, vocab] matmul. (An einsum with an ellipsis here would make its
    # gradient w.r.t. the table an outer product over every position: [..., vocab, width].)
    flat = tf.reshape(h, [-1, self.width])                     # [N, width]
    logits = tf.matmul(flat, table, transpose_b=True)          # [N, vocab]
    logits = tf.reshape(logits, tf.concat([tf.shape(h)[:-1], [self.vocab_size]], axis=0))
    return logits + tf.cast(self.output_bias, logits.dtype)

  def get_config(self):
    config = super().get_config()
    config.update(hidden_size=self.hidden_size, width=self.width, vocab_size=self.vocab_size, hidden_act=self.hidden_act,
                  initializer_range=self.initializer_range)
    return config


class CpcHead(tf_keras.layers.Layer):
  """Projects context queries and sentence encodings into the space InfoNCE compares them in.

  score(q, s) = (q Wq + bq) . (s Wk): q is the global output at a hidden sentence's
  CPC_MASK token, s the encoding of that sentence on its own. The key side has no
  bias: q.bk would be the same for every candidate, cancel in the softmax and get a zero
  gradient (Adam would then amplify rounding noise in it).
  """

  def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
    super().__init__(**kwargs)
    self.hidden_size = hidden_size
    self.initializer_range = initializer_range
    init = lambda: tf_keras.initializers.TruncatedNormal(stddev=initializer_range)  # pylint: disable=unnecessary-lambda-assignment
    self.query = tf_keras.layers.Dense(hidden_size, name="query", kernel_initializer=init())
    self.key = tf_keras.layers.Dense(hidden_size, name="key", use_bias=False,
                                     kernel_initializer=init())

  def build(self, input_shape=None):
    build_in_scope(self.query, [None, self.hidden_size])
    build_in_scope(self.key, [None, self.hidden_size])
    super().build(input_shape)

  @without_autograph
  def call(self, queries, sentences):
    """queries [B, C, H], sentences [N, H] -> scores [B, C, N]."""
    return tf.einsum("bch,nh->bcn", self.query(queries), self.key(sentences))

  def get_config(self):
    config = super().get_config()
    config.update(hidden_size=self.hidden_size, initializer_range=self.initializer_range)
    return config
