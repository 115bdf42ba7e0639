"""HotpotQA (distractor setting) behind the task contract: one JSON array of questions in,
{"answer": {id: text}, "sp": {id: [[title, sentence], ...]}} out, official metrics.

Layout and formats: docs/task_layouts.md#hotpotqa, docs/file_formats.md#hotpotqa.
`features.layout: official` converts, trains and predicts with Google's ETC features, model
heads and decoding instead (tasks.hotpotqa.official, official_model, official_decode).
"""

from absl import logging

import tensorflow as tf

from tasks.common import input_parts
from tasks.common import serving
from tasks.common.feature_config import OFFICIAL_LAYOUT
from tasks.common.task import Task
from tasks.hotpotqa import (baselines, data, inference, metrics, model, official,
                            official_model, records)


class HotpotQaTask(Task):
  """An answer (span, yes or no) and its supporting sentences, over ten paragraphs."""
  name, title = "hotpotqa", "HotpotQA"
  model_class = model.HotpotQaModel
  predictor_class = inference.Predictor
  headline_keys = ("f1", "sp_f1", "joint_f1")
  predict_batch_size = 8
  demo_sizes, demo_unit = (3000, 300), "questions"
  prediction_help = "{'answer': {...}, 'sp': {...}} JSON."

  def training_texts(self, train_file):
    for record in data.iter_records_of(train_file):
      if isinstance(record, dict):
        yield str(record.get("question", ""))
        for paragraph in record.get("context") or []:
          if isinstance(paragraph, list) and len(paragraph) == 2:
            yield str(paragraph[0])
            yield from (s for s in paragraph[1] if isinstance(s, str))

  def training_examples(self, input_path, report, part=input_parts.WHOLE):
    """Streams the JSON array one record at a time."""
    return data.iter_training_examples(input_path, report, part)

  def training_features(self, input_path, tokenizer, feature_config, report, counts, log,
                        part=input_parts.WHOLE):
    """The official layout reads the records as Google's converter does (it labels what the
    package reader would skip, e.g. an answer found only in a supporting title)."""
    if feature_config.layout == OFFICIAL_LAYOUT:
      examples = official.iter_training_examples(input_path, report, part)
      return self.labelled_features(examples, tokenizer, feature_config, report, counts, log)
    return super().training_features(input_path, tokenizer, feature_config, report, counts,
                                     log, part)

  def labelled_features(self, examples, tokenizer, feature_config, report, counts, log):
    if feature_config.layout == OFFICIAL_LAYOUT:
      return official.training_features(examples, tokenizer, feature_config, report, counts,
                                        log=log)
    return records.training_features(examples, tokenizer, feature_config, report, counts,
                                     log=log)

  def export_inputs(self, feature_config):
    lengths = self.feature_lengths(feature_config)
    names = (official.MODEL_INPUTS if feature_config.layout == OFFICIAL_LAYOUT
             else self.predictor_class.input_features)
    return {name: lengths[name] or tf.TensorSpec([None], tf.int32) for name in names}

  def build_model(self, model_config, feature_config):
    if feature_config.layout == OFFICIAL_LAYOUT:
      return official_model.OfficialHotpotQaModel(
          model_config, span_loss_in_sentences=feature_config.span_loss_in_sentences,
          name=self.name)
    return self.model_class(model_config, name=self.name)

  def score_dev(self, predictor, examples, dev_file, batch_size):
    """Predicts dev once and chooses the supporting-fact threshold with the best joint F1."""
    layouts, outputs = predictor.run(examples, batch_size)
    threshold, table = predictor.choose_threshold(examples, layouts, outputs,
                                                  data.load_json_array(dev_file))
    return (predictor.make_predictions(examples, layouts, outputs, threshold),
            {"sp_threshold": threshold}, {"by_threshold": {str(t): m for t, m in table.items()}})

  def predict(self, predictor, examples, batch_size, source="", export_dir="", threshold=None,
              choose_threshold=False):
    """With choose_threshold (a labelled input), the threshold is chosen on this file and
    stored in the export for later predictions."""
    layouts, outputs = predictor.run(examples, batch_size)
    if choose_threshold:
      threshold, table = predictor.choose_threshold(examples, layouts, outputs,
                                                    data.load_json_array(source))
      serving.set_export_settings(export_dir, {"sp_threshold": threshold})
      logging.info("chose supporting-fact threshold %.2f (stored in %s):\n%s", threshold,
                   export_dir, metrics.format_metrics(table[threshold]))
    threshold = predictor.threshold if threshold is None else threshold
    logging.info("supporting-fact threshold %.2f", threshold)
    return predictor.make_predictions(examples, layouts, outputs, threshold)

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

  def evaluate_notes(self, gold_file, prediction_file):
    gold = metrics.load_json(gold_file, "gold")
    missing = metrics.missing_ids(gold, metrics.load_json(prediction_file, "prediction"))
    return [f"{len(gold)} gold id(s); missing from the prediction: {len(missing['answer'])} "
            f"answer(s), {len(missing['sp'])} supporting-fact list(s)"]

  def baselines(self, examples):
    return {"always 'yes', first sentence of every paragraph":
            baselines.trivial_prediction(examples)}


TASK = HotpotQaTask()
