"""HotpotQA (distractor setting) behind the task contract: one JSON array of questions in,
{"answer": {id: text}, "sp": {id: [[title, sentence], ...]}} out, official metrics.

One layout, Google's ETC features, model heads and decoding (tasks.hotpotqa.features, model,
decode); formats: docs/file_formats.md#hotpotqa, docs/official_layouts/hotpotqa.md.
"""

from absl import logging

from tasks.common import input_parts
from tasks.common import serving
from tasks.common.task import Task
from tasks.hotpotqa import baselines, data, inference, metrics, model, records


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
    """Streams the JSON array one record at a time, read as Google's converter reads it."""
    return data.iter_training_examples(input_path, report, part)

  def labelled_features(self, examples, tokenizer, feature_config, report, counts, log):
    return records.training_features(examples, tokenizer, feature_config, report, counts,
                                      log=log)

  def build_model(self, model_config, feature_config):
    return self.model_class(model_config,
                            span_loss_in_sentences=feature_config.span_loss_in_sentences,
                            name=self.name)

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
