"""The OpenKP head on the ETC-RealFormer encoder, and its loss.

  visual = Dense(global_visual_features)                  [B, G, E]  added to the global
           embeddings, and gathered by sentence_ids       [B, L, E]  added to the long ones
  words  = sum of each word's piece outputs               [B, W, H]  (W = long_seq_len slots)
  for n = 1..5: Conv1D(width n, valid) -> relu -> Dense(1) scores every n-gram start
  ngram_logits                                            [B, 5, W]  -10000 where the n-gram
                                                                     would pass num_words

One softmax over all (n, start) cells; the loss is the cross-entropy against the uniform
distribution over the gold cells (the first occurrence of each key phrase).
"""

from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.layers.scopes import build_in_scope
from tasks.common.task_model import NEG, TaskModel  # pylint: disable=unused-import  (NEG re-exported)
from tasks.openkp.data import NUM_VISUAL_FEATURES


class OpenKpModel(TaskModel):
  """EtcModel with visual features + n-gram convolution heads.

  Args:
    config: EtcConfig (or its dict) of the encoder.
    implementation: "blocked" or "dense" (see EtcModel).
    max_phrase_words: the largest n-gram scored (5 in the ETC paper).
  """

  metric_names = ("loss", "top1_in_gold")

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               max_phrase_words: int = 5, **kwargs):
    super().__init__(config, implementation, **kwargs)
    self.max_phrase_words = max_phrase_words
    width = self.etc_config.hidden_size  # extra embeddings are hidden-sized (added after projection)
    hidden = self.etc_config.hidden_size
    init = self.initializer
    self.visual_projection = tf_keras.layers.Dense(width, kernel_initializer=init(),
                                                   name="visual_projection")
    self.convolutions = [tf_keras.layers.Conv1D(hidden, n, activation="relu",
                                                kernel_initializer=init(), name=f"conv_{n}")
                         for n in range(1, max_phrase_words + 1)]
    self.scorers = [tf_keras.layers.Dense(1, kernel_initializer=init(), name=f"score_{n}")
                    for n in range(1, max_phrase_words + 1)]
    self.heads = self.scorers

  def build(self, input_shape=None):
    build_in_scope(self.visual_projection, [None, NUM_VISUAL_FEATURES])
    for conv in self.convolutions:
      build_in_scope(conv, [None, None, self.etc_config.hidden_size])
    super().build(input_shape)

  def call(self, features, training=None):
    token_ids = features["token_ids"]
    inputs = {"token_ids": token_ids, "global_token_ids": features["global_token_ids"],
              "sentence_ids": features["sentence_ids"]}
    visual = tf.cast(features["global_visual_features"], tf.float32)      # [B, G, 20]
    global_extra = self.visual_projection(visual)                         # [B, G, H]
    sentence_ids = tf.cast(features["sentence_ids"], tf.int32)
    long_extra = tf.gather(global_extra, sentence_ids, batch_dims=1)      # [B, L, H]
    long_x = self.encoder(inputs, training=training, long_extra_embeddings=long_extra,
                          global_extra_embeddings=global_extra)["long_output"]   # [B, L, H]
    batch = tf.shape(long_x)[0]
    length = tf.shape(long_x)[1]
    word_ids = tf.cast(features["word_ids"], tf.int32)                    # [B, L], -1 pad
    offsets = tf.range(batch)[:, None] * length
    segments = tf.where(word_ids >= 0, word_ids + offsets, batch * length)
    words = tf.math.unsorted_segment_sum(long_x, segments, batch * length + 1)
    words = tf.reshape(words[:-1], [batch, length, long_x.shape[-1]])    # [B, W, H]
    num_words = tf.cast(features["num_words"], tf.int32)                  # [B]
    positions = tf.range(length)[None, :]                                 # [1, W]
    rows = []
    for n, (conv, scorer) in enumerate(zip(self.convolutions, self.scorers), start=1):
      scores = scorer(conv(words))[..., 0]                                # [B, W - n + 1]
      scores = tf.pad(tf.cast(scores, tf.float32), [[0, 0], [0, n - 1]])  # [B, W]
      valid = positions + n <= num_words[:, None]                         # [B, W]
      rows.append(tf.where(valid, scores, NEG))
    return {"ngram_logits": tf.stack(rows, axis=1)}                       # [B, N, W]

  def compute_losses(self, features, outputs):
    logits = outputs["ngram_logits"]                                      # [B, N, W]
    batch, num_n, length = tf.shape(logits)[0], tf.shape(logits)[1], tf.shape(logits)[2]
    flat = tf.reshape(logits, [batch, num_n * length])                    # [B, N * W]
    starts = tf.cast(features["label_starts"], tf.int32)                  # [B, K]
    lengths = tf.cast(features["label_lengths"], tf.int32)                # [B, K]
    present = tf.cast(starts >= 0, tf.float32)                            # [B, K]
    cells = tf.maximum(lengths - 1, 0) * length + tf.maximum(starts, 0)   # [B, K]
    target = tf.reduce_sum(tf.one_hot(cells, num_n * length) * present[..., None], 1)
    target = tf.minimum(target, 1.0)            # two phrases sharing a cell count once
    target /= tf.maximum(tf.reduce_sum(target, -1, keepdims=True), 1.0)   # [B, N * W]
    log_p = tf.nn.log_softmax(flat, -1)
    loss = tf.reduce_mean(-tf.reduce_sum(target * log_p, -1))
    best = tf.argmax(flat, -1, output_type=tf.int32)                      # [B]
    hit = tf.gather(target, best, batch_dims=1) > 0
    return {"loss": loss, "top1_in_gold": tf.reduce_mean(tf.cast(hit, tf.float32))}

  def get_config(self):
    config = super().get_config()
    config["max_phrase_words"] = self.max_phrase_words
    return config
