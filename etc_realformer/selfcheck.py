r"""Checks an ETC-RealFormer encoder end to end on a generated document, with no download.

  python -m etc_realformer.selfcheck                       # tiny model, L = 1024
  python -m etc_realformer.selfcheck --config=configs/models/base.yaml --long_len=4096

Builds the model from the config, encodes a synthetic packed batch (sentences with one global
token each, hard g2l, trailing padding), and reports: output shapes, the largest relative
difference between the blocked and the dense reference implementation, the time of a
forward and of a forward+backward pass for each, and the share of attention probability the
long tokens put on their own sentence's global token. Writes the resolved config and the
numbers as JSON when --output_dir is given.
"""

import json
import os
import time

from absl import app
from absl import flags
from absl import logging
import numpy as np

import etc_realformer  # sets TF_USE_LEGACY_KERAS before TensorFlow loads
import tensorflow as tf  # pylint: disable=g-bad-import-order

_DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "configs", "models", "tiny.yaml")
FLAGS = flags.FLAGS
flags.DEFINE_string("config", _DEFAULT_CONFIG, "Model config (.yaml or .json).")
flags.DEFINE_integer("long_len", 1024, "Long input length L.")
flags.DEFINE_integer("sentence_len", 16, "Word pieces per synthetic sentence (G = L / this).")
flags.DEFINE_integer("batch_size", 2, "Batch size.")
flags.DEFINE_integer("max_dense_len", 4096, "Skip the O(L^2) dense comparison above this L.")
flags.DEFINE_string("output_dir", None, "Where to write config.json and selfcheck.json.")
flags.DEFINE_integer("seed", 0, "Random seed for weights and the synthetic document.")


def synthetic_features(config, batch_size, long_len, sentence_len, seed):
  """A packed batch: sentences of `sentence_len` pieces, one global SENTENCE token each."""
  rng = np.random.default_rng(seed)
  global_len = max(1, long_len // sentence_len)
  used = long_len - long_len // 10  # the last 10% is padding
  token_ids = np.zeros((batch_size, long_len), np.int32)
  token_ids[:, :used] = rng.integers(1000 % config.vocab_size or 1, config.vocab_size,
                                     (batch_size, used))
  sentence_ids = np.minimum(np.arange(long_len) // sentence_len, global_len - 1)
  sentence_ids = np.broadcast_to(sentence_ids, (batch_size, long_len)).astype(np.int32)
  n_global = -(-used // sentence_len)
  global_token_ids = np.zeros((batch_size, global_len), np.int32)
  global_token_ids[:, :n_global] = 1  # SENTENCE
  long_breakpoints = np.zeros((batch_size, long_len), np.int32)
  long_breakpoints[:, used - 1] = 1
  global_breakpoints = np.zeros((batch_size, global_len), np.int32)
  global_breakpoints[:, n_global - 1] = 1
  return {"token_ids": token_ids, "global_token_ids": global_token_ids,
          "sentence_ids": sentence_ids, "long_breakpoints": long_breakpoints,
          "global_breakpoints": global_breakpoints}


def _timed(fn, repeats=2):
  fn()  # trace
  start = time.perf_counter()
  for _ in range(repeats):
    fn()
  return (time.perf_counter() - start) / repeats


def run_selfcheck(config, batch_size, long_len, sentence_len, max_dense_len, seed=0):
  """Returns a dict of the measured numbers (see the module docstring)."""
  tf.random.set_seed(seed)
  features = synthetic_features(config, batch_size, long_len, sentence_len, seed)
  report = {"long_len": long_len, "global_len": features["global_token_ids"].shape[1],
            "batch_size": batch_size}
  implementations = ["blocked"] + (["dense"] if long_len <= max_dense_len else [])
  models, outputs = {}, {}
  for impl in implementations:
    logging.info("building the %s model", impl)
    models[impl] = etc_realformer.EtcModel(config, implementation=impl)
    models[impl](features)
    if impl != "blocked":
      models[impl].set_weights(models["blocked"].get_weights())
    model = models[impl]
    forward = tf.function(lambda m=model: m(features))
    outputs[impl] = forward()

    def train_step(m=model):
      with tf.GradientTape() as tape:
        out = m(features, training=True)
        loss = tf.reduce_mean(out["long_output"] ** 2) + tf.reduce_mean(out["global_output"] ** 2)
      return tape.gradient(loss, m.trainable_variables)

    report[f"{impl}_forward_seconds"] = _timed(forward)
    report[f"{impl}_forward_backward_seconds"] = _timed(tf.function(train_step))
    logging.info("%s: forward %.3f s, forward+backward %.3f s", impl,
                 report[f"{impl}_forward_seconds"], report[f"{impl}_forward_backward_seconds"])
  out = outputs["blocked"]
  report["long_output_shape"] = out["long_output"].shape.as_list()
  report["global_output_shape"] = out["global_output"].shape.as_list()
  if "dense" in outputs:
    diffs = []
    for key in ("long_output", "global_output"):
      expected = outputs["dense"][key].numpy()
      diffs.append(np.abs(out[key].numpy() - expected).max() / np.abs(expected).max())
    report["blocked_vs_dense_max_relative_difference"] = float(max(diffs))
  # How much of each long token's global attention goes to its own sentence token (layer 0).
  probs = models["blocked"](features, return_attention_scores=True)["attention"][0]["long_probs"]
  b = config.local_radius + 1
  global_len = report["global_len"]
  to_global = probs[..., 3 * b:3 * b + global_len].numpy()  # [B, h, nb, b, G]
  to_global = to_global.transpose(0, 2, 3, 1, 4).reshape(batch_size, -1, config.num_attention_heads,
                                                          global_len)[:, :long_len]
  own = np.take_along_axis(to_global, features["sentence_ids"][:, :, None, None], axis=-1)
  valid = features["token_ids"] > 0
  report["layer0_own_sentence_share_of_global_attention"] = float(
      (own[..., 0].sum(-1) / np.maximum(to_global.sum((-1, -2)), 1e-9))[valid].mean())
  return report


def main(argv):
  del argv
  config = etc_realformer.EtcConfig.from_file(FLAGS.config)
  print(f"config {FLAGS.config}: {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
        f"radius {config.local_radius}, residual_attention={config.residual_attention}")
  report = run_selfcheck(config, FLAGS.batch_size, FLAGS.long_len, FLAGS.sentence_len,
                         FLAGS.max_dense_len, FLAGS.seed)
  width = max(len(k) for k in report)
  for key, value in report.items():
    shown = f"{value:.3g}" if isinstance(value, float) else value
    print(f"  {key:<{width}}  {shown}")
  diff = report.get("blocked_vs_dense_max_relative_difference")
  if diff is not None:
    verdict = "OK" if diff <= 1e-5 else "MISMATCH"
    print(f"blocked vs dense: {verdict} (max relative difference {diff:.2e}, limit 1e-5)")
  if FLAGS.output_dir:
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with open(os.path.join(FLAGS.output_dir, "config.json"), "w", encoding="utf-8") as f:
      f.write(config.to_json_string())
    with open(os.path.join(FLAGS.output_dir, "selfcheck.json"), "w", encoding="utf-8") as f:
      json.dump(report, f, indent=2)
  if diff is not None and diff > 1e-5:
    raise SystemExit(1)


if __name__ == "__main__":
  app.run(main)
