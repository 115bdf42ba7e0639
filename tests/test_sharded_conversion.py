"""Sharded conversion (tasks.common.conversion): two worker processes give the records and counts
of one, the parts of an input hold each record once, an interrupted conversion resumes shard by
shard, a corrupt record is counted and not fatal, and memory does not grow with the input.
Sharded reading (tfrecords.make_dataset): training workers read disjoint shards covering all."""

import collections
import dataclasses
import gzip
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import hotpot_fixtures as hf
import nq_fixtures as nf
from etc_realformer.data import tfrecords
from synthetic_data import hotpotqa as hotpot_data
from synthetic_data import nq as nq_data
from synthetic_data import openkp as openkp_data
from synthetic_data import wikihop as wikihop_data
from tasks.common import conversion
from tasks.common import input_parts
from tasks.common.finetuning import TaskTrainConfig
from tasks.common.read_report import ReadReport
from tasks.nq import data as nq_reader

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = ("hotpotqa", "nq", "openkp", "wikihop")
EXAMPLE_IDS = {"hotpotqa": "qas_id", "nq": "example_id", "openkp": "url",
               "wikihop": "example_id"}
COUNT_KEYS = ("written", "records", "examples", "counts", "skipped", "repaired")
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


def quiet(_):
  pass


def task_of(name):
  return importlib.import_module(f"tasks.{name}.task").TASK


def tiny_features(task):
  return task.parse_sections(task.load_run_config(task.default_config()))[1]


def stored_records(directory, prefix="nq"):
  """Every record of a conversion's shards as a sorted list (order-free comparison)."""
  out = []
  for path in conversion.record_files(directory, prefix):
    for serialized in tf.data.TFRecordDataset(path).as_numpy_iterator():
      feature = tf.train.Example.FromString(serialized).features.feature
      out.append(tuple(sorted((name, tuple(value.int64_list.value or value.float_list.value))
                              for name, value in feature.items())))
  return sorted(out)


# ----------------------------------------------------------------------------- inputs


def write_json(path, records):
  with open(path, "w", encoding="utf-8") as f:
    json.dump(records, f)
  return str(path)


def hotpotqa_input(tmp_path, num=30):
  """Questions with a duplicate _id, an unlabelled record and a record that is not an object."""
  records = hotpot_data.generate_examples(num, seed=1, preset="short")
  return write_json(tmp_path / "hotpot.json",
                    records + [records[2], dict(records[3], _id="no-answer", answer=""), 7])


def wikihop_input(tmp_path):
  items = wikihop_data.generate_examples(30, seed=1, preset="short")
  return write_json(tmp_path / "wikihop.json",
                    items + [items[4], dict(items[5], id="x", answer="no such candidate"), "x"])


def openkp_input(tmp_path):
  """Pages with repeated urls (the last usable record wins) and a line that is not JSON."""
  pages = openkp_data.generate_examples(30, seed=1, preset="short")
  for i in range(5, 30, 5):   # pages 5, 10, ..., 25 repeat the url of the page three before
    pages[i]["url"] = pages[i - 3]["url"]
  unusable_repeat = {k: v for k, v in pages[0].items() if k != "KeyPhrases"}
  usable_repeat = dict(pages[1], text=pages[1]["text"] + " again")
  lines = [json.dumps(p) for p in pages + [unusable_repeat, usable_repeat]]
  path = tmp_path / "openkp.jsonl"
  path.write_text("\n".join(lines[:10] + ["{broken"] + lines[10:]) + "\n", encoding="utf-8")
  return str(path)


