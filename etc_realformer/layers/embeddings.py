"""Token, segment and (optional) absolute-position embeddings for the long and global streams.

The layout is official ETC's:

  long   = Drop(LN_long(Project(token_emb[ids]) + segment_emb[seg] (+ long_pos_emb[pos])
                        (+ extra)))
  global = Drop(LN_global(Project(token_emb[gids]) + segment_emb[gseg] (+ global_pos_emb[pos])
                          (+ extra)))

One token table [vocab, embedding_size] serves both streams; `Project` (a Dense layer with
bias) maps embedding_size -> hidden_size and exists only when they differ. The segment table
and the two absolute position tables (one per stream, each max_absolute_position_embeddings
rows) are hidden-sized. Positions count 0.. within each stream unless position ids are given.
"""

import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph
from etc_realformer.layers.dropout import SeededDropout
from etc_realformer.layers.scopes import build_in_scope

_STREAMS = ("long", "global")


class EtcEmbeddings(tf_keras.layers.Layer):
  """Embeds both streams (see the module docstring for the formula)."""

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
                  for s in _STREAMS}
    self.dropout = SeededDropout(hidden_dropout_prob)
    self.projection = None
    if self.width != hidden_size:
      self.projection = tf_keras.layers.Dense(
          hidden_size, name="projection",
          kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=initializer_range))

  @property
  def width(self):
    """Width of the token table (embedding_size, or hidden_size when it is not set)."""
    return self.embedding_size or self.hidden_size

  def build(self, input_shape=None):
    def init():  # a fresh initializer per weight: one instance repeats its values
      return tf_keras.initializers.TruncatedNormal(stddev=self.initializer_range)

    self.token_table = self.add_weight("token_embeddings", [self.vocab_size, self.width],
                                       initializer=init())
    self.segment_table = self.add_weight(
        "segment_embeddings", [self.segment_vocab_size, self.hidden_size], initializer=init())
    self.position_tables = {}
    if self.max_absolute_position_embeddings:
      for s in _STREAMS:
        self.position_tables[s] = self.add_weight(
            f"{s}_position_embeddings", [self.max_absolute_position_embeddings, self.hidden_size],
            initializer=init())
    if self.projection is not None:
      build_in_scope(self.projection, [None, self.width])
    for norm in self.norms.values():
      build_in_scope(norm, [None, None, self.hidden_size])
    super().build(input_shape)

  def embed_tokens(self, token_ids):
    """int [B, N] -> [B, N, hidden]: the token table, projected when embedding_size is set."""
    x = tf.gather(self.token_table, token_ids)  # [B, N, width]
    if self.projection is not None:
      x = self.projection(x)
    return x

  def embed(self, token_ids, segment_ids, stream, training=None, extra=None, position_ids=None,
            dropout_seed=None):
    """token_ids, segment_ids: int [B, N]; extra: float [B, N, hidden] or None;
    position_ids: int [B, N] or None (0..N-1); dropout_seed: [2] int32 or None (a fresh one)
    -> [B, N, hidden]."""
    x = self.embed_tokens(token_ids) + tf.gather(self.segment_table, segment_ids)
    if stream in self.position_tables:
      table = self.position_tables[stream]
      if position_ids is None:
        x += tf.gather(table, tf.range(tf.shape(token_ids)[1]))[tf.newaxis]
      else:
        x += tf.gather(table, position_ids)
    elif position_ids is not None:
      raise ValueError(f"{'global_' if stream == 'global' else ''}position_ids: given, but "
                       "max_absolute_position_embeddings is 0 (the model has no position table).")
    if extra is not None:
      extra = tf.convert_to_tensor(extra)
      if extra.shape.rank is not None and (extra.shape.rank != 3 or (
          extra.shape[-1] is not None and extra.shape[-1] != self.hidden_size)):
        raise ValueError(f"{stream}_extra_embeddings must have shape [batch, length, "
                         f"{self.hidden_size}] (hidden_size), got {extra.shape}.")
      x += tf.cast(extra, x.dtype)
    return self.dropout(self.norms[stream](x), seed=dropout_seed, salt=_STREAMS.index(stream),
                        training=training)

  @without_autograph
  def call(self, token_ids, segment_ids, global_token_ids, global_segment_ids, training=None,
           long_extra=None, global_extra=None, position_ids=None, global_position_ids=None,
           dropout_seed=None):
    return (self.embed(token_ids, segment_ids, "long", training, long_extra, position_ids,
                       dropout_seed),
            self.embed(global_token_ids, global_segment_ids, "global", training, global_extra,
                       global_position_ids, dropout_seed))

  def get_config(self):
    config = super().get_config()
    config.update(vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                  segment_vocab_size=self.segment_vocab_size, embedding_size=self.embedding_size,
                  max_absolute_position_embeddings=self.max_absolute_position_embeddings,
                  hidden_dropout_prob=self.hidden_dropout_prob,
                  initializer_range=self.initializer_range)
    return config
