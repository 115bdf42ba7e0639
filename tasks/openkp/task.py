"""OpenKP behind the task contract: JSON lines of pages in, the top five key phrases out.

The pieces: data (reading the official lines with their VDOM boxes), features (words, visual
features on the global tokens), records (training and prediction features), model (n-gram
scores for n = 1..5), inference (the predictor), decode, metrics (P/R/F1 @1,3,5), baselines.
Layout and formats: docs/task_layouts.md#openkp, docs/file_formats.md#openkp.
"""

import json
from typing import Any, Dict

import tensorflow as tf

from etc_realformer.data import tfrecords
from etc_realformer.io_utils import atomic_write_text
from tasks.common.task import Task
from tasks.openkp import baselines
from tasks.openkp import data
from tasks.openkp import decode
from tasks.openkp import features as features_lib
from tasks.openkp import inference
from tasks.openkp import metrics as metrics_lib
from tasks.openkp import records
from tasks.openkp.model import OpenKpModel


class OpenKpTask(Task):
  """The OpenKP task: rank the page's n-grams; the top five are its key phrases."""
  name = "openkp"
  title = "OpenKP"
  feature_config_class = features_lib.OpenKpFeatureConfig
  model_class = OpenKpModel
  predictor_class = inference.Predictor
  prediction_file_name = "dev_predictions.jsonl"
  predict_batch_size = 16
  demo_sizes = (1500, 200)
  demo_unit = "pages"
  input_help = "Official-format OpenKP JSONL."
  prediction_help = "JSONL of {url, KeyPhrases}."
  gold_help = "Official-format OpenKP JSONL with KeyPhrases."

  def read_examples(self, path, with_labels):
    return data.read_pages(path, with_labels=with_labels)

  def training_texts(self, train_file):
    with open(train_file, encoding="utf-8") as f:
      for line in f:
        try:
          record = json.loads(line)
        except json.JSONDecodeError:
          continue
        words = str(record.get("text", "")).split() if isinstance(record, dict) else []
        for begin in range(0, len(words), 64):
          yield " ".join(words[begin:begin + 64])

  def training_features(self, input_path, tokenizer, feature_config, report, counts, log):
    pages, read = data.read_pages(input_path, with_labels=True)
    report.take_counts(read)
    return records.training_features(pages, tokenizer, feature_config, report, counts, log=log)

  def feature_lengths(self, feature_config):
    return features_lib.feature_lengths(feature_config)

  def parse_fn(self, feature_config):
    """[batch] serialized records -> int32 features and float32 global_visual_features."""
    return tfrecords.fixed_length_parse_fn(features_lib.feature_lengths(feature_config),
                                           features_lib.float_shapes(feature_config))

  def export_inputs(self, feature_config):
    inputs = super().export_inputs(feature_config)
    inputs["global_visual_features"] = tf.TensorSpec(
        [None, feature_config.global_seq_len, data.NUM_VISUAL_FEATURES], tf.float32)
    return inputs

  def build_model(self, model_config, feature_config):
    return OpenKpModel(model_config, max_phrase_words=feature_config.max_phrase_words,
                       name=self.name)

  def write_prediction(self, path, prediction):
    atomic_write_text(path, "".join(json.dumps(line, ensure_ascii=False) + "\n"
                                    for line in prediction))

  def describe_prediction(self, prediction, examples):
    return f"{len(prediction)} prediction line(s)"

  def evaluate(self, gold, prediction, skip_empty_references=False, **options):
    return metrics_lib.evaluate(gold, prediction, skip_empty_references)

  def dev_evaluate_options(self):
    return {"skip_empty_references": True}

  def define_flags(self, flags_module):
    flags_module.DEFINE_bool("skip_empty_references", False,
                             "evaluate: leave out reference pages without phrases.")

  def command_options(self, command, flag_values):
    if command == "evaluate":
      return {"skip_empty_references": flag_values.skip_empty_references}
    return {}

  def format_metrics(self, scores):
    return metrics_lib.format_metrics(scores)

  def make_demo_data(self, directory, num_train, num_dev, seed):
    from synthetic_data import openkp as synthetic  # pylint: disable=g-import-not-at-top
    files = synthetic.ensure_demo_data(directory, num_train, num_dev, seed)
    return files["train"], files["dev"]

  def demo_scores(self, dev_file, prediction_file) -> Dict[str, Any]:
    pages, _ = data.read_pages(dev_file, with_labels=False)
    chosen = {"first_five_words": baselines.first_words(pages),
              "frequent_ngrams": baselines.frequent_ngrams(pages)}
    return {"dev_metrics": self.evaluate(dev_file, prediction_file, True),
            "baseline_metrics": {
                name: self.evaluate(dev_file, decode.prediction_lines(pages, lines), True)
                for name, lines in chosen.items()}}

  def demo_report(self, summary):
    lines = ["\nOpenKP demo, synthetic dev set: fine-tuned model",
             metrics_lib.format_metrics(summary["dev_metrics"])]
    for name, scores in summary["baseline_metrics"].items():
      lines += [f"\nbaseline: {name.replace('_', ' ')}", metrics_lib.format_metrics(scores)]
    return "\n".join(lines)

  def demo_headline(self, summary):
    return {"F1@3": summary["dev_metrics"]["F1@3"],
            **{f"{name} F1@3": scores["F1@3"]
               for name, scores in summary["baseline_metrics"].items()}}


TASK = OpenKpTask()
