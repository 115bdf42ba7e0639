"""EtcPretrainingModel: encoder + MLM head (tied) + CPC head, trained with Keras model.fit.

Losses (all float32, even under mixed precision):
- MLM: cross entropy of the masked pieces; averaged within each example, then over the batch.
- CPC (InfoNCE): the global output at each hidden sentence's CPC_MASK token must score its own
  sentence, encoded on its own by the same encoder (mean of its long-token outputs), above the
  other hidden sentences in the batch (in-batch negatives). Averaged within each example, then over the batch.
- loss = mlm_loss_weight * MLM + cpc_loss_weight * CPC (0.8 / 0.2 by default).

Averaging per example first and then over a FIXED batch size makes the loss of a global batch
exactly the mean of the losses of its equal slices, so data-parallel training (gradients
averaged over workers) matches one process on the global batch. CPC negatives are the hidden
sentences of the same replica batch; `cpc_group_size` > 0 restricts them to groups of that many
consecutive examples, so one process can reproduce an N-worker run exactly (group size = the
per-worker batch).
"""

from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.data import vocab
from etc_realformer.autograph import without_autograph
from etc_realformer.layers.heads import CpcHead, MlmHead
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.models.encoder import EtcModel
from etc_realformer.models.loss_model import LossModel

_NEG = -1e9


