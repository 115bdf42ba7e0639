"""The pure parts of benchmarks/realformer_study.py: held-out split, divergence rule, aggregation.

No training and no TensorFlow: the script is imported as a module from its file (benchmarks/
is not a package).
"""

import importlib.util
import math
import os

import pytest

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks",
                     "realformer_study.py")
_SPEC = importlib.util.spec_from_file_location("realformer_study", _PATH)
study = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(study)


def _corpus(num_documents):
  """A prepare_wikipedia-style file: sentences one a line, a blank line between documents."""
  return study.join_documents([f"Document {i} sentence one.\nDocument {i} sentence two."
                               for i in range(num_documents)])


def test_split_documents_reads_the_prepare_wikipedia_format():
  documents = study.split_documents(_corpus(3))
  assert documents == [f"Document {i} sentence one.\nDocument {i} sentence two."
                       for i in range(3)]
  # Extra blank lines (or spaces on them) do not make empty documents.
  assert study.split_documents("a.\nb.\n\n \n\nc.\n\n") == ["a.\nb.", "c."]


def test_heldout_split_every_tenth_document_deterministic_disjoint():
  documents = study.split_documents(_corpus(25))
  training, held_out = study.heldout_split(documents)
  assert held_out == [documents[9], documents[19]]          # the 10th and the 20th
  assert len(training) == 23
  assert not set(training) & set(held_out)
  assert sorted(training + held_out) == sorted(documents)
  assert study.heldout_split(documents) == (training, held_out)  # deterministic
  assert study.heldout_split(documents[:9]) == (documents[:9], [])


def test_parse_training_log_keeps_the_latest_line_of_a_step():
  text = "\n".join([
      "I1129 02:00:00.0 1 callbacks.py:96] step 2/6 cpc_loss=2.5 loss=6.1 mlm_loss=7 "
      "learning_rate=0.001",
      "some other line",
      "I1129 02:00:01.0 1 callbacks.py:96] step 4/6 cpc_loss=2.4 loss=nan mlm_loss=6.5",
      "I1129 02:00:09.0 1 callbacks.py:96] step 4/6 cpc_loss=2.3 loss=5.9 mlm_loss=6.4",  # resumed
  ])
  log = study.parse_training_log(text)
  assert [e["step"] for e in log] == [2, 4]
  assert log[0]["mlm_loss"] == 7.0 and log[0]["learning_rate"] == 0.001
  assert log[1]["loss"] == 5.9 and log[1]["mlm_loss"] == 6.4


@pytest.mark.parametrize("mlm, other, diverged", [
    ([7.0, 6.0, 5.0], {}, False),                   # falls: fine
    ([7.0, 8.0, 6.9], {}, False),                   # last below first, whatever happens between
    ([7.0, 5.6, 6.0], {}, True),                    # learned, then lost 0.4 nats of it
    ([7.0, 5.8, 6.0], {}, False),                   # 0.2 above its best: within 0.25
    ([7.0, 6.0, 7.0], {}, True),                    # last equal to the first: not below
    ([7.0, 7.5], {}, True),                         # rose
    ([7.0], {}, True),                              # one window: last == first
    ([7.0, float("nan"), 5.0], {}, True),           # a non-finite MLM loss
    ([7.0, 6.0, 5.0], {"cpc_loss": float("inf")}, True),  # another loss not finite
    ([7.0, 6.0, 5.0], {"loss": float("nan")}, True),
])
def test_divergence_rule(mlm, other, diverged):
  log = [{"step": i + 1, "mlm_loss": v, "loss": 0.8 * v if math.isfinite(v) else v,
          "cpc_loss": 2.0} for i, v in enumerate(mlm)]
  log[1 if len(log) > 1 else 0].update(other)
  result, reason = study.divergence(log)
  assert result is diverged
  assert bool(reason) is diverged


def test_divergence_without_logged_losses():
  assert study.divergence([]) == (True, "no logged loss")


def test_mean_std_and_compare_hand_computed():
  # none: 0.20, 0.22, 0.24 -> mean 0.22, sample std 0.02; sum: 0.25, 0.27, 0.32 -> mean
  # 0.28, std sqrt((0.03^2 + 0.01^2 + 0.04^2) / 2) = sqrt(0.0013) = 0.0360555.
  a = study.mean_std([0.20, 0.22, 0.24])
  b = study.mean_std([0.25, 0.27, 0.32])
  assert a["mean"] == pytest.approx(0.22) and a["std"] == pytest.approx(0.02)
  assert (a["min"], a["max"], a["n"]) == (0.20, 0.24, 3)
  assert b["mean"] == pytest.approx(0.28) and b["std"] == pytest.approx(math.sqrt(0.0013))
  c = study.compare(a, b)
  # |0.06| > max(0.02, 0.0361): outside the seed spread.
  assert c["difference"] == pytest.approx(0.06)
  assert c["spread"] == pytest.approx(math.sqrt(0.0013))
  assert c["within_seed_spread"] is False
  # 0.23 vs 0.22 with the larger std 0.0361: within.
  d = study.compare(a, study.mean_std([0.19, 0.23, 0.27]))  # mean 0.23, std 0.04
  assert d["difference"] == pytest.approx(0.01) and d["spread"] == pytest.approx(0.04)
  assert d["within_seed_spread"] is True
  assert study.mean_std([0.5])["std"] == 0.0
  assert study.mean_std([None, float("nan")]) is None
  assert study.compare(a, None) is None


