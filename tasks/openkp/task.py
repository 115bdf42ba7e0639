"""OpenKP behind the task contract: JSON lines of pages in, the top five key phrases out.

One layout, Google's: the converter (features, records), the model and the decoding are those of
Google's ETC OpenKP code (docs/official_layouts/openkp.md, docs/file_formats.md#openkp).
"""

import json

import tensorflow as tf

from etc_realformer.data import tfrecords
from etc_realformer.io_utils import atomic_write_text
from tasks.common import input_parts
from tasks.common.task import Task
from tasks.openkp import baselines, data, decode, features, inference, model, records


class OpenKpTask(Task):
  """Rank the page's n-grams (n = 1..5) with visual features; the top five are its phrases."""
  name, title = "openkp", "OpenKP"
  model_class = model.OpenKpModel
  predictor_class = inference.Predictor
  headline_keys = ("F1@3",)
  prediction_file_name = "dev_predictions.jsonl"
  demo_sizes, demo_unit = (1500, 200), "pages"
  prediction_help = "JSONL of {url, KeyPhrases}."

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

  def training_examples(self, input_path, report, part=input_parts.WHOLE):
    """Streams the file one line at a time."""
    return data.iter_training_pages(input_path, report, part)

  def labelled_features(self, examples, tokenizer, feature_config, report, counts, log):
    return records.training_features(examples, tokenizer, feature_config, report, counts,
                                     log=log)

  def feature_lengths(self, feature_config):
    """The int features parsed for training: the model's and the labels."""
    lengths = features.OfficialSettings.from_feature_config(feature_config).lengths()
    return {name: lengths[name] for name in features.MODEL_INT_FEATURES + features.LABEL_FEATURES}

  def float_shapes(self, feature_config):
    return {name: (feature_config.global_seq_len,) for name in features.FLOAT_FEATURES}

  def parse_fn(self, feature_config):
    """[batch] serialized records -> int32 features and the float32 coordinates ([B, G] each)."""
    return tfrecords.fixed_length_parse_fn(self.feature_lengths(feature_config),
                                           self.float_shapes(feature_config))

  def export_inputs(self, feature_config):
    inputs = super().export_inputs(feature_config)   # the int features
    for name, shape in self.float_shapes(feature_config).items():
      inputs[name] = tf.TensorSpec([None, *shape], tf.float32)
    return inputs

  def build_model(self, model_config, feature_config):
    return self.model_class(model_config, max_phrase_words=feature_config.max_phrase_words,
                            name=self.name)

  def write_prediction(self, path, prediction):
    atomic_write_text(path, "".join(json.dumps(line, ensure_ascii=False) + "\n"
                                    for line in prediction))

  def describe_prediction(self, prediction, examples):
    return f"{len(prediction)} prediction line(s)"

  def dev_evaluate_options(self):
    return {"skip_empty_references": True}

  def define_flags(self, flags_module):
    flags_module.DEFINE_bool("skip_empty_references", False,
                             "evaluate: leave out reference pages without phrases.")

  def command_options(self, command, flag_values):
    if command == "evaluate":
      return {"skip_empty_references": flag_values.skip_empty_references}
    return {}

  def baselines(self, examples):
    return {name: decode.prediction_lines(examples, phrases) for name, phrases in (
        ("first_five_words", baselines.first_words(examples)),
        ("frequent_ngrams", baselines.frequent_ngrams(examples)))}


TASK = OpenKpTask()