class EtcPretrainingModel(LossModel):
  """Wraps an EtcModel with the MLM and CPC objectives; `fit` it on pretraining batches."""

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], mlm_loss_weight: float = 0.8,
               cpc_loss_weight: float = 0.2, cpc_group_size: int = 0,
               implementation: str = "blocked", **kwargs):
    super().__init__(**kwargs)
    self.etc_config = config = EtcConfig.coerce(config)
    self.mlm_loss_weight = float(mlm_loss_weight)
    self.cpc_loss_weight = float(cpc_loss_weight)
    self.cpc_group_size = int(cpc_group_size)
    self.implementation = implementation
    self.encoder = EtcModel(config, implementation=implementation, name="encoder")
    self.mlm_head = MlmHead(config.hidden_size, config.embedding_size or config.hidden_size, config.vocab_size,
                            hidden_act=config.hidden_act,
                            initializer_range=config.initializer_range, name="mlm_head")
    self.cpc_head = CpcHead(config.hidden_size, initializer_range=config.initializer_range,
                            name="cpc_head")
    self.tracked = {name: tf_keras.metrics.Mean(name) for name in
                    ("loss", "mlm_loss", "cpc_loss", "mlm_accuracy", "cpc_accuracy")}

  def build(self, input_shape=None):
    build_in_scope(self.encoder, None)
    build_in_scope(self.mlm_head, None)
    build_in_scope(self.cpc_head, None)
    self.built = True

  @without_autograph
  def call(self, features, training=None):
    """-> dict with mlm_logits [B, P, V] and cpc_logits [B, C, B*C] (float32)."""
    encoder_features = {k: features[k] for k in
                        ("token_ids", "global_token_ids", "sentence_ids", "long_breakpoints",
                         "global_breakpoints", "segment_ids", "global_segment_ids")
                        if k in features}
    out = self.encoder(encoder_features, training=training)
    long_out, global_out = out["long_output"], out["global_output"]
    masked = tf.gather(long_out, features["masked_lm_positions"], batch_dims=1)  # [B, P, H]
    mlm_logits = self.mlm_head(masked, self.encoder.embeddings.token_table)  # [B, P, V]

    queries = tf.gather(global_out, features["cpc_global_positions"], batch_dims=1)  # [B, C, H]
    keys = self.encode_sentences_alone(features["cpc_sentence_token_ids"], training)  # [B*C, H]
    cpc_logits = self.cpc_head(queries, keys)                                      # [B, C, B*C]
    return {"mlm_logits": tf.cast(mlm_logits, tf.float32),
            "cpc_logits": tf.cast(cpc_logits, tf.float32)}

  def encode_sentences_alone(self, sentences, training=None):
    """Each hidden sentence encoded on its own: the mean of its long-token outputs.

    sentences: int [B, C, S] word pieces (0 = padding; an all-zero slot is empty) -> [B*C, H]
    (zeros for empty slots). The mean of the long outputs is distinct per sentence from the
    first step; the sentence's single global token starts out nearly the same for every
    sentence and would leave InfoNCE without a gradient.

    Rather than B*C rows of S tokens (each padded to a whole attention block), the sentences
    are packed into ONE row of B*C*S tokens, separated by breakpoints and each with its own
    global token, so no attention crosses them: the same result (positions are relative) at a
    fraction of the cost. The extra encoder pass costs about B * max_cpc_per_seq *
    cpc_sentence_len tokens per step (25% of the main pass with the default shapes).
    """
    sent_len = sentences.shape[2]
    flat = tf.reshape(sentences, [-1, sent_len])                                  # [N, S]
    num = tf.shape(flat)[0]
    size = num * sent_len
    real = tf.cast(tf.not_equal(flat, 0), tf.int32)                               # [N, S]
    lengths = tf.reduce_sum(real, axis=1)                                         # [N]
    present = tf.cast(lengths > 0, tf.int32)                                      # [N]
    rank = tf.cumsum(present) - 1                          # [N] index among present slots
    # Where each real piece goes in the packed row (static size N*S: XLA-friendly); padding
    # pieces are sent to a dump slot at index `size` that is cut off.
    real_flat = tf.reshape(real, [-1])                                            # [N*S]
    dest = tf.where(real_flat > 0, tf.cumsum(real_flat) - 1, size)                # [N*S]

    def scatter(values):
      return tf.scatter_nd(dest[:, None], values, [size + 1])[:size]             # [N*S]

    owner = tf.reshape(tf.broadcast_to(rank[:, None], tf.shape(flat)), [-1])      # [N*S]
    is_last = tf.reshape(tf.one_hot(lengths - 1, sent_len, dtype=tf.int32), [-1])  # [N*S]
    num_present = tf.reduce_sum(present)
    global_real = tf.cast(tf.range(num) < num_present, tf.int32)[None]            # [1, N]
    packed = {
        "token_ids": scatter(tf.reshape(flat, [-1]))[None],                       # [1, N*S]
        "global_token_ids": global_real * vocab.SENTENCE_ID,                      # [1, N]
        "sentence_ids": scatter(owner)[None],
        "long_breakpoints": scatter(is_last)[None],
        "global_breakpoints": global_real,
    }
    long_out = self.encoder(packed, training=training)["long_output"][0]          # [N*S, H]
    back = tf.gather(long_out, tf.minimum(dest, size - 1))                        # [N*S, H]
    back = tf.reshape(back, [num, sent_len, -1])                                  # [N, S, H]
    weights = tf.cast(real, back.dtype)[:, :, None]                               # [N, S, 1]
    return tf.reduce_sum(back * weights, 1) / tf.maximum(tf.reduce_sum(weights, 1), 1.0)

  def compute_losses(self, features, outputs):
    """Per-batch losses and accuracies (scalars) from call() outputs."""
    # MLM.
    weights = features["masked_lm_weights"]                                        # [B, P]
    labels = features["masked_lm_ids"]
    logits = outputs["mlm_logits"]
    ce = tf_keras.backend.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    per_example = tf.reduce_sum(ce * weights, 1) / tf.maximum(tf.reduce_sum(weights, 1), 1.0)
    mlm_loss = tf.reduce_mean(per_example)
    correct = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32)
    mlm_acc = tf.math.divide_no_nan(tf.reduce_sum(correct * weights), tf.reduce_sum(weights))

    # CPC: candidates are the B*C hidden sentences of the batch (padding slots masked out).
    cpc_w = features["cpc_weights"]                                                # [B, C]
    cpc_logits = outputs["cpc_logits"]                                             # [B, C, N]
    batch = tf.shape(cpc_w)[0]
    num_cpc = tf.shape(cpc_w)[1]
    cand_w = tf.reshape(cpc_w, [1, 1, -1])                                         # [1, 1, N]
    allowed = cand_w > 0
    if self.cpc_group_size:
      group_of_query = tf.range(batch) // self.cpc_group_size                      # [B]
      group_of_cand = tf.range(batch * num_cpc) // (num_cpc * self.cpc_group_size)  # [N]
      allowed &= tf.equal(group_of_query[:, None, None], group_of_cand[None, None, :])
    cpc_logits = tf.where(allowed, cpc_logits, _NEG)
    targets = tf.reshape(tf.range(batch * num_cpc), [batch, num_cpc])             # [B, C]
    cpc_ce = tf_keras.backend.sparse_categorical_crossentropy(targets, cpc_logits,
                                                              from_logits=True)
    cpc_per_example = (tf.reduce_sum(cpc_ce * cpc_w, 1)
                       / tf.maximum(tf.reduce_sum(cpc_w, 1), 1.0))
    cpc_loss = tf.reduce_mean(cpc_per_example)
    cpc_correct = tf.cast(tf.equal(tf.argmax(cpc_logits, -1, output_type=tf.int32), targets),
                          tf.float32)
    cpc_acc = tf.math.divide_no_nan(tf.reduce_sum(cpc_correct * cpc_w), tf.reduce_sum(cpc_w))

    loss = self.mlm_loss_weight * mlm_loss + self.cpc_loss_weight * cpc_loss
    return {"loss": loss, "mlm_loss": mlm_loss, "cpc_loss": cpc_loss,
            "mlm_accuracy": mlm_acc, "cpc_accuracy": cpc_acc}

  def get_config(self):
    return {"config": self.etc_config.to_dict(), "mlm_loss_weight": self.mlm_loss_weight,
            "cpc_loss_weight": self.cpc_loss_weight, "cpc_group_size": self.cpc_group_size,
            "implementation": self.implementation, "name": self.name}

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(**config)