def nq_input(tmp_path, num=24, files=2):
  """`files` gzipped shards; the first holds a line that is not JSON and a repeated id."""
  records = nq_data.generate_examples(num, seed=5, preset="short")
  per_file = -(-num // files)
  os.makedirs(tmp_path / "nq", exist_ok=True)
  for i in range(files):
    lines = [json.dumps(r).encode("utf-8") for r in records[i * per_file:(i + 1) * per_file]]
    if i == 0:
      lines[1:1] = [b"{not json"]
      lines.append(json.dumps(records[3]).encode("utf-8"))
    with gzip.open(tmp_path / "nq" / f"train-{i:02d}.jsonl.gz", "wb") as f:
      f.write(b"\n".join(lines) + b"\n")
  return str(tmp_path / "nq" / "train-*.jsonl.gz")


INPUTS = {"hotpotqa": hotpotqa_input, "nq": nq_input, "openkp": openkp_input,
          "wikihop": wikihop_input}


# ----------------------------------------------------------------------------- conversion


@pytest.mark.parametrize("name", TASKS)
@pytest.mark.parametrize("count", [2, 3])
def test_the_parts_of_an_input_hold_each_record_once(tmp_path, name, count):
  """Streamed parts give the examples and counts of reading the whole file at once."""
  task, path = task_of(name), INPUTS[name](tmp_path)
  whole, expected = task.read_examples(path, with_labels=True)
  examples, merged = [], ReadReport(path=path)
  for index in range(count):
    report = ReadReport(path=path)
    examples += list(task.training_examples(path, report, input_parts.Part(index, count)))
    merged.records += report.records
    merged.examples += report.examples
    merged.skipped.update(report.skipped)
    merged.repaired.update(report.repaired)
  def key(example):
    return str(getattr(example, EXAMPLE_IDS[name]))
  assert sorted(examples, key=key) == sorted(whole, key=key)
  assert (merged.records, merged.examples) == (expected.records, expected.examples)
  assert merged.skipped == expected.skipped and merged.repaired == expected.repaired
  assert sum(expected.skipped.values()) >= 2   # the inputs hold broken and repeated records


def test_two_worker_processes_give_the_records_and_counts_of_one(tmp_path):
  """`convert --num_workers=2` (spawned processes) against one worker, one shard, and whole
  input files per shard; the corrupt line and the repeated id are counted, not fatal."""
  # Short windows (the short preset's pages are about 850 pieces): several per page.
  windows = {"long_seq_len": 256, "global_seq_len": 48, "doc_stride": 128}
  pattern = nq_input(tmp_path)
  config = dataclasses.replace(tiny_features(task_of("nq")), **windows)
  tokenizer, vocab_file = nf.tokenizer(tmp_path), str(tmp_path / "vocab.txt")
  result = subprocess.run(
      [sys.executable, "-m", "tasks.nq", "convert", f"--input_file={pattern}",
       f"--output_dir={tmp_path / 'nq_two'}", f"--vocab_file={vocab_file}", "--num_shards=3",
       "--num_workers=2", *[f"--set=features.{k}={v}" for k, v in windows.items()]],
      cwd=ROOT, env=ENV, capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  with open(tmp_path / "nq_two" / conversion.FEATURES_FILE) as f:
    two = json.load(f)
  assert len(two["shards"]) == 3 and "3 of 3 shard(s) done" in result.stderr
  assert two["skipped"] == {"not JSON": 1, "duplicate example_id": 1}
  expected = stored_records(str(tmp_path / "nq_two"))
  for directory, shards in (("nq_one", 3), ("nq_whole", 1), ("nq_files", 2)):
    info = task_of("nq").convert_file(pattern, str(tmp_path / directory), tokenizer, vocab_file,
                                      config, shards, log=quiet)
    assert {k: info[k] for k in COUNT_KEYS} == {k: two[k] for k in COUNT_KEYS}, directory
    assert stored_records(str(tmp_path / directory)) == expected, directory
  assert two["written"] > 24 and two["examples"] == 24


def test_nothing_usable_is_an_error_naming_the_reasons(tmp_path):
  path = write_json(tmp_path / "bad.json", [hf.raw_record(answer=""), "not a record"])
  task = task_of("hotpotqa")
  # The empty answer is read as Google's converter reads it, which then finds it nowhere.
  with pytest.raises(ValueError, match=r"no training record could be made(.|\n)*"
                                       r"1 x answer not found(.|\n)*1 x not an object"):
    task.convert_file(path, str(tmp_path / "out"), hf.tokenizer(tmp_path),
                      str(tmp_path / "vocab.txt"), tiny_features(task), 2, log=quiet)


class Numbers:
  """A fake `produce`: the numbers 0..29 of a part, raising in part `fail_in` (a crash)."""

  def __init__(self, fail_in=-1):
    self.fail_in, self.parts = fail_in, []

  def __call__(self, part, report, counts, log):
    self.parts.append(part.index)
    for i in range(30):
      if part.owns(input_parts.position_key(i)):
        if part.index == self.fail_in and report.records == 2:
          raise RuntimeError("interrupted")
        report.records += 1
        report.examples += 1
        counts["numbers"] += 1
        yield {"x": np.array([i])}


def convert_numbers(directory, produce, num_shards, log=quiet):
  return conversion.convert_once(directory, "n", {"input": "numbers"}, produce, "numbers", log,
                                 num_shards)


def read_numbers(directory):
  parse = tfrecords.fixed_length_parse_fn({"x": 0})
  files = conversion.record_files(directory, "n")
  return sorted(int(parse(tf.constant([r]))["x"][0])
                for r in tf.data.TFRecordDataset(files).as_numpy_iterator())


def test_an_interrupted_conversion_resumes_shard_by_shard(tmp_path):
  directory = str(tmp_path / "out")
  crashing = Numbers(fail_in=1)
  with pytest.raises(RuntimeError, match="interrupted"):
    convert_numbers(directory, crashing, 3)
  assert crashing.parts == [0, 1]
  assert sorted(os.listdir(directory)) == ["n-00000-of-00003.tfrecord",
                                          "n-00000-of-00003.tfrecord.done.json"]
  (tmp_path / "out" / "n-00002-of-00003.tfrecord.tmp").write_text("left by a killed worker")
  resumed, messages = Numbers(), []
  info = convert_numbers(directory, resumed, 3, messages.append)
  assert resumed.parts == [1, 2] and "1 of 3 shard(s) already converted" in messages[0]
  assert info["written"] == info["records"] == info["counts"]["numbers"] == 30
  assert sum(shard["written"] for shard in info["shards"]) == 30
  assert read_numbers(directory) == list(range(30))
  assert not [f for f in os.listdir(directory) if f.endswith(".tmp")]
  unchanged = Numbers()
  assert convert_numbers(directory, unchanged, 3) == info and unchanged.parts == []
  # Another number of shards is another conversion: the 3-shard files go.
  two = convert_numbers(directory, Numbers(), 2)
  assert [s["file"] for s in two["shards"]] == ["n-00000-of-00002.tfrecord",
                                                "n-00001-of-00002.tfrecord"]
  assert len(conversion.record_files(directory, "n")) == 2
  assert read_numbers(directory) == list(range(30))


MEMORY_CHILD = """
import json, sys
from etc_realformer.data import tokenization
from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.{name}.task import TASK
vocab, runs = sys.argv[1], sys.argv[2:]
# The tensorflow-text fast path from the start: its one-off set-up (which the default backend
# does after 100,000 characters) would otherwise fall between the two measurements.
tokenizer = OffsetTokenizer(tokenization.WordPieceTokenizer(vocab, backend="tensorflow_text"))
config = TASK.parse_sections(TASK.load_run_config(TASK.default_config()))[1]
for path, out in zip(runs[::2], runs[1::2]):
  info = TASK.convert_file(path, out, tokenizer, vocab, config, log=lambda _: None)
  with open("/proc/self/status") as f:
    peak_kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
  print(json.dumps({{"written": info["written"], "peak_mb": peak_kb / 1024}}))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("name", ["hotpotqa", "nq"])
def test_memory_stays_flat_as_the_input_grows_tenfold(tmp_path, name):
  """Peak resident memory of one process after converting the input at 1x, then at 10x (reading
  the 10x HotpotQA input whole took about 70 MB more; streaming takes a few MB)."""
  fixtures = {"hotpotqa": hf, "nq": nf}[name]
  fixtures.tokenizer(tmp_path)
  runs = []
  for scale in (1, 10):
    directory = tmp_path / f"x{scale}"
    directory.mkdir()
    runs += [hotpotqa_input(directory, 150 * scale) if name == "hotpotqa"
             else nq_input(directory, 20 * scale, files=1), str(directory / "out")]
  result = subprocess.run([sys.executable, "-c", MEMORY_CHILD.format(name=name),
                           str(tmp_path / "vocab.txt"), *runs],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  one, ten = [json.loads(line) for line in result.stdout.strip().splitlines()[-2:]]
  print(f"{name} conversion peak memory: 1x {one['peak_mb']:.1f} MB ({one['written']} records), "
        f"then 10x {ten['peak_mb']:.1f} MB ({ten['written']} records)")
  assert ten["written"] > 8 * one["written"]
  assert ten["peak_mb"] < 1.5 * one["peak_mb"]
  assert ten["peak_mb"] - one["peak_mb"] < 25


def test_synthetic_nq_pages_of_benchmark_length_are_valid_training_records():
  for record in nq_data.generate_examples(4, seed=2):  # benchmark preset: real NQ page lengths
    example = nq_reader.parse_record(record, with_labels=True, repairs=[])
    assert sum(not html for html in example.is_html) >= 600 and example.annotations


# ----------------------------------------------------------------------------- reading


def write_numbered_shards(tmp_path, num_shards, per_shard):
  paths = tfrecords.shard_paths(str(tmp_path / "r"), num_shards)
  for k, path in enumerate(paths):
    tfrecords.write_shard(({"x": np.array([k * per_shard + i])} for i in range(per_shard)), path)
  return paths


def test_two_workers_read_disjoint_shards_covering_every_record(tmp_path):
  files = write_numbered_shards(tmp_path, 4, 6)
  parse = tfrecords.fixed_length_parse_fn({"x": 0})
  seen = []
  for worker in range(2):
    ds = tfrecords.make_dataset(files, None, 4, 2, worker, repeat=False, parse_fn=parse,
                                sharding="shards", shuffle_buffer=8, seed=3)
    batches = [batch["x"].numpy().tolist() for batch in ds]
    assert all(len(batch) == 2 for batch in batches)   # global batch 4 over 2 workers
    seen.append(collections.Counter(x for batch in batches for x in batch))
  assert not set(seen[0]) & set(seen[1])
  assert sorted((seen[0] + seen[1]).elements()) == list(range(24))
  assert set(seen[0]) == set(range(0, 6)) | set(range(12, 18))   # shards 0 and 2


def test_slice_reading_still_gives_every_worker_the_same_global_batches(tmp_path):
  files = write_numbered_shards(tmp_path, 2, 6)
  parse = tfrecords.fixed_length_parse_fn({"x": 0})
  slices = [[b["x"].numpy().tolist() for b in tfrecords.make_dataset(
      files, None, 4, 2, worker, repeat=False, parse_fn=parse)] for worker in range(2)]
  assert [a + b for a, b in zip(*slices)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_fewer_shards_than_workers_is_an_error(tmp_path):
  files = write_numbered_shards(tmp_path, 1, 4)
  with pytest.raises(ValueError, match=r"1 TFRecord file\(s\) for 2 workers"):
    tfrecords.make_dataset(files, None, 4, 2, 0, sharding="shards")
  with pytest.raises(ValueError, match="input sharding: 'files' is not one of slice, shards"):
    tfrecords.make_dataset(files, None, 4, sharding="files")


def test_train_config_names_the_conversion_and_reading_settings():
  train = TaskTrainConfig.from_dict({"num_conversion_shards": 8, "num_conversion_workers": 4,
                                     "input_sharding": "shards"})
  assert (train.num_conversion_shards, train.num_conversion_workers) == (8, 4)
  with pytest.raises(ValueError, match="input_sharding must be one of slice, shards"):
    TaskTrainConfig.from_dict({"input_sharding": "files"})
  with pytest.raises(ValueError, match="num_conversion_workers must be a positive integer"):
    TaskTrainConfig.from_dict({"num_conversion_workers": 0})


def test_a_record_routes_by_id_so_every_copy_meets_in_one_part():
  line = b'{"annotations": [], "document_html": "<p>\\"example_id\\": 9</p>", "example_id": -42}'
  assert input_parts.line_id_key(line, "example_id") == "-42"
  assert input_parts.line_id_key('{"url" : "http://a.b/\\u00e9"}', "url") == json.dumps(
      "http://a.b/\u00e9")
  assert input_parts.line_id_key(b'{"other": 1}', "example_id") is None
  keys = [input_parts.id_key(f"q{i}") for i in range(200)]
  parts = [input_parts.part_of(key, 3) for key in keys]
  assert set(parts) == {0, 1, 2} and parts == [input_parts.part_of(k, 3) for k in keys]
  files, within = input_parts.Part(1, 2).files(["a", "b", "c"])
  assert files == ["b"] and within == input_parts.WHOLE
  files, within = input_parts.Part(1, 4).files(["a", "b", "c"])
  assert files == ["a", "b", "c"] and within == input_parts.Part(1, 4)
