"""Token, segment and (optional) absolute-position embeddings for the long and global streams."""

import tensorflow as tf
import tf_keras

from etc_realformer.layers.scopes import build_in_scope


class EtcEmbeddings(tf_keras.layers.Layer):
  """Embeds both streams with ONE token table (long and global ids share the word-piece vocab).

  out = Drop(LN(Project(token_emb[ids] + segment_emb[segment_ids] (+ position_emb[pos])
                        (+ extra))))
  with a separate LayerNorm per stream; Project maps embedding_size -> hidden_size when they
  differ. Absolute positions (max_absolute_position_embeddings > 0) count 0.. within each stream.
  """

  def __init__(self, vocab_size, hidden_size, segment_vocab_size=16, embedding_size=None,
               max_absolute_position_embeddings=0, hidden_dropout_prob=0.1,
               initializer_range=0.02, **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size
    self.hidden_size = hidden_size
    self.segment_vocab_size = segment_vocab_size
    self.embedding_size = embedding_size
    self.max_absolute_position_embeddings = max_absolute_position_embeddings
    self.hidden_dropout_prob = hidden_dropout_prob
    self.initializer_range = initializer_range
    self.norms = {s: tf_keras.layers.LayerNormalization(epsilon=1e-12, name=f"{s}_norm")
                  for s in ("long", "global")}
    self.dropout = tf_keras.layers.Dropout(hidden_dropout_prob)
    width = embedding_size or hidden_size
    self.projection = None
    if width != hidden_size:
      self.projection = tf_keras.layers.Dense(
          hidden_size, name="projection",
          kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=initializer_range))

  @property
  def width(self):
    return self.embedding_size or self.hidden_size

  def build(self, input_shape=None):
    def init():  # a fresh initializer per weight: one instance repeats its values
      return tf_keras.initializers.TruncatedNormal(stddev=self.initializer_range)

    self.token_table = self.add_weight("token_embeddings", [self.vocab_size, self.width],
                                       initializer=init())
    self.segment_table = self.add_weight("segment_embeddings",
                                         [self.segment_vocab_size, self.width], initializer=init())
    self.position_table = None
    if self.max_absolute_position_embeddings:
      self.position_table = self.add_weight(
          "position_embeddings", [self.max_absolute_position_embeddings, self.width],
          initializer=init())
    if self.projection is not None:
      build_in_scope(self.projection, [None, self.width])
    for norm in self.norms.values():
      build_in_scope(norm, [None, None, self.hidden_size])
    super().build(input_shape)

  def embed(self, token_ids, segment_ids, stream, training=None, extra=None):
    """token_ids, segment_ids: int [B, N]; extra: float [B, N, width] or None -> [B, N, hidden]."""
    x = tf.gather(self.token_table, token_ids) + tf.gather(self.segment_table, segment_ids)
    if extra is not None:
      extra = tf.convert_to_tensor(extra)
      if extra.shape.rank is not None and (extra.shape.rank != 3 or (
          extra.shape[-1] is not None and extra.shape[-1] != self.width)):
        raise ValueError(f"{stream}_extra_embeddings must have shape [batch, length, "
                         f"{self.width}], got {extra.shape}.")
      x += tf.cast(extra, x.dtype)
    if self.position_table is not None:
      length = tf.shape(token_ids)[1]
      x += tf.gather(self.position_table, tf.range(length))[tf.newaxis]
    if self.projection is not None:
      x = self.projection(x)
    return self.dropout(self.norms[stream](x), training=training)

  def call(self, token_ids, segment_ids, global_token_ids, global_segment_ids, training=None,
           long_extra=None, global_extra=None):
    return (self.embed(token_ids, segment_ids, "long", training, long_extra),
            self.embed(global_token_ids, global_segment_ids, "global", training, global_extra))

  def get_config(self):
    config = super().get_config()
    config.update(vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                  segment_vocab_size=self.segment_vocab_size, embedding_size=self.embedding_size,
                  max_absolute_position_embeddings=self.max_absolute_position_embeddings,
                  hidden_dropout_prob=self.hidden_dropout_prob,
                  initializer_range=self.initializer_range)
    return config
