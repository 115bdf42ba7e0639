"""Google's converter outputs for the official-layout fixtures (tests/fixtures/official_features,
or another folder laid out the same, e.g. tests/fixtures/real_records), written back as
TFRecords the way Google's pipeline writes them, and their lengths as a feature config's
settings."""

import gzip as gzip_lib
import json
import os

import tensorflow as tf

from etc_realformer.io_utils import yaml_load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "official_features")


def load_json(folder, name):
  """A fixture folder's JSON file `name`, or its gzipped copy `name`.gz when only that exists."""
  path = os.path.join(folder, name)
  if not os.path.exists(path) and os.path.exists(path + ".gz"):
    with gzip_lib.open(path + ".gz", "rt", encoding="utf-8") as f:
      return json.load(f)
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def fixture_examples(task, root=FIXTURES):
  """[(features dict, kinds dict)] of the fixture's tf.Examples, kinds from settings.json."""
  folder = os.path.join(root, task)
  kinds = load_json(folder, "settings.json")["feature_kinds"]
  entries = load_json(folder, "features.json")
  out = []
  for entry in entries:
    values = entry.get("features", entry)
    out.append({name: values[name] for name in kinds})
  return out, kinds


def write_google_records(task, path, gzip=False, root=FIXTURES):
  """Writes the fixture entries as Google's pipeline does: one tf.Example each, every feature
  an int64_list, float_list or bytes_list as Google's converter typed it (gzip-compressed, as
  its Beam pipelines write them, when `gzip`)."""
  examples, kinds = fixture_examples(task, root)
  with tf.io.TFRecordWriter(path, "GZIP" if gzip else None) as writer:
    for values in examples:
      feature = {}
      for name, kind in kinds.items():
        value = values[name]
        value = value if isinstance(value, list) else [value]
        if kind == "int64_list":
          feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
        elif kind == "float_list":
          feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
        else:
          feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(
              value=[v.encode("utf-8") for v in value]))
      writer.write(tf.train.Example(
          features=tf.train.Features(feature=feature)).SerializeToString())
  return len(examples)


def convert_sets(task, root=FIXTURES):
  """The fixture's lengths as {features key: value} (convert_sets.txt)."""
  sets = {}
  with open(os.path.join(root, task, "convert_sets.txt"), encoding="utf-8") as f:
    for line in f:
      if line.strip():
        key, value = line.strip().split("=", 1)
        sets[key.split(".", 1)[1]] = yaml_load(value)
  return sets
