"""Records of the released benchmarks (tests/fixtures/real_records): HotpotQA dev (distractor)
records and WikiHop dev items, with the tf.Examples Google's ETC converter wrote for them.

For each task that has real records:
- the converter, with the official ETC-base settings (configs/<task>/etc_base.yaml, whose
  `features.layout` is official), writes exactly Google's tf.Examples: the same examples in the
  same order, the same records without one, every feature, every value and every feature kind;
- a small official-layout model, exported once, predicts every id of the records through the
  task's `predict` command (`python -m tasks.<task> predict`), and the official scorer
  (tasks.<task>.metrics) accepts the prediction file.

The helpers are those of the synthetic official-layout fixtures (official_fixtures, with the
fixture folder as a parameter, and the value lists of test_hotpotqa_layout).
"""

import collections
import json
import os

import numpy as np
import pytest

import launch_fixtures as lf
import official_fixtures
import test_hotpotqa_layout as hotpot_layout
from etc_realformer.data import tfrecords
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from tasks.common.read_report import ReadReport
from tasks.hotpotqa.task import TASK as HOTPOTQA
from tasks.wikihop.task import TASK as WIKIHOP

ROOT = official_fixtures.ROOT
REAL = os.path.join(ROOT, "tests", "fixtures", "real_records")
VOCAB = os.path.join(ROOT, "pretrained", "tiny_english", "vocab.txt")
TASKS = {"hotpotqa": HOTPOTQA, "wikihop": WIKIHOP}
# Per task: the record's id field in input.json and the feature carrying it in a tf.Example.
IDS = {"hotpotqa": ("_id", "unique_ids"), "wikihop": ("id", "example_id")}
# The exported model: etc_base's settings, sizes shrunk (predictions only need to exist).
SMALL = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
             local_radius=4, relative_pos_max_distance=3, relative_vocab_size=10)


def _folder(task):
  return os.path.join(REAL, task)


def _records(task):
  return official_fixtures.load_json(_folder(task), "input.json")


def _settings(task):
  return official_fixtures.load_json(_folder(task), "settings.json")


def _etc_base(task):
  """configs/<task>/etc_base.yaml as {model, features, train} dicts."""
  return TASKS[task].load_run_config(os.path.join(ROOT, "configs", task, "etc_base.yaml"))


def _feature_config(task):
  return TASKS[task].parse_sections(_etc_base(task))[1]


def _vocab_size():
  with open(VOCAB, encoding="utf-8") as f:
    return sum(1 for _ in f)


def test_real_record_folders_are_the_tested_tasks():
  assert sorted(name for name in os.listdir(REAL)
                if os.path.isdir(os.path.join(REAL, name))) == sorted(TASKS)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_etc_base_settings_are_the_ones_converted_with(task):
  config, settings = _feature_config(task), _settings(task)
  assert config.layout == "official"
  for key, value in official_fixtures.convert_sets(task, REAL).items():
    assert getattr(config, key) == value, key
  if task == "hotpotqa":
    flags = settings["flag_defaults_used"]
    assert (flags["long_seq_length"], flags["global_seq_length"]) == (
        config.long_seq_len, config.global_seq_len)
    assert flags["is_training"] and flags["answer_encoding_method"] == "span" and flags["debug"]
  else:
    flags = settings["flag_values"]
    assert (flags["long_seq_len"], flags["global_seq_len"], flags["max_num_sentences"]) == (
        config.long_seq_len, config.global_seq_len, config.max_num_sentences)
    assert flags["tokenizer_type"] == "BERT" and flags["do_lower_case"]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_features_equal_googles(task):
  settings = _settings(task)
  path = os.path.join(_folder(task), "input.json")
  report, counts = ReadReport(path=path), collections.Counter()
  tokenizer = OffsetTokenizer(load_tokenizer(vocab_file=VOCAB))
  got = list(TASKS[task].training_features(path, tokenizer, _feature_config(task), report,
                                           counts, log=lambda _: None))
  expected, kinds = official_fixtures.fixture_examples(task, REAL)
  assert len(got) == len(expected) == settings["num_tf_examples"]

  # The same examples in the same order; the same records without one.
  record_key, id_feature = IDS[task]
  record_ids = [record[record_key] for record in _records(task)]
  written = [hotpot_layout._as_lists(f[id_feature]) for f in got]  # pylint: disable=protected-access
  assert written == [want[id_feature] for want in expected]
  without = settings.get("records_without_tf_example", [])
  assert [i for i in record_ids if [i] not in written] == without
  assert report.records == len(record_ids) and sum(report.skipped.values()) == len(without)

  compared = 0
  for features, want in zip(got, expected):
    assert set(features) == set(kinds), want[id_feature]
    example = tfrecords.to_tf_example(features)
    for name, kind in kinds.items():
      value = hotpot_layout._as_lists(features[name])  # pylint: disable=protected-access
      assert value == want[name], (want[id_feature], name)
      assert example.features.feature[name].WhichOneof("kind") == kind, name
      if kind == "int64_list":
        assert np.asarray(features[name]).dtype == np.int64, name
      compared += 1
  assert compared == len(kinds) * len(expected)


@pytest.fixture(scope="module", params=sorted(TASKS))
def export(request, tmp_path_factory):
  """(task, export directory) of a small untrained official-layout model, one per task."""
  task = request.param
  run = _etc_base(task)
  model = dict(run["model"], vocab_size=_vocab_size(), **SMALL)
  model_config, feature_config, _ = TASKS[task].parse_sections(
      {"model": model, "features": run["features"], "train": {}})
  assert feature_config.layout == "official"
  built = TASKS[task].build_model(model_config, feature_config)
  built.build()
  directory = str(tmp_path_factory.mktemp(f"{task}_export"))
  TASKS[task].export_model(built, feature_config, VOCAB, directory)
  return task, directory


def test_predict_command_covers_every_record_and_the_scorer_accepts_it(export, tmp_path):
  task, directory = export
  input_file = os.path.join(_folder(task), "input.json")
  prediction_file = str(tmp_path / "prediction.json")
  lf.run(lf.task_command(task, "predict", f"--export_dir={directory}",
                         f"--input_file={input_file}", f"--output_file={prediction_file}"))
  with open(prediction_file, encoding="utf-8") as f:
    prediction = json.load(f)
  records = _records(task)
  record_ids = {record[IDS[task][0]] for record in records}
  scores = TASKS[task].evaluate(input_file, prediction_file)   # tasks.<task>.metrics
  if task == "hotpotqa":
    assert set(prediction["answer"]) == set(prediction["sp"]) == record_ids
    titles = {r["_id"]: {title for title, _ in r["context"]} for r in records}
    for qid, facts in prediction["sp"].items():
      assert all(title in titles[qid] for title, _ in facts), qid
    for key in ("em", "f1", "sp_em", "sp_f1", "joint_em", "joint_f1"):
      assert 0.0 <= scores[key] <= 1.0, (key, scores)
  else:
    assert set(prediction) == record_ids
    candidates = {r["id"]: {c.lower() for c in r["candidates"]} for r in records}
    assert all(answer in candidates[qid] for qid, answer in prediction.items())
    assert (scores["total"], scores["missing"], scores["extra"]) == (len(records), 0, 0)
    assert 0.0 <= scores["accuracy"] <= 1.0
  print(f"{task}: {json.dumps(scores, sort_keys=True)}")
