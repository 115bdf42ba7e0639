"""The README's main job: run_selfcheck on the tiny config."""

import os

import numpy as np

from etc_realformer import EtcConfig
from etc_realformer.selfcheck import run_selfcheck, synthetic_features

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_synthetic_features_layout():
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml"))
  f = synthetic_features(config, 1, 160, 16, 0)
  assert f["global_token_ids"].shape == (1, 10)
  used = 160 - 16  # the last 10% (16 tokens) is padding
  assert (f["token_ids"][0, :used] > 0).all() and (f["token_ids"][0, used:] == 0).all()
  assert f["long_breakpoints"][0].nonzero()[0].tolist() == [used - 1]
  np.testing.assert_array_equal(f["sentence_ids"][0, :32], [0] * 16 + [1] * 16)
  assert f["global_token_ids"][0].tolist() == [1] * 9 + [0]


def test_selfcheck_blocked_matches_dense():
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml"))
  report = run_selfcheck(config, batch_size=1, long_len=96, sentence_len=8, max_dense_len=128)
  assert report["long_output_shape"] == [1, 96, 32]
  assert report["global_output_shape"] == [1, 12, 32]
  assert report["blocked_vs_dense_max_relative_difference"] <= 1e-5
  assert 0.0 < report["layer0_own_sentence_share_of_global_attention"] <= 1.0
