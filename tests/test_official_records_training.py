"""Training from TFRecords written by Google's ETC pipeline (`train.train_records`).

For each task, the fixture's tf.Examples (Google's converter outputs for the records in
tests/fixtures/official_features/<task>, every feature under its official name and kind) are
written to a TFRecord file the way Google's pipeline writes them (gzip-compressed or not); a
fine-tuning run with `train.train_records` pointing at that file
trains a tiny model on them without converting anything: the loss is finite, the run counts the
records and exports. NQ's run is in tests/test_nq_layout.py
(test_finetunes_from_train_records_written_by_googles_pipeline), which also predicts and scores
through the export.
"""

import math
import os

import pytest

from official_fixtures import FIXTURES, ROOT, convert_sets, write_google_records

TASKS = ("hotpotqa", "openkp", "wikihop")


@pytest.mark.parametrize("task", TASKS)
def test_training_reads_records_written_by_googles_pipeline(task, tmp_path):
  task_module = __import__(f"tasks.{task}.task", fromlist=["TASK"]).TASK
  gzip = task == "hotpotqa"   # one case reads a compressed file
  records = str(tmp_path / ("google-00000-of-00001.tfrecord" + (".gz" if gzip else "")))
  count = write_google_records(task, records, gzip)
  vocab = os.path.join(FIXTURES, "nq", "vocab.txt") if task == "nq" else os.path.join(
      ROOT, "pretrained", "tiny_english", "vocab.txt")
  run_config = task_module.load_run_config(os.path.join(ROOT, "configs", task, "tiny.yaml"))
  run_config["model"].update(vocab_size=2048, num_hidden_layers=1, hidden_size=16,
                             num_attention_heads=2, intermediate_size=32)
  run_config["model"].pop("init_checkpoint", None)
  run_config["features"] = {**{k: v for k, v in run_config["features"].items()
                               if k in ("long_seq_len", "global_seq_len")},
                            **convert_sets(task)}
  run_config["train"].update(train_file="", dev_file="", train_records=records,
                             vocab_file=vocab, init_checkpoint="", batch_size=2,
                             num_train_steps=2, warmup_steps=0, log_every=1,
                             learning_rate=1e-3)
  out = str(tmp_path / "run")
  metrics = task_module.run_finetuning(run_config, out, verbose=0)
  assert metrics["train_examples"] == count
  assert not os.path.exists(os.path.join(out, "train_records"))   # nothing was converted
  assert math.isfinite(metrics["loss"])
  assert os.path.isdir(os.path.join(out, "export"))
