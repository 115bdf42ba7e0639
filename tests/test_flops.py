"""The analytic FLOP counts (etc_realformer.flops) on a configuration small enough to count by hand."""

import pytest

from etc_realformer import flops
from etc_realformer.config import EtcConfig


def _config(**changes):
  values = dict(vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                intermediate_size=16, local_radius=1, relative_vocab_size=6,
                relative_pos_max_distance=1, share_qkv_projections=True)
  values.update(changes)
  return EtcConfig.from_dict(values)


def test_blocked_layer_counted_by_hand():
  # L = 5 long tokens (padded to 3 blocks of b = 2), G = 2, width 8, radius 1, R = 6.
  parts = flops.layer_forward_flops(_config(), 5, 2)
  assert parts["projections"] == 2 * 5 * 8 * 8 * 3 + 2 * 2 * 8 * 8 * 3  # q, k, v per stream
  assert parts["l2l"] == 2 * (2 * 6 * 6 * 8)     # 6 padded queries x 3b = 6 keys
  assert parts["l2g"] == 2 * (2 * 6 * 2 * 8)
  assert parts["g2g"] == 2 * (2 * 2 * 2 * 8)
  assert parts["g2l"] == 2 * (2 * 2 * 5 * 8)
  # One per-id table per path (shared queries), then one-hot lookups over the l2l and g2g scores
  # (the l2g and g2l ids hold two values and are selected element-wise).
  assert parts["relative"] == 2 * (6 + 2) * 8 * 6 + 2 * 2 * 6 * (6 * 6 + 2 * 2)
  assert parts["output_projection"] == 2 * 7 * 8 * 8
  assert parts["feed_forward"] == 2 * (2 * 7 * 8 * 16)
  assert parts["memory"] == 0
  total = flops.encoder_flops(_config(num_hidden_layers=3), 5, 2, batch_size=2)
  assert total["forward"] == 2 * 3 * (11408 - 2 * 2 * 6 * (6 * 2 + 2 * 5))
  assert total["training_step"] == 3 * total["forward"]
  # 5 queries x 3 window keys are useful out of 6 x 6 computed.
  assert total["blocked_waste"] == pytest.approx(1 - 15 / 36)


def test_dense_and_separate_projections():
  parts = flops.layer_forward_flops(_config(share_qkv_projections=False), 5, 2, "dense")
  assert parts["l2l"] == 2 * (2 * 5 * 5 * 8)
  # Official ETC's unshared layout: 2 queries, 4 keys, 4 values. 5 read the long stream
  # (long q, l2l k/v, g2l k/v) and 5 the global stream (global q, g2g k/v, l2g k/v).
  assert parts["projections"] == 2 * 5 * 8 * 8 * 5 + 2 * 2 * 8 * 8 * 5
  # One query projection per stream: one per-id table per path; l2l and g2g lookups.
  assert parts["relative"] == 2 * (5 + 2) * 8 * 6 + 2 * 2 * 6 * (5 * 5 + 4)


def test_memory_and_full_attention():
  parts = flops.layer_forward_flops(_config(num_persistent_memory=3), 5, 2)
  assert parts["memory"] == 2 * (2 * (6 + 2) * 3 * 8)
  assert flops.full_attention_layer_flops(8, 2, 16, 7) == (
      2 * 7 * 8 * 8 * 3 + 2 * (2 * 7 * 7 * 8) + 2 * 7 * 8 * 8 + 2 * (2 * 7 * 8 * 16))
  assert flops.mlm_head_flops(_config(), 3, 2) == 2 * 3 * (2 * 8 * 8 + 2 * 8 * 10)


def test_gradient_checkpointing_recomputes_the_forward_pass():
  # tf.recompute_grad runs each group's forward pass again in the backward pass: 4x forward
  # executed, whatever the period; the model's own count stays 3x.
  plain = flops.encoder_flops(_config(num_hidden_layers=4), 5, 2)
  assert plain["training_step_executed"] == plain["training_step"] == 3 * plain["forward"]
  for period in (1, 2, 4):
    counted = flops.encoder_flops(_config(num_hidden_layers=4, grad_checkpointing_period=period),
                                  5, 2)
    assert counted["forward"] == plain["forward"]
    assert counted["training_step"] == 3 * counted["forward"]
    assert counted["training_step_executed"] == 4 * counted["forward"]
