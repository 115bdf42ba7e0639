"""OpenKP end to end on the benchmark-style data (long pages, held-out template families): the
demo (generate, fine-tune, export, predict, score) beats the frequent-n-gram and first-words
baselines on every split, including the page families it never saw in training; the JSONL
covers every url of the input with Google's phrase lists; the command lines work on the demo's
files."""

import json
import os
import subprocess
import sys

import pytest

from tasks.openkp.task import TASK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "openkp", "tiny.yaml")
DEV_FILE = "OpenKPBenchmarkDev.jsonl"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("openkp_demo"))
  # The benchmark-style demo, reduced to keep the suite short: 1000 pages, 150 steps, 1,024
  # long tokens (the demo: 1500 pages, 600 steps, 4,096 tokens; docs/long_documents.md). At 250
  # and 400 steps the margins were about the same (F1@3 0.592 / 0.598 / 0.460 / 0.445 and
  # 0.644 / 0.612 / 0.468 / 0.454 on the four splits) for about 40 and 100 s more.
  summary = TASK.run_demo(CONFIG, out, num_train=1000, num_dev=150, seed=0, verbose=0,
                          data_style="benchmark",
                          overrides=["features.long_seq_len=1024", "features.global_seq_len=128",
                                     "train.num_train_steps=150", "train.warmup_steps=15"])
  return out, summary


def best_baseline(scores):
  return max(b["F1@3"] for b in scores["baseline_metrics"].values())


@pytest.mark.slow
def test_demo_beats_the_baselines(demo_run):
  # Measured with these settings, training seeds 0 / 1 / 2 (the seed also writes other data):
  # F1@3 0.537 / 0.551 / 0.579 against frequent n-grams 0.226 / 0.233 / 0.223 (first words 0).
  # The floors leave room for run-to-run variation of a tiny model.
  _, summary = demo_run
  assert summary["dev_metrics"]["F1@3"] >= best_baseline(summary) + 0.20
  # Dev is scored once, through the export (the export's own fidelity: test_openkp_model.py).
  assert summary["in_memory_dev_metrics"] is None


@pytest.mark.slow
def test_demo_beats_the_baselines_on_unseen_names_and_unseen_templates(demo_run):
  # Unseen names: the key phrases cannot be remembered, only read (seeds 0 / 1 / 2: +0.287 /
  # +0.312 / +0.356 over the best baseline). Unseen templates: encyclopedia, directory and blog
  # pages, kinds of page never seen in training (+0.207 / +0.178 / +0.173 and +0.162 / +0.246 /
  # +0.080; seed 0: 0.499 / 0.457 against 0.292 / 0.296).
  _, summary = demo_run
  assert set(summary["splits"]) == {"dev_unseen", "dev_unseen_templates",
                                    "test_unseen_templates"}
  scores = summary["splits"]["dev_unseen"]
  assert scores["dev_metrics"]["F1@3"] >= best_baseline(scores) + 0.20
  for split in ("dev_unseen_templates", "test_unseen_templates"):
    scores = summary["splits"][split]
    assert scores["dev_metrics"]["F1@3"] >= best_baseline(scores) + 0.06


@pytest.mark.slow
def test_prediction_lines_cover_every_url(demo_run):
  out, summary = demo_run
  with open(os.path.join(out, "data", DEV_FILE)) as f:
    urls = [json.loads(line)["url"] for line in f]
  with open(summary["prediction_file"]) as f:
    lines = [json.loads(line) for line in f]
  assert [line["url"] for line in lines] == list(dict.fromkeys(urls))
  # A page Google's converter rejects is predicted with no phrases: none of these.
  for line in lines:
    assert set(line) == {"url", "KeyPhrases"} and 1 <= len(line["KeyPhrases"]) <= 5
    keys = [" ".join(p).lower() for p in line["KeyPhrases"]]
    assert len(set(keys)) == len(keys)
    assert all(isinstance(p, list) and all(isinstance(w, str) and w for w in p)
               for p in line["KeyPhrases"])


@pytest.mark.slow
def test_command_lines(demo_run, tmp_path):
  out, summary = demo_run
  dev = os.path.join(out, "data", DEV_FILE)
  predictions = str(tmp_path / "pred.jsonl")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  subprocess.run([sys.executable, "-m", "tasks.openkp", "predict",
                  f"--export_dir={os.path.join(out, 'run', 'export')}", f"--input_file={dev}",
                  f"--output_file={predictions}"], check=True, cwd=ROOT, env=env,
                 capture_output=True)
  with open(predictions) as f, open(summary["prediction_file"]) as g:
    assert f.read() == g.read()
  result = subprocess.run([sys.executable, "-m", "tasks.openkp", "evaluate",
                           f"--prediction_file={predictions}", f"--gold_file={dev}"],
                          check=True, cwd=ROOT, env=env, capture_output=True, text=True)
  assert json.loads(result.stdout.strip().splitlines()[-1])["F1@3"] == pytest.approx(
      summary["dev_metrics"]["F1@3"])