def _run(variant, lr, seed, mlm_acc, hotpot_f1, diverged=False):
  return {"name": study.run_name(variant, lr, seed), "variant": variant, "learning_rate": lr,
          "seed": seed, "high_lr": lr != 0.002, "diverged": diverged,
          "heldout": {"mlm_accuracy": mlm_acc, "cpc_accuracy": 0.1},
          "last_train_loss": 5.0, "last_train_mlm_loss": 6.0,
          "attention": {"entropy_long": [2.0, 1.0], "entropy_global": [4.0, 3.0],
                        "js_long": [0.1], "js_global": [0.2]},
          "finetune": {"hotpotqa": {"splits": {"dev": {"model": {"f1": hotpot_f1},
                                                       "baseline": {"f1": 0.1}}}}}}


def test_aggregate_groups_and_compares_sum_with_none():
  results = [_run("none", 0.002, s, acc, f1) for s, acc, f1 in
             ((0, 0.20, 0.30), (1, 0.22, 0.30), (2, 0.24, 0.36))]
  results += [_run("sum", 0.002, s, acc, f1) for s, acc, f1 in
              ((0, 0.25, 0.31), (1, 0.27, 0.33), (2, 0.32, 0.35))]
  results += [_run("none", 0.01, 0, 0.05, 0.1, diverged=True), _run("sum", 0.01, 0, 0.2, 0.3)]
  summary = study.aggregate(results, 0.002, 0.01)
  groups = summary["groups"]
  assert sorted(groups) == ["none@0.002", "none@0.01", "sum@0.002", "sum@0.01"]
  assert groups["none@0.002"]["runs"] == ["none_lr0.002_seed0", "none_lr0.002_seed1",
                                          "none_lr0.002_seed2"]
  assert groups["none@0.01"]["diverged"] == 1 and groups["sum@0.002"]["diverged"] == 0
  mlm = summary["comparison_sum_minus_none"]["heldout_mlm_accuracy"]
  assert mlm["difference"] == pytest.approx(0.06)
  assert mlm["within_seed_spread"] is False
  # HotpotQA dev F1: none 0.30, 0.30, 0.36 (mean 0.32, std sqrt(0.0012) = 0.0346);
  # sum 0.31, 0.33, 0.35 (mean 0.33, std 0.02): +0.01 is within 0.0346.
  f1 = summary["comparison_sum_minus_none"]["hotpotqa.dev.f1"]
  assert f1["difference"] == pytest.approx(0.01)
  assert f1["spread"] == pytest.approx(math.sqrt(0.0012))
  assert f1["within_seed_spread"] is True
  metrics = groups["sum@0.002"]["metrics"]
  assert metrics["entropy_long_mean"]["mean"] == pytest.approx(1.5)   # mean over layers
  assert metrics["js_global_mean"]["mean"] == pytest.approx(0.2)
  assert metrics["hotpotqa.dev.baseline.f1"]["mean"] == pytest.approx(0.1)
  per_layer = groups["sum@0.002"]["per_layer"]["entropy_global"]
  assert [s["mean"] for s in per_layer] == pytest.approx([4.0, 3.0])
  assert summary["high_lr_sum_minus_none"]["heldout_mlm_accuracy"]["difference"] == \
      pytest.approx(0.15)
  table = study.markdown_report(summary, 0.002, 0.01)
  assert "within seed spread" in table and "outside seed spread" in table
  assert "none@0.01 1/1" in table


def test_build_script_constants_are_read_from_the_shell_script():
  constants = study.build_script_constants()
  assert constants["EXCERPT"].startswith("gensim/") and constants["EXCERPT"].endswith(".bz2")
  assert constants["GENSIM_VERSION"][0].isdigit()


def test_the_aggregate_names_no_machine_folder():
  work_dir = os.path.join(os.sep, "scratch", "study")
  payload = {"settings": {"work_dir": work_dir, "config": "configs/x.yaml"},
             "figures": [os.path.join(work_dir, "figures", "a.png"),
                         os.path.join(study.REPO, "docs", "images", "b.png")]}
  assert study.portable_paths(payload, work_dir) == {
      "settings": {"work_dir": "<work_dir>", "config": "configs/x.yaml"},
      "figures": ["<work_dir>/figures/a.png", "./docs/images/b.png"]}


def test_a_run_that_ends_at_the_unigram_entropy_learned_nothing():
  assert study.context_learning({"mlm_loss": 4.5, "target_unigram_entropy": 6.0}) == (False, "")
  failed, reason = study.context_learning({"mlm_loss": 6.04, "target_unigram_entropy": 6.0})
  assert failed and "nothing learned" in reason
  assert study.context_learning({"mlm_loss": 4.5}) == (False, "")
