"""Natural Questions behind the task contract: gzipped JSON lines in (original or simplified
format, a file or a glob), the official predictions JSON out, scored by the official scorer.

The pieces: data (reading both formats, streaming), features (windows over long documents),
records (training windows, prediction windows), model (long-answer, span and answer-type
heads), inference (the predictor), decode, metrics (the official scorer), baselines.
Layout and formats: docs/task_layouts.md#natural-questions,
docs/file_formats.md#natural-questions.
"""

from typing import Any, Dict

from tasks.common.task import Task
from tasks.nq import baselines
from tasks.nq import data
from tasks.nq import features as features_lib
from tasks.nq import inference
from tasks.nq import metrics as metrics_lib
from tasks.nq import records
from tasks.nq.model import NqModel


class NqTask(Task):
  """The Natural Questions task: a long answer (candidate) and short answers per example."""
  name = "nq"
  title = "Natural Questions"
  feature_config_class = features_lib.NqFeatureConfig
  model_class = NqModel
  predictor_class = inference.Predictor
  predict_batch_size = 8
  demo_sizes = (1500, 200)
  input_help = "NQ gzipped JSONL file or glob."
  prediction_help = "The official predictions JSON."
  gold_help = "NQ gzipped JSONL file or glob with annotations."
  flag_aliases = {"gold_file": "gold_path", "prediction_file": "predictions_path"}

  def read_examples(self, path, with_labels):
    return data.read_examples(path, with_labels=with_labels)

  def input_files(self, path):
    return data.expand_paths(path)

  def training_texts(self, train_file):
    """Questions and text tokens of the training file (html tokens have their own markers)."""
    for example in data.iter_examples(train_file, with_labels=True,
                                      report=data.ReadReport(train_file)):
      yield example.question
      words = [t for t, html in zip(example.tokens, example.is_html) if not html]
      for begin in range(0, len(words), 64):
        yield " ".join(words[begin:begin + 64])

  def training_features(self, input_path, tokenizer, feature_config, report, counts, log):
    examples = data.iter_examples(input_path, with_labels=True, report=report)
    return records.training_windows(examples, tokenizer, feature_config, counts, log=log)

  def feature_lengths(self, feature_config):
    return features_lib.feature_lengths(feature_config)

  def describe_prediction(self, prediction, examples):
    entries = prediction["predictions"]
    return (f"{len(entries)} prediction(s): "
            f"{sum(e['long_answer']['start_token'] >= 0 for e in entries)} with a long answer, "
            f"{sum(bool(e['short_answers']) for e in entries)} with short spans, "
            f"{sum(e['yes_no_answer'] != 'NONE' for e in entries)} yes/no, "
            f"{sum(bool(e.problem) for e in examples)} null because the example could not be "
            "converted")

  def evaluate(self, gold, prediction, **options):
    return metrics_lib.evaluate(gold, prediction)

  def format_metrics(self, scores):
    return metrics_lib.format_metrics(scores)

  def make_demo_data(self, directory, num_train, num_dev, seed):
    from synthetic_data import nq as synthetic  # pylint: disable=g-import-not-at-top
    files = synthetic.ensure_demo_data(directory, num_train, num_dev, seed)
    return files["train"], files["dev"]

  def demo_scores(self, dev_file, prediction_file) -> Dict[str, Any]:
    examples, _ = data.read_examples(dev_file, with_labels=False)
    return {"dev_metrics": metrics_lib.evaluate(dev_file, prediction_file),
            "baseline_metrics": metrics_lib.evaluate(dev_file,
                                                     baselines.null_predictions(examples))}

  def demo_report(self, summary):
    return "\n".join([
        "\nNatural Questions demo, synthetic dev set (official scorer): fine-tuned model",
        metrics_lib.format_metrics(summary["dev_metrics"]), "\nbaseline: always null",
        metrics_lib.format_metrics(summary["baseline_metrics"])])

  def demo_headline(self, summary):
    return {key: summary["dev_metrics"][key] for key in metrics_lib.MAIN_KEYS}


TASK = NqTask()
