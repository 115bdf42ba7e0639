"""HotpotQA end to end on the benchmark-style data (ten long paragraphs, held-out template
families): the demo (generate, fine-tune, export, predict, score) beats the trivial baseline,
also on questions about unseen names, and finds supporting facts in paragraph families it never
saw; CLIs; pretrained-encoder initialisation."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import hotpot_fixtures as hf
from etc_realformer.config import EtcConfig
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import initialization
from etc_realformer.training import run_config as run_config_lib
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa.model import HotpotQaModel
from tasks.hotpotqa.task import TASK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "hotpotqa", "tiny.yaml")
TRAIN_FILE, DEV_FILE = "benchmark_train.json", "benchmark_dev.json"
# 2e-3, the rate the margins below were measured at (the demo's 1,000 steps use 1e-3).
OVERRIDES = ["features.long_seq_len=1536", "features.global_seq_len=96",
             "train.num_train_steps=300", "train.warmup_steps=30", "train.learning_rate=0.002"]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("demo"))
  # The benchmark-style demo, reduced to keep the suite short: 1,000 questions, 300 steps,
  # 1,536 long tokens (the demo: 3,000 questions, 1,000 steps, 2,048; docs/long_documents.md).
  # 1,500 questions and 500 steps took 316 s of the suite's worker time, this run about 180 s.
  summary = TASK.run_demo(CONFIG, out, num_train=1000, num_dev=150, seed=0, verbose=0,
                          data_style="benchmark", overrides=OVERRIDES)
  return out, summary


def margins(scores):
  model, base = scores["dev_metrics"], scores["baseline_metrics"]
  return {key: model[key] - base[key] for key in ("f1", "sp_f1", "joint_f1")}


@pytest.mark.slow
def test_demo_beats_the_trivial_baseline(demo_run):
  # Margins over the baseline (it answers "yes" and takes the first sentence of every
  # paragraph) measured with these settings, training seeds 0 / 1 / 2 (the seed also writes
  # other data): answer F1 +0.174 / +0.093 / +0.110, sp F1 +0.092 / +0.215 / +0.132, joint F1
  # +0.054 / +0.053 / +0.043 (seed 0: 0.247 / 0.200 / 0.068 against 0.073 / 0.108 / 0.014).
  # 500 steps on 1,500 questions gave seed 0 0.377 / 0.481 / 0.207. The floors are under the
  # smallest margin: a tiny model varies from run to run.
  _, summary = demo_run
  gains = margins(summary)
  assert gains["f1"] >= 0.06 and gains["sp_f1"] >= 0.03 and gains["joint_f1"] >= 0.025
  assert summary["in_memory_dev_metrics"]["f1"] == pytest.approx(summary["dev_metrics"]["f1"],
                                                                 abs=0.01)


@pytest.mark.slow
def test_demo_beats_the_baseline_on_unseen_names_and_unseen_templates(demo_run):
  # Unseen names: the answers cannot be remembered, only read. Unseen templates: paragraphs
  # written by families never seen in training. Answer / sp F1 margins over the baseline with
  # these settings, training seeds 0 / 1 / 2:
  #   dev_unseen             +0.094 / +0.173 / +0.114 answers, +0.154 / +0.204 / +0.126 sp
  #   dev_unseen_templates   +0.002 / +0.083 / +0.022 answers, +0.147 / +0.068 / +0.074 sp
  #   test_unseen_templates  +0.015 / +0.039 / +0.041 answers, +0.153 / +0.074 / +0.079 sp
  # The held-out families' supporting facts are found on every seed; their answers are level
  # with the "yes" baseline on seed 0, so they are not asserted (docs/long_documents.md).
  _, summary = demo_run
  assert set(summary["splits"]) == {"dev_unseen", "dev_unseen_templates",
                                    "test_unseen_templates"}
  gains = margins(summary["splits"]["dev_unseen"])
  assert gains["f1"] >= 0.06 and gains["sp_f1"] >= 0.08, gains
  for split in ("dev_unseen_templates", "test_unseen_templates"):
    gains = margins(summary["splits"][split])
    assert gains["sp_f1"] >= 0.03, (split, gains)


@pytest.mark.slow
def test_prediction_file_is_in_the_official_format(demo_run):
  out, summary = demo_run
  gold = metrics_lib.load_json(os.path.join(out, "data", DEV_FILE), "gold")
  with open(summary["prediction_file"], encoding="utf-8") as f:
    prediction = json.load(f)
  assert set(prediction) == {"answer", "sp"}
  assert set(prediction["answer"]) == set(prediction["sp"]) == {g["_id"] for g in gold}
  titles = {g["_id"]: {t for t, _ in g["context"]} for g in gold}
  for qas_id, facts in prediction["sp"].items():
    for title, index in facts:
      assert title in titles[qas_id] and isinstance(index, int)
  assert metrics_lib.evaluate(gold, prediction) == summary["dev_metrics"]


@pytest.mark.slow
def test_finished_run_is_not_trained_again(demo_run):
  out, _ = demo_run
  config = run_config_lib.apply_overrides(TASK.load_run_config(CONFIG), OVERRIDES)
  config["train"].update(train_file=os.path.join(out, "data", TRAIN_FILE))
  metrics = TASK.run_finetuning(config, os.path.join(out, "run"), verbose=0)
  assert metrics["start_step"] == metrics["final_step"] == config["train"]["num_train_steps"]


@pytest.mark.slow
def test_predict_cli_answers_every_id_of_a_partly_broken_file(demo_run, tmp_path):
  out, _ = demo_run
  with open(os.path.join(out, "data", DEV_FILE), encoding="utf-8") as f:
    records = json.load(f)[:3]
  records[1]["context"] = []                       # unusable: still gets an (empty) answer
  records[2]["context"][0][1].append(17)           # a non-string sentence: repaired
  del records[0]["answer"]                         # test files have no labels
  path = tmp_path / "input.json"
  path.write_text(json.dumps(records), encoding="utf-8")
  result = subprocess.run(
      [sys.executable, "-m", "tasks.hotpotqa", "predict", f"--export_dir={out}/run/export",
       f"--input_file={path}", f"--output_file={tmp_path}/pred.json"],
      capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  with open(tmp_path / "pred.json", encoding="utf-8") as f:
    prediction = json.load(f)
  assert sorted(prediction["answer"]) == sorted(r["_id"] for r in records)
  assert prediction["answer"][records[1]["_id"]] == "" and prediction["sp"][records[1]["_id"]] == []
  assert "1 x empty context" in result.stderr and "1 x non-string sentence" in result.stderr


def test_evaluate_cli_scores_and_rejects_bad_files(tmp_path):
  gold = tmp_path / "gold.json"
  gold.write_text(json.dumps([hf.raw_record(_id="a"), hf.raw_record(_id="b", answer="no")]))
  pred = tmp_path / "pred.json"
  pred.write_text(json.dumps({"answer": {"a": "ann"}, "sp": {"a": [["Ann", 0], ["Zoë", 0]]}}))
  cmd = [sys.executable, "-m", "tasks.hotpotqa", "evaluate", f"--prediction_file={pred}",
         f"--gold_file={gold}"]
  result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  scores = json.loads(result.stdout.strip().splitlines()[-1])
  # "a" is exactly right, "b" is missing: every metric averages to 1/2.
  assert all(value == 0.5 for value in scores.values()) and len(scores) == 12
  assert "missing from the prediction: 1 answer(s)" in result.stdout
  pred.write_text("{not json")
  result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode != 0 and "not valid JSON" in result.stderr
  assert "Traceback" not in result.stderr


def test_encoder_is_initialised_from_a_pretraining_checkpoint(tmp_path):
  encoder_config = dict(vocab_size=200, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, local_radius=3,
                        relative_pos_max_distance=2, relative_vocab_size=8)
  config = EtcConfig.from_dict(encoder_config)
  pretrained = HotpotQaModel(config)
  pretrained.build()
  directory = tmp_path / "final"
  tf.train.Checkpoint(encoder=pretrained.encoder).write(str(directory / "encoder"))
  atomic_write_json(str(directory / "etc_config.json"), config.to_dict())
  model = HotpotQaModel(config)
  model.build()
  initialization.make_initializer(str(tmp_path), config)(model)   # a run directory is accepted too
  for a, b in zip(pretrained.encoder.weights, model.encoder.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  other = EtcConfig.from_dict(dict(encoder_config, hidden_size=32))
  with pytest.raises(ValueError, match="hidden_size 16 != 32"):
    initialization.make_initializer(str(directory / "encoder"), other)
  with pytest.raises(FileNotFoundError, match="no encoder checkpoint"):
    initialization.make_initializer(str(tmp_path / "nothing"), config)
