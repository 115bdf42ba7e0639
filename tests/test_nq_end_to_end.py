"""Natural Questions end to end on the benchmark-style data (pages of about 6,000 pieces with
their HTML, 2,048-token windows, held-out template families): the demo (generate, fine-tune,
export, predict, official scorer) beats the baselines, also in the page families it never saw;
the prediction file is in the official format; CLIs; the simplified training format gives the
same windows as the original."""

import gzip
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import nq_fixtures as nf
from etc_realformer.training import run_config as run_config_lib
from synthetic_data import nq as synthetic
from tasks.nq import features as fl
from tasks.nq import metrics as metrics_lib
from tasks.nq.task import TASK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "nq", "tiny.yaml")
# 64 global tokens instead of tiny.yaml's 128: the synthetic pages' windows use at most 46
# (CLS, question pieces, one per candidate run), and the encoder masks the rest, so the model is
# the same up to float rounding (seed 1: held-out long F1 0.031 / 0.015 with 128, 0.030 / 0.015
# with 64) for 29% less training time. Real NQ pages need tiny.yaml's 128.
OVERRIDES = ["train.num_train_steps=400", "train.warmup_steps=40", "train.checkpoint_every=400",
             "features.global_seq_len=64"]
DEV_FILE = "nq-benchmark-dev.jsonl.gz"
HELD_OUT = ("dev_unseen_templates", "test_unseen_templates")
LONG, SHORT = "long-best-threshold-f1", "short-best-threshold-f1"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("nq_demo"))
  # The benchmark-style demo, reduced to keep the suite short: 1,000 training pages, 100 per
  # evaluated split, 400 steps (the demo: 1,500 pages, 200 per split, 800 steps;
  # docs/long_documents.md). Windows stay at the demo's 2,048 tokens: at 1,024 the model (then
  # with the package layout, since removed) did not beat the first paragraph on the held-out
  # families.
  summary = TASK.run_demo(CONFIG, out, num_train=1000, num_dev=100, seed=0, verbose=0,
                          data_style="benchmark", overrides=OVERRIDES)
  return out, summary


