"""WikiHop end to end on the benchmark-style data (long items, held-out template families): the
demo (generate, fine-tune, export, predict, score) beats random guessing by far on every split
and the most-mentioned-candidate baseline on unseen names and on the held-out template families'
items pooled; the prediction file covers every id; the command lines work on
the demo's files."""

import json
import os
import subprocess
import sys

import pytest

from tasks.wikihop.task import TASK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "wikihop", "tiny.yaml")
DEV_FILE = "benchmark_dev.json"
OVERRIDES = ["train.num_train_steps=400", "train.warmup_steps=40", "train.learning_rate=0.001"]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("wikihop_demo"))
  # The benchmark-style demo, reduced to keep the suite short: 1,200 items and 400 steps at the
  # demo's lengths, at twice its learning rate (the demo: 2,000 items, 1,000 steps at 5e-4;
  # this run at 5e-4 stayed under the baseline on one held-out split: 0.245 against 0.275).
  summary = TASK.run_demo(CONFIG, out, num_train=1200, num_dev=200, seed=0, verbose=0,
                          data_style="benchmark", overrides=OVERRIDES)
  return out, summary


def _pooled(scores_by_split, key):
  """Accuracy over the items of several splits together (correct / total)."""
  metrics = [scores[key] for scores in scores_by_split]
  return sum(m["correct"] for m in metrics) / sum(m["total"] for m in metrics)


# The reduced run's model is only a few points above counting mentions, and by how much moves
# with the training seed and with the machine (the same seed, the same code, other CPUs: other
# last bits of the gradients, then another model). Seeds 0 / 1 / 2 on one machine: dev 0.360 /
# 0.370 / 0.340, dev_unseen 0.340 / 0.390 / 0.345, dev_unseen_templates 0.260 / 0.290 / 0.285,
# test_unseen_templates 0.355 / 0.370 / 0.305 against most mentioned 0.335 / 0.300 / 0.275 /
# 0.260; seed 0 on another machine 0.385 / 0.395 / 0.350 / 0.360. With the two-column relative
# lookups (ops/lookup.py: other last bits again), seed 0 on the first machine: 0.375 / 0.395 /
# 0.345 / 0.355; with their cheaper gradient (the same module, later): 0.365 / 0.380 / 0.335 /
# 0.350. One split of 200 items is too
# few to hold the comparison with most mentioned split by split (a binomial standard error of
# about 0.033), so it is made on the splits' items pooled; the floor over random guessing holds
# split by split.
@pytest.mark.slow
def test_demo_beats_the_baselines(demo_run):
  out, summary = demo_run
  with open(os.path.join(out, "data", DEV_FILE)) as f:
    dev = json.load(f)
  chance = sum(1 / len(item["candidates"]) for item in dev) / len(dev)
  assert chance == pytest.approx(summary["chance_accuracy"])
  assert summary["dev_metrics"]["accuracy"] >= chance + 0.20
  # All four splits, 800 items: 0.329 / 0.355 / 0.319 (seeds 0 / 1 / 2) against 0.2925.
  splits = [summary] + list(summary["splits"].values())
  assert _pooled(splits, "dev_metrics") > _pooled(splits, "baseline_metrics")
  # Dev is scored once, through the export (the export's own fidelity: test_wikihop_model.py).
  assert summary["in_memory_dev_metrics"] is None


@pytest.mark.slow
def test_demo_reads_unseen_names_and_unseen_templates(demo_run):
  # Items about names never seen in training, and items written by template families held out
  # of training (figures above the previous test).
  _, summary = demo_run
  assert set(summary["splits"]) == {"dev_unseen", "dev_unseen_templates",
                                    "test_unseen_templates"}
  for split, scores in summary["splits"].items():
    assert scores["dev_metrics"]["accuracy"] >= scores["chance_accuracy"] + 0.15, split
  unseen = summary["splits"]["dev_unseen"]
  assert unseen["dev_metrics"]["accuracy"] >= unseen["baseline_metrics"]["accuracy"]
  # The two held-out families, 400 items: 0.3075 / 0.330 / 0.295 against 0.2675.
  families = [summary["splits"][s] for s in ("dev_unseen_templates", "test_unseen_templates")]
  assert _pooled(families, "dev_metrics") > _pooled(families, "baseline_metrics")


@pytest.mark.slow
def test_prediction_file_covers_every_id_with_a_candidate(demo_run):
  out, summary = demo_run
  with open(os.path.join(out, "data", DEV_FILE)) as f:
    dev = {item["id"]: item for item in json.load(f)}
  with open(summary["prediction_file"]) as f:
    prediction = json.load(f)
  assert sorted(prediction) == sorted(dev)
  for example_id, candidate in prediction.items():
    assert candidate == candidate.strip().lower()
    assert candidate in dev[example_id]["candidates"]


@pytest.mark.slow
def test_command_lines(demo_run, tmp_path):
  out, summary = demo_run
  dev = os.path.join(out, "data", DEV_FILE)
  # The predict command on the first 40 dev items (the whole file took 26 s): the same answers
  # as the demo's in-process prediction of those items.
  with open(dev) as f:
    items = json.load(f)[:40]
  part = str(tmp_path / "dev_part.json")
  with open(part, "w") as f:
    json.dump(items, f)
  predictions = str(tmp_path / "pred.json")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  subprocess.run([sys.executable, "-m", "tasks.wikihop", "predict",
                  f"--export_dir={os.path.join(out, 'run', 'export')}", f"--input_file={part}",
                  f"--output_file={predictions}"], check=True, cwd=ROOT, env=env,
                 capture_output=True)
  with open(predictions) as f, open(summary["prediction_file"]) as g:
    demo_answers = json.load(g)
    assert json.load(f) == {item["id"]: demo_answers[item["id"]] for item in items}
  # The evaluate command on the demo's whole prediction file.
  result = subprocess.run([sys.executable, "-m", "tasks.wikihop", "evaluate",
                           f"--prediction_file={summary['prediction_file']}",
                           f"--gold_file={dev}"],
                          check=True, cwd=ROOT, env=env, capture_output=True, text=True)
  assert json.loads(result.stdout.strip().splitlines()[-1])["accuracy"] == pytest.approx(
      summary["dev_metrics"]["accuracy"])
  bad = subprocess.run([sys.executable, "-m", "tasks.wikihop", "evaluate",
                        f"--prediction_file={dev}", f"--gold_file={dev}"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
  assert bad.returncode != 0 and "expected a JSON object {id: candidate}" in bad.stderr
