"""HotpotQA (distractor setting) behind the task contract: one JSON array of questions in,
{"answer": {id: text}, "sp": {id: [[title, sentence], ...]}} out, official metrics.

The pieces: data (reading the official file), features (the multi-hop layout: question,
paragraph and sentence global tokens), records (feature dicts and layouts), model (answer type,
supporting facts, span), inference (the predictor), decode (answers, supporting facts, the
threshold chosen on dev), metrics (the official rules), baselines.
Layout and formats: docs/task_layouts.md#hotpotqa, docs/file_formats.md#hotpotqa.
"""

from typing import Any, Dict

from absl import logging

from tasks.common import serving
from tasks.common.task import Task
from tasks.hotpotqa import baselines
from tasks.hotpotqa import data
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa import inference
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa import records
from tasks.hotpotqa.model import HotpotQaModel


class HotpotQaTask(Task):
  """The HotpotQA task: an answer (span, yes or no) and its supporting sentences."""
  name = "hotpotqa"
  title = "HotpotQA"
  feature_config_class = features_lib.HotpotFeatureConfig
  model_class = HotpotQaModel
  predictor_class = inference.Predictor
  predict_batch_size = 8
  demo_sizes = (3000, 300)
  demo_unit = "questions"
  input_help = "Official-format HotpotQA JSON array."
  prediction_help = "{'answer': {...}, 'sp': {...}} JSON."
  gold_help = "Official-format HotpotQA JSON array with labels."

  def read_examples(self, path, with_labels):
    return data.read_examples(path, with_labels=with_labels)

  def training_texts(self, train_file):
    for record in data.load_json_array(train_file):
      if isinstance(record, dict):
        yield str(record.get("question", ""))
        for paragraph in record.get("context") or []:
          if isinstance(paragraph, list) and len(paragraph) == 2:
            yield str(paragraph[0])
            yield from (s for s in paragraph[1] if isinstance(s, str))

  def training_features(self, input_path, tokenizer, feature_config, report, counts, log):
    examples, read = data.read_examples(input_path, with_labels=True)
    report.take_counts(read)
    features, _ = records.convert_examples(examples, tokenizer, feature_config,
                                           with_labels=True, report=report, log=log)
    return features

  def feature_lengths(self, feature_config):
    return features_lib.feature_lengths(feature_config)

  def score_dev(self, predictor, examples, dev_file, batch_size):
    """Predicts dev once and chooses the supporting-fact threshold with the best joint F1."""
    layouts, outputs = predictor.run(examples, batch_size)
    threshold, table = decode.choose_threshold(examples, layouts, outputs,
                                               data.load_json_array(dev_file))
    return (decode.make_predictions(examples, layouts, outputs, threshold),
            {"sp_threshold": threshold}, {"by_threshold": {str(t): m for t, m in table.items()}})

  def predict(self, predictor, examples, batch_size, source="", export_dir="", threshold=None,
              choose_threshold=False):
    """With choose_threshold (a labelled input), the threshold is chosen on this file and
    stored in the export for later predictions."""
    layouts, outputs = predictor.run(examples, batch_size)
    if choose_threshold:
      threshold, table = decode.choose_threshold(examples, layouts, outputs,
                                                 data.load_json_array(source))
      serving.set_export_settings(export_dir, {"sp_threshold": threshold})
      logging.info("chose supporting-fact threshold %.2f (stored in %s):\n%s", threshold,
                   export_dir, metrics_lib.format_metrics(table[threshold]))
    threshold = predictor.threshold if threshold is None else threshold
    logging.info("supporting-fact threshold %.2f", threshold)
    return decode.make_predictions(examples, layouts, outputs, threshold)

  def define_flags(self, flags_module):
    flags_module.DEFINE_float("threshold", None,
                              "predict: supporting-fact threshold (default: the export's).")
    flags_module.DEFINE_bool("choose_threshold", False,
                             "predict: choose the threshold on this (labelled) input file and "
                             "store it in the export.")

  def command_options(self, command, flag_values):
    if command == "predict":
      return {"threshold": flag_values.threshold,
              "choose_threshold": flag_values.choose_threshold}
    return {}

  def describe_prediction(self, prediction, examples):
    empty = sum(1 for answer in prediction["answer"].values() if not answer)
    return f"{len(prediction['answer'])} prediction(s) ({empty} empty answer(s))"

  def evaluate(self, gold, prediction, **options):
    return metrics_lib.evaluate(gold, prediction)

  def evaluate_notes(self, gold_file, prediction_file):
    gold = metrics_lib.load_json(gold_file, "gold")
    missing = metrics_lib.missing_ids(gold, metrics_lib.load_json(prediction_file, "prediction"))
    return [f"{len(gold)} gold id(s); missing from the prediction: {len(missing['answer'])} "
            f"answer(s), {len(missing['sp'])} supporting-fact list(s)"]

  def format_metrics(self, scores):
    return metrics_lib.format_metrics(scores)

  def make_demo_data(self, directory, num_train, num_dev, seed):
    from synthetic_data import hotpotqa as synthetic  # pylint: disable=g-import-not-at-top
    return synthetic.ensure_demo_data(directory, num_train, num_dev, seed)

  def demo_scores(self, dev_file, prediction_file) -> Dict[str, Any]:
    examples, _ = data.read_examples(dev_file, with_labels=False)
    return {"dev_metrics": metrics_lib.evaluate(dev_file, prediction_file),
            "baseline_metrics": metrics_lib.evaluate(dev_file,
                                                     baselines.trivial_prediction(examples))}

  def demo_report(self, summary):
    return "\n".join([
        "\nHotpotQA demo, synthetic dev set: fine-tuned model",
        metrics_lib.format_metrics(summary["dev_metrics"]),
        "\nbaseline: always 'yes', first sentence of every paragraph",
        metrics_lib.format_metrics(summary["baseline_metrics"])])

  def demo_headline(self, summary):
    return {"dev": summary["dev_metrics"]}


TASK = HotpotQaTask()
