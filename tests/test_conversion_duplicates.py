"""Duplicate ids across the shards of a conversion (tasks.common.conversion): copies of an id in
two input files that go to different shards stop the merge with an error naming the id, its
shards and files; copies that meet in one part are still skipped (or replaced) and counted as
within one file; a conversion without such copies writes the same records as before."""

import gzip
import json
import os

import numpy as np
import pytest

import hotpot_fixtures as hf
import nq_fixtures as nf
import openkp_fixtures as of
import test_sharded_conversion as sharded
import wikihop_fixtures as wf
from synthetic_data import nq as nq_data
from tasks.common import conversion

TOKENIZERS = {"hotpotqa": hf.tokenizer, "nq": nf.tokenizer, "openkp": of.tokenizer,
              "wikihop": wf.tokenizer}


def convert(tmp_path, name, path, directory, num_shards):
  task = sharded.task_of(name)
  return task.convert_file(path, str(tmp_path / directory), TOKENIZERS[name](tmp_path),
                           str(tmp_path / "vocab.txt"), sharded.tiny_features(task), num_shards,
                           log=sharded.quiet)


def nq_files(tmp_path, copy_in_second=True):
  """Two gzipped NQ files of 6 examples; the second ends with a copy of the first's 3rd."""
  records = nq_data.generate_examples(12, seed=5, preset="short")
  files = [records[:6], records[6:] + ([records[2]] if copy_in_second else [])]
  os.makedirs(tmp_path / "nq", exist_ok=True)
  for i, lines in enumerate(files):
    with gzip.open(tmp_path / "nq" / f"train-{i:02d}.jsonl.gz", "wt", encoding="utf-8") as f:
      f.write("".join(json.dumps(r) + "\n" for r in lines))
  return str(tmp_path / "nq" / "train-*.jsonl.gz"), records[2]["example_id"]


def test_an_id_in_two_files_of_different_shards_stops_the_merge_naming_it(tmp_path):
  """Two files, two shards: whole files are parts, so the copies are in different shards."""
  pattern, repeated = nq_files(tmp_path)
  with pytest.raises(ValueError) as error:
    convert(tmp_path, "nq", pattern, "out", 2)
  message = str(error.value)
  assert "1 example id(s) occur in more than one conversion shard" in message
  files = [str(tmp_path / "nq" / f"train-{i:02d}.jsonl.gz") for i in range(2)]
  assert (f"id {repeated}: nq-00000-of-00002.tfrecord (from {files[0]}), "
          f"nq-00001-of-00002.tfrecord (from {files[1]})") in message
  assert not os.path.exists(tmp_path / "out" / conversion.FEATURES_FILE)


@pytest.mark.parametrize("num_shards", [1, 3])
def test_copies_that_meet_in_one_shard_are_skipped_and_counted_as_before(tmp_path, num_shards):
  """One shard, or more shards than files (records routed by id): the reader's check applies."""
  pattern, _ = nq_files(tmp_path)
  info = convert(tmp_path, "nq", pattern, "out", num_shards)
  assert info["skipped"] == {"duplicate example_id": 1}
  assert (info["records"], info["examples"]) == (13, 12)


@pytest.mark.parametrize("name", sharded.TASKS)
def test_a_repeated_id_within_one_file_is_handled_as_before(tmp_path, name):
  """The inputs of test_sharded_conversion repeat an id within a file: counted, no error."""
  info = convert(tmp_path, name, sharded.INPUTS[name](tmp_path), "out", 2)
  reasons = {**info["skipped"], **info["repaired"]}
  reason = {"hotpotqa": "duplicate _id", "nq": "duplicate example_id",
            "openkp": "duplicate url (the last record wins)", "wikihop": "duplicate id"}[name]
  assert reasons[reason] >= 1 and info["written"] > 0


def test_a_conversion_without_repeated_ids_is_unchanged(tmp_path):
  """Same records and manifest as one shard; each done file keeps its ids by input file."""
  pattern, _ = nq_files(tmp_path, copy_in_second=False)
  two, one = (convert(tmp_path, "nq", pattern, d, n) for d, n in (("two", 2), ("one", 1)))
  assert sharded.stored_records(str(tmp_path / "two")) == sharded.stored_records(
      str(tmp_path / "one"))
  assert {k: two[k] for k in sharded.COUNT_KEYS} == {k: one[k] for k in sharded.COUNT_KEYS}
  assert "ids" not in two and two["examples"] == 12 and not two["skipped"]
  records = nq_data.generate_examples(12, seed=5, preset="short")
  for k in range(2):
    with open(tmp_path / "two" / f"nq-0000{k}-of-00002.tfrecord.done.json") as f:
      ids = json.load(f)["ids"]
    assert ids == {str(tmp_path / "nq" / f"train-0{k}.jsonl.gz"):
                   [r["example_id"] for r in records[6 * k:6 * k + 6]]}


class Ids:
  """A fake `produce`: part k writes one record per id of `ids[k]` and notes the ids."""

  def __init__(self, ids):
    self.ids, self.parts = ids, []

  def __call__(self, part, report, counts, log):
    self.parts.append(part.index)
    for example_id in self.ids[part.index]:
      report.records += 1
      report.examples += 1
      report.note_id(example_id, f"in-{part.index}.json")
      yield {"x": np.array([report.records])}


def convert_ids(directory, produce):
  return conversion.convert_once(str(directory), "n", {"input": "ids"}, produce, "ids",
                                 sharded.quiet, len(produce.ids))


def test_the_error_names_the_first_ids_and_counts_them_all_and_persists(tmp_path):
  ids = [[f"q{i}" for i in range(20)], [7, "7"], [7] + [f"q{i}" for i in range(5, 20)]]
  with pytest.raises(ValueError) as error:
    convert_ids(tmp_path, Ids(ids))
  message = str(error.value)
  assert ("16 example id(s) occur in more than one conversion shard (the first 10 below)"
          in message)
  assert ('  id "q5": n-00000-of-00003.tfrecord (from in-0.json), n-00002-of-00003.tfrecord '
          '(from in-2.json)\n') in message
  assert '  id 7: n-00001-of-00003.tfrecord (from in-1.json), n-00002-of-00003.tfrecord' in message
  assert '"q13"' in message and '"q14"' not in message   # 7, then q5..q13
  assert 'id "7"' not in message   # 7 and "7" are two ids
  again = Ids(ids)   # the shards stay done: a new call stops at once, converting nothing
  with pytest.raises(ValueError, match="16 example id"):
    convert_ids(tmp_path, again)
  assert again.parts == []


def test_a_done_file_without_ids_is_converted_again(tmp_path):
  produce = Ids([["a"], ["b"]])
  convert_ids(tmp_path, produce)
  done = tmp_path / "n-00000-of-00002.tfrecord.done.json"
  old = {k: v for k, v in json.loads(done.read_text()).items() if k != "ids"}
  done.write_text(json.dumps(old))
  os.remove(tmp_path / conversion.FEATURES_FILE)
  again = Ids([["a"], ["b"]])
  assert convert_ids(tmp_path, again)["written"] == 2 and again.parts == [0]