def read_gold(path):
  with gzip.open(path, "rt", encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def scores(summary, split):
  entry = summary if split == "dev" else summary["splits"][split]
  base = entry["baseline_metrics"]
  assert base["always null"][LONG] == base["always null"][SHORT] == 0.0
  return entry["dev_metrics"], base["first paragraph"]


@pytest.mark.slow
def test_demo_beats_the_baselines(demo_run):
  # Measured with these settings (Google's layout with tiny.yaml's options, pretrained start,
  # deterministic training, one intra-op thread): long / short F1 0.186 / 0.022 (before the
  # two-column lookups' cheaper gradient, ops/lookup.py: 0.145 / 0.019, and 0.143 / 0.025 with
  # 128 global tokens); first paragraph 0.043 / 0; always null 0 / 0.
  _, summary = demo_run
  model, first = scores(summary, "dev")
  assert model[LONG] >= first[LONG] + 0.05
  assert model[SHORT] > 0.0
  # Dev is scored once, through the export (the export's own fidelity: test_nq_model.py).
  assert summary["in_memory_dev_metrics"] is None


@pytest.mark.slow
def test_demo_beats_the_baselines_on_unseen_names_and_unseen_templates(demo_run):
  # Measured: long / short F1 0.145 / 0.000 (dev_unseen_templates) and 0.201 / 0.022
  # (test_unseen_templates) on an AVX2 machine, 0.116 / 0.000 and 0.191 / 0.000 on an AVX-512
  # one (the same deterministic run rounds differently there); first paragraph 0.025 and 0.095
  # long. Both splits come from the same two held-out families (100 pages each, about 50 with a
  # long answer), so the first paragraph's own score moves by 0.07 between them. Long answers
  # beat it on each split (by +0.09 to +0.12; the whole demo: +0.08 to +0.13 over three seeds;
  # this reduced run's floors hold on seed 0, not on seeds 1 and 2: docs/long_documents.md).
  # Short answers on these families are Google's layout's weak point (the whole demo:
  # 0.015-0.056; this reduced run: 0.000 / 0.022 on one machine, 0.000 / 0.000 on the other), so
  # they are not asserted here; the dev and dev_unseen tests assert them.
  _, summary = demo_run
  for split in HELD_OUT:
    model, first = scores(summary, split)
    assert model[LONG] >= first[LONG] + 0.05, split
  # Pages about unseen names in the training families: measured 0.127 / 0.073, the first
  # paragraph 0.067 (the whole demo: 0.105-0.125 against 0.073).
  model, first = scores(summary, "dev_unseen")
  assert model[LONG] >= first[LONG] + 0.03 and model[SHORT] > 0.0


@pytest.mark.slow
def test_prediction_file_is_in_the_official_format(demo_run):
  out, summary = demo_run
  gold = {r["example_id"]: r for r in read_gold(os.path.join(out, "data", DEV_FILE))}
  with open(summary["prediction_file"], encoding="utf-8") as f:
    content = json.load(f)
  assert list(content) == ["predictions"]
  entries = content["predictions"]
  assert sorted(e["example_id"] for e in entries) == sorted(gold)
  for e in entries:
    assert set(e) == {"example_id", "long_answer", "long_answer_score", "short_answers",
                      "short_answers_score", "yes_no_answer"}
    assert isinstance(e["example_id"], int)
    assert all(isinstance(e[k], float) and math.isfinite(e[k])
               for k in ("long_answer_score", "short_answers_score"))
    record = gold[e["example_id"]]
    tokens = record["document_tokens"]
    long_answer = e["long_answer"]
    candidate_spans = [{k: c[k] for k in ("start_token", "end_token", "start_byte", "end_byte")}
                       for c in record["long_answer_candidates"]]
    assert long_answer in candidate_spans                   # snapped to a candidate
    for short in e["short_answers"]:                        # Google's: tokens, no bytes
      assert 0 <= short["start_token"] < short["end_token"] <= len(tokens)
      assert short["start_byte"] == short["end_byte"] == -1
    assert e["yes_no_answer"] in ("NONE", "yes", "no")      # Google's lower case
    assert not (e["yes_no_answer"] != "NONE" and e["short_answers"])
  assert metrics_lib.evaluate(os.path.join(out, "data", DEV_FILE),
                              summary["prediction_file"]) == summary["dev_metrics"]


@pytest.mark.slow
def test_finished_run_is_not_trained_again(demo_run):
  out, _ = demo_run
  config = TASK.load_run_config(CONFIG)
  run_config_lib.apply_overrides(config, OVERRIDES)
  config["train"].update(train_file=os.path.join(out, "data", "nq-benchmark-train.jsonl.gz"))
  metrics = TASK.run_finetuning(config, os.path.join(out, "run"), verbose=0)
  assert metrics["start_step"] == metrics["final_step"] == config["train"]["num_train_steps"]


@pytest.mark.slow
def test_predict_cli_answers_every_id_of_a_partly_broken_file(demo_run, tmp_path):
  out, _ = demo_run
  records_ = read_gold(os.path.join(out, "data", DEV_FILE))[:4]
  records_[1]["long_answer_candidates"] = []                      # unusable: a null answer
  records_[2]["long_answer_candidates"][0]["start_byte"] += 1      # offsets disagree
  path = nf.write_jsonl_gz(records_, str(tmp_path / "input.jsonl.gz"))
  result = subprocess.run(
      [sys.executable, "-m", "tasks.nq", "predict", f"--export_dir={out}/run/export",
       f"--input_file={path}", f"--output_file={tmp_path}/pred.json"],
      capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  with open(tmp_path / "pred.json", encoding="utf-8") as f:
    entries = json.load(f)["predictions"]
  assert [e["example_id"] for e in entries] == [r["example_id"] for r in records_]
  for broken in (entries[1], entries[2]):
    assert broken["long_answer"]["start_token"] == -1 and broken["short_answers"] == []
    assert broken["long_answer_score"] == min(e["long_answer_score"] for e in entries)
  assert "1 x missing candidates (null prediction)" in result.stderr
  assert "1 x offsets disagree with document (null prediction)" in result.stderr
  assert f"example_id {records_[2]['example_id']}): field 'long_answer_candidates[0]'" in \
      result.stderr
  # The official scorer accepts the file (the gold is the same four records).
  scores = metrics_lib.evaluate(path, str(tmp_path / "pred.json"))
  assert set(metrics_lib.MAIN_KEYS) <= set(scores)


def test_evaluate_cli_scores_and_rejects_bad_files(tmp_path):
  tokens = ["<P>", "a", "b", "</P>", "<P>", "c", "</P>"]
  gold = nf.write_jsonl_gz([
      nf.record(1, "q", tokens, [nf.annotation(tokens, 0, [(2, 3)])] * 5),
      nf.record(2, "q", tokens, [nf.annotation(tokens, 1)] * 5)], str(tmp_path / "g.jsonl.gz"))
  pred = tmp_path / "pred.json"
  null = {"start_token": -1, "end_token": -1, "start_byte": -1, "end_byte": -1}
  pred.write_text(json.dumps({"predictions": [
      {"example_id": 1, "long_answer": nf.span(tokens, 0, 4), "long_answer_score": 2.0,
       "short_answers": [nf.span(tokens, 2, 3)], "short_answers_score": 1.0,
       "yes_no_answer": "NONE"},
      {"example_id": 2, "long_answer": null, "long_answer_score": 0.0, "short_answers": [],
       "short_answers_score": 0.0, "yes_no_answer": "NONE"}]}))
  cmd = [sys.executable, "-m", "tasks.nq", "evaluate", f"--gold_path={gold}",
         f"--predictions_path={pred}"]
  result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  # Long: 1 right of 1 predicted, 2 gold -> F1 2/3. Short: 1 right of 1, 1 gold -> 1.
  assert "long-best-threshold-f1: 0.6667" in result.stdout
  assert "short-best-threshold-f1: 1.0000" in result.stdout
  scores = json.loads(result.stdout.strip().splitlines()[-1])
  assert scores["long-best-threshold-f1"] == pytest.approx(2 / 3)
  pred.write_text("{not json")
  result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode != 0 and "pred.json: not JSON" in result.stderr
  assert "Traceback" not in result.stderr


def test_simplified_training_file_gives_the_same_windows(tmp_path):
  records = synthetic.generate_examples(12, seed=3, preset="short")
  files = {"train": nf.write_jsonl_gz(records, str(tmp_path / "train.jsonl.gz")),
           "train_simplified": nf.write_jsonl_gz([synthetic.to_simplified(r) for r in records],
                                                 str(tmp_path / "train-simplified.jsonl.gz"))}
  tok = nf.tokenizer(tmp_path)
  vocab_file = str(tmp_path / "vocab.txt")
  config = fl.NqFeatureConfig(long_seq_len=128, global_seq_len=32, doc_stride=64,
                              max_question_pieces=16, null_window_keep_rate=0.5)
  infos, windows = [], []
  for name in ("train", "train_simplified"):
    directory = str(tmp_path / name)
    infos.append(TASK.convert_file(files[name], directory, tok, vocab_file, config,
                                   log=lambda _: None))
    import tensorflow as tf   # pylint: disable=import-outside-toplevel
    parse = TASK.parse_fn(config)
    windows.append([{k: v.numpy() for k, v in parse(tf.constant([r])).items()}
                    for r in tf.data.TFRecordDataset(TASK.record_files(directory))
                    .as_numpy_iterator()])
  assert infos[0]["counts"] == infos[1]["counts"] and infos[0]["written"] > 12
  assert infos[0]["counts"]["null windows dropped"] > 0
  for a, b in zip(*windows):
    for key in a:
      np.testing.assert_array_equal(a[key], b[key])
  # A second conversion with the same input and config is reused.
  again = TASK.convert_file(files["train"], str(tmp_path / "train"), tok, vocab_file, config,
                            log=lambda _: None)
  assert again == infos[0]
