"""Converter report, resume after SIGKILL, MLM learning on the embedded corpus, CLI errors."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tf_keras

import pretrain_fixtures as fx
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import tfrecords
from etc_realformer.data.tokenization import WordPieceTokenizer
from etc_realformer.training import pretraining_run
from etc_realformer.training import loop


def test_converter_reports_and_skips_bad_records(tmp_path):
  corpus = tmp_path / "mixed.jsonl"
  lines = [json.dumps({"text": "The cat sat on the mat. The dog ran to the park."}),
           "{not json",
           json.dumps({"title": "no text field"}),
           json.dumps({"text": ""}),
           json.dumps({"text": "A bird sang in the tree. The sun was warm today."})]
  corpus.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe bad bytes\n")
  out = tmp_path / "shards"
  messages = []
  summary = pretraining_data.convert_corpus(
      [str(corpus)], str(out), WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB),
      fx.DATA_CONFIG, num_shards=2, log=messages.append)
  skipped = summary["corpus"]["skipped"]
  assert skipped == {"invalid json": 1, "missing or non-string 'text' field": 1,
                     "empty document": 1, "invalid utf-8": 1}
  assert summary["corpus"]["documents"] == 2 and summary["examples"]["sentences"] == 4
  # One file, two shards: part k keeps the documents d with d % 2 == k, so each shard holds one
  # of the two short documents in a row of its own; the report names the skipped lines.
  assert summary["written"] == 2
  text = "\n".join(messages)
  assert "mixed.jsonl:2" in text and "invalid json" in text
  config, vocab_size = tfrecords.read_data_config(str(out))
  assert config == fx.DATA_CONFIG and vocab_size == 1085
  files = tfrecords.expand_files(str(out / "*.tfrecord"))
  assert len(files) == 2 and [tfrecords.count_records([f]) for f in files] == [1, 1]
  assert not any(name.endswith(".tmp") for name in os.listdir(out))


def test_converter_with_nothing_usable_is_an_error(tmp_path):
  corpus = tmp_path / "empty.jsonl"
  corpus.write_text("{broken\n")
  with pytest.raises(ValueError, match="(?s)no pretraining examples.*empty.jsonl:1: invalid json"):
    pretraining_data.convert_corpus(
        [str(corpus)], str(tmp_path / "out"),
        WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB), fx.DATA_CONFIG, log=lambda _: None)


def test_dataset_slices_are_contiguous_parts_of_the_global_batch(tmp_path):
  data_dir = fx.make_tiny_data(str(tmp_path))
  config, _ = tfrecords.read_data_config(data_dir)
  files = tfrecords.expand_files(os.path.join(data_dir, "*.tfrecord"))
  full = iter(tfrecords.make_dataset(files, config, 4, shuffle_buffer=50, seed=1))
  parts = [iter(tfrecords.make_dataset(files, config, 4, 2, i, shuffle_buffer=50, seed=1))
           for i in (0, 1)]
  skipped = iter(tfrecords.make_dataset(files, config, 4, shuffle_buffer=50, seed=1,
                                        skip_batches=2))
  batches = [next(full) for _ in range(3)]
  for step in range(3):
    halves = [next(p) for p in parts]
    np.testing.assert_array_equal(
        np.concatenate([h["token_ids"] for h in halves]), batches[step]["token_ids"])
  np.testing.assert_array_equal(next(skipped)["token_ids"], batches[2]["token_ids"])
  with pytest.raises(ValueError, match="global_batch_size"):
    tfrecords.make_dataset(files, config, 3, num_slices=2)


def test_resume_after_sigkill_matches_an_uninterrupted_run(tmp_path):
  data_dir = fx.make_tiny_data(str(tmp_path))
  # Started from a BERT folder (lifted at step 0), as the ETC-large recipe starts from RoBERTa.
  bert_table = fx.bert_folder(str(tmp_path / "bert"))
  config = fx.tiny_run_config(data_dir, num_train_steps=6, checkpoint_every=2, warmup_steps=2,
                              init_checkpoint=str(tmp_path / "bert"))
  config["model"]["vocab_size"] = len(bert_table)
  # Uninterrupted (a), and killed with SIGKILL right after the step-4 checkpoint then started
  # again (b).
  a, b, metrics = fx.killed_and_resumed(tmp_path, config, kill_at_step=4)
  ckpts = sorted(f for f in os.listdir(tmp_path / "b" / "checkpoints") if f.endswith(".index"))
  assert ckpts == ["ckpt-2.index", "ckpt-4.index", "ckpt-6.index"]
  assert metrics["start_step"] == 4 and metrics["final_step"] == 6
  assert set(a) == set(b)
  for name in a:  # same ops, same data, same optimizer state: identical on CPU
    np.testing.assert_allclose(b[name], a[name], rtol=0, atol=1e-7, err_msg=name)
  # Both started from the lifted BERT, and the resumed launch went on from its checkpoint rather
  # than lifting again (which would have put BERT's weights back at step 4, and b != a).
  fx.assert_trained_from_bert(b, bert_table)
  # A finished run started again has nothing left to do.
  result = fx.run_worker(str(tmp_path / "c.json"))
  assert result.returncode == 0, result.stderr[-3000:]
  with open(tmp_path / "b.npz.json") as f:
    assert json.load(f)["start_step"] == 6


class _Losses(tf_keras.callbacks.Callback):

  def __init__(self):
    super().__init__()
    self.mlm = []

  def on_train_batch_end(self, batch, logs=None):
    self.mlm.append(float(logs["mlm_loss"]))


@pytest.mark.slow
def test_mlm_loss_falls_within_50_steps_on_the_embedded_corpus(tmp_path):
  data_config = pe.PretrainingDataConfig(long_seq_len=128, global_seq_len=16,
                                         max_predictions_per_seq=24, max_cpc_per_seq=2,
                                         cpc_sentence_len=16)
  data_dir = pretraining_data.ensure_embedded_data(str(tmp_path), data_config,
                                                   log=lambda _: None)
  config = fx.tiny_run_config(data_dir, num_train_steps=50, warmup_steps=5, batch_size=8,
                              log_every=10, checkpoint_every=50, optimizer="adamw",
                              learning_rate=0.005)
  losses = _Losses()
  pretraining_run.run_pretraining(config, str(tmp_path / "run"), verbose=0,
                                  extra_callbacks=[losses])
  first, last = np.mean(losses.mlm[:5]), np.mean(losses.mlm[-5:])
  # ln(1088) = 6.99 at the start; the stated margin is 1 nat within 50 steps.
  assert first > 6.5 and last < first - 1.0, (first, last)
  assert os.path.exists(tmp_path / "run" / "final" / "encoder.index")
  assert os.listdir(tmp_path / "run" / "logs")  # TensorBoard event file


def _cli(args, tmp_path):
  env = fx.worker_env()
  return subprocess.run([sys.executable, "-m", "etc_realformer.pretrain", *args], env=env,
                        capture_output=True, text=True, timeout=300, check=False,
                        cwd=str(tmp_path))


def test_cli_errors_name_the_problem(tmp_path):
  bad = tmp_path / "bad.yaml"
  bad.write_text("model: " + os.path.join(fx.ROOT, "configs", "models", "tiny.yaml")
                 + "\ntrain:\n  num_train_step: 3\n")
  result = _cli([f"--config={bad}", f"--output_dir={tmp_path / 'out'}"], tmp_path)
  assert result.returncode != 0
  assert "num_train_step" in result.stderr and "Traceback" not in result.stderr
  result = _cli([f"--output_dir={tmp_path / 'out'}", "--set", "train.jit_compile=true",
                 "--distribution=none", "--set", "nonsense"], tmp_path)
  assert result.returncode != 0 and "--set 'nonsense'" in result.stderr
  assert "Traceback" not in result.stderr


def test_jit_compile_with_horovod_is_refused(tmp_path):
  class FakeHorovod:
    kind = "horovod"
  config = fx.tiny_run_config("unused", jit_compile=True)
  with pytest.raises(ValueError, match="jit_compile"):
    pretraining_run.run_pretraining(config, str(tmp_path), FakeHorovod())


@pytest.mark.parametrize("switch", [{"jit_compile": True}, {"mixed_precision": "mixed_float16"},
                                    {"mixed_precision": "mixed_bfloat16"}])
def test_xla_and_mixed_precision_switches_train(tmp_path, switch):
  data_dir = fx.make_tiny_data(str(tmp_path), num_documents=20)
  config = fx.tiny_run_config(data_dir, num_train_steps=3, **switch)
  # One layer: each switch changes every layer alike, and XLA's compile time grows with the graph.
  config["model"]["num_hidden_layers"] = 1
  losses = _Losses()
  metrics = pretraining_run.run_pretraining(config, str(tmp_path / "run"), verbose=0,
                                            extra_callbacks=[losses])
  assert metrics["final_step"] == 3 and len(losses.mlm) == 3
  assert all(np.isfinite(losses.mlm)) and 6.0 < losses.mlm[0] < 8.0
  assert tf_keras.mixed_precision.global_policy().name == "float32"  # put back afterwards


def test_per_worker_batch_scales_the_learning_rate():
  class TwoWorkers:
    kind, num_workers = "none", 2

    def wrap_optimizer(self, optimizer):
      return optimizer

  train = pretraining_run.TrainConfig(per_worker_batch_size=4, learning_rate=0.01,
                                      warmup_steps=0, num_train_steps=10)
  optimizer = loop.make_optimizer(train, TwoWorkers())
  assert abs(float(optimizer._learning_rate(0)) - 0.02) < 1e-9  # pylint: disable=protected-access
  train = pretraining_run.TrainConfig(batch_size=8, learning_rate=0.01, warmup_steps=0,
                                      num_train_steps=10)
  optimizer = loop.make_optimizer(train, TwoWorkers())
  assert abs(float(optimizer._learning_rate(0)) - 0.01) < 1e-9  # pylint: disable=protected-access
  # The logged learning rate is the schedule's value at the current step.
  from etc_realformer.training.callbacks import current_learning_rate  # pylint: disable=g-import-not-at-top
  optimizer.iterations.assign(5)
  assert abs(current_learning_rate(optimizer) - 0.005) < 1e-9
