"""WikiHop (QAngaroo) behind the task contract: one JSON array of items in, {id: candidate} out.

The pieces: data (reading the official file), features (the candidate/mention layout),
records (training and prediction features), model (one logit per candidate token), inference
(the predictor), decode, metrics (accuracy as the leaderboard computes it), baselines.
Layout and formats: docs/task_layouts.md#wikihop, docs/file_formats.md#wikihop.
"""

from typing import Any, Dict

from tasks.common.task import Task
from tasks.wikihop import baselines
from tasks.wikihop import data
from tasks.wikihop import features as features_lib
from tasks.wikihop import inference
from tasks.wikihop import metrics as metrics_lib
from tasks.wikihop import records
from tasks.wikihop.model import WikiHopModel


class WikiHopTask(Task):
  """The WikiHop task: the answer is one of the item's candidates."""
  name = "wikihop"
  title = "WikiHop"
  feature_config_class = features_lib.WikiHopFeatureConfig
  model_class = WikiHopModel
  predictor_class = inference.Predictor
  predict_batch_size = 16
  demo_sizes = (2000, 300)
  demo_unit = "items"
  input_help = "Official-format WikiHop JSON array."
  prediction_help = "{id: candidate} JSON."
  gold_help = "Official-format WikiHop JSON array with answers."

  def read_examples(self, path, with_labels):
    return data.read_examples(path, with_labels=with_labels)

  def training_texts(self, train_file):
    for item in data.load_items(train_file):
      if isinstance(item, dict):
        yield str(item.get("query", "")).replace("_", " ")
        yield from (c for c in item.get("candidates") or [] if isinstance(c, str))
        yield from (s for s in item.get("supports") or [] if isinstance(s, str))

  def training_features(self, input_path, tokenizer, feature_config, report, counts, log):
    examples, read = data.read_examples(input_path, with_labels=True)
    report.take_counts(read)
    return records.training_features(examples, tokenizer, feature_config, counts, log=log,
                                     source=input_path)

  def feature_lengths(self, feature_config):
    return features_lib.feature_lengths(feature_config)

  def predict(self, predictor, examples, batch_size, source="", export_dir="", **options):
    try:
      return predictor.predict(examples, batch_size)
    except features_lib.CandidatesDoNotFit as e:
      raise features_lib.CandidatesDoNotFit(f"{source}: {e}" if source else str(e)) from None

  def evaluate(self, gold, prediction, **options):
    return metrics_lib.evaluate(gold, prediction)

  def format_metrics(self, scores):
    return metrics_lib.format_metrics(scores)

  def make_demo_data(self, directory, num_train, num_dev, seed):
    from synthetic_data import wikihop as synthetic  # pylint: disable=g-import-not-at-top
    files = synthetic.ensure_demo_data(directory, num_train, num_dev, seed)
    return files["train"], files["dev"]

  def demo_scores(self, dev_file, prediction_file) -> Dict[str, Any]:
    examples, _ = data.read_examples(dev_file, with_labels=False)
    return {"dev_metrics": metrics_lib.evaluate(dev_file, prediction_file),
            "baseline_metrics": metrics_lib.evaluate(dev_file,
                                                     baselines.most_mentioned(examples)),
            "chance_accuracy": sum(1 / len(e.candidates) for e in examples) / len(examples)}

  def demo_report(self, summary):
    return "\n".join([
        "\nWikiHop demo, synthetic dev set",
        "  fine-tuned model:         " + metrics_lib.format_metrics(summary["dev_metrics"]),
        "  most mentioned candidate: " + metrics_lib.format_metrics(summary["baseline_metrics"]),
        f"  random candidate:         accuracy {summary['chance_accuracy']:.4f} (expected)"])

  def demo_headline(self, summary):
    return {"accuracy": summary["dev_metrics"]["accuracy"],
            "baseline_accuracy": summary["baseline_metrics"]["accuracy"]}


TASK = WikiHopTask()
