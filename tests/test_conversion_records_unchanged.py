"""The converters write exactly the records they wrote before their speed-ups.

Each task converts a small fixed input from its benchmark generator
(`synthetic_data/<task>.py`, its benchmark preset: what `benchmarks/conversion.py` measures) with the
shipped tiny English vocabulary, the tiny and the real feature settings and both tokenizer
backends (the pure-Python reference and tensorflow-text from the start); every record is parsed
and hashed in a canonical form (features in name order), and the digests must equal the ones
below, computed from the converters as they were before they were optimised. NQ's prediction
windows (no labels) are hashed too.

A change that alters a digest on purpose (a new feature, a different layout) must say so: run
this file with UPDATE_RECORD_DIGESTS=1 to print the new table. The "tiny" rows were renewed when
configs/<task>/tiny.yaml became the demo's long-document config (ETC's input lengths); the
converters and the inputs were unchanged then, as the unchanged rows of the real settings show.
WikiHop's rows, HotpotQA's "tiny" row and NQ's rows were renewed when their package layouts were
removed: they write Google's features now (their values are pinned by tests/test_*_layout.py
against Google's converter; HotpotQA's etc_base row, Google's settings, did not change). NQ's
real-settings row moved from the removed configs/nq/base.yaml to etc_base.yaml.
"""

import dataclasses
import hashlib
import importlib
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from etc_realformer.data import tokenization
from etc_realformer.data.span_tokenization import OffsetTokenizer
from synthetic_data import writer
from tasks.common.read_report import ReadReport

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(ROOT, "pretrained", "tiny_english", "vocab.txt")
# task -> (benchmark items converted, the tiny and the real settings' config names)
CASES = {"nq": (8, ("tiny", "etc_base")), "hotpotqa": (24, ("tiny", "etc_base")),
         "wikihop": (24, ("tiny", "etc_base")), "openkp": (24, ("tiny", "etc_base"))}
BACKENDS = ("python", "tensorflow_text")
SHARDS = 2

# (task, config) -> (records written, SHA-256 of the parsed records, SHA-256 of the conversion's
# counts); the same with both backends (the tokenizer's ids do not depend on it).
EXPECTED = {
    ("nq", "tiny"): (26, "3cb1e57cd520992f3af7a402efaa3fe958447aa2b2b8ee7bf51275bcdc156b39",
                     "e7e74ed48463292f22235a512a883249cbd3cacdd08adbc1bec03c011e3a3e1b"),
    ("nq", "etc_base"): (44, "172fb862f1dee2fe6c8198e1f388b680dfe99d972fc546c2ca3a1b6649478f46",
                         "c92c4225e26a268194ed7fce7f92e5ab77cefe73731f6145b07cd3f691c1e2be"),
    ("hotpotqa", "tiny"): (23, "50457434646c22c5c80d99d3929122202b9814ad4a43fbac68157639675bb511",
                           "55e4d53d378c81b7bf47a581170f8d057b292d97abfc521dc4ec8d1a5e906990"),
    ("hotpotqa", "etc_base"): (
        24, "471c44aa66dc0a0576ff21968eb2b03489d3058d69b14f56ca1cc1a949b47683",
        "cd4b42abad0c824e989b107d35c687e08680cdfa53bf436aacf9eed3823c19b9"),
    ("wikihop", "tiny"): (24, "dd9a5b32ad5e13579c6bbafdb8742a637818fcb74c109e82d40e3c5260dff3c8",
                          "cc6784f0e43b9cdb2a0a52b354a14eea2f02ec104dd099364f288b5dbb3311e5"),
    ("wikihop", "etc_base"): (
        24, "595d6874609efe4b805953cff0fa400ea78fd2fa503b0aa6cdc994cd94f800ac",
        "01639ff1ab29a87ed7d0b7916976445f27408f1df36760275ce7638ead2506f1"),
    ("openkp", "tiny"): (24, "6aaaba20e708a1b7db6f8299e8e0a10934a24cc4747e6efcf7d7c8ad936e1080",
                         "cd4b5839e1224b942c031b246d73fcfdffe7bdc7a157b30153f7219f3c1c4c4c"),
    ("openkp", "etc_base"): (
        24, "f7aae05ff8e037281d8c9234d688100e114df03e52fc3657e16abc5143d950ee",
        "cd4b5839e1224b942c031b246d73fcfdffe7bdc7a157b30153f7219f3c1c4c4c"),
}
# NQ prediction windows of the same pages, per config (and the real settings without
# html tokens): (windows, SHA-256).
EXPECTED_NQ_PREDICTION = {
    "tiny": (88, "859e67bca40d11343d0d90abcb5195411d9b145232124dec9d2feab6dd89f3df"),
    "etc_base": (44, "185a4d75ccd36619cf02248e07e7fb3d13e6febc1fadb454637cf049a1bdeff7"),
    "etc_base_without_html": (
        39, "3bf8336aed3ea2a439a45f0be4e40d226d1822e0ffd6087520302389f66c0e48"),
}


def _feature_config(task, config):
  path = os.path.join(ROOT, "configs", task.name, f"{config}.yaml")
  return task.parse_sections(task.load_run_config(path))[1]


def _write_input(task_name, directory):
  generator = importlib.import_module(f"synthetic_data.{task_name}")
  items = generator.generate_examples(CASES[task_name][0], seed=3)
  if task_name == "nq":
    path = os.path.join(directory, "nq-train-00.jsonl.gz")
    writer.write_jsonl(path, items, compress=True)
  elif task_name == "openkp":
    path = os.path.join(directory, "openkp.jsonl")
    writer.write_jsonl(path, items)
  else:
    path = os.path.join(directory, f"{task_name}.json")
    writer.write_json(path, items)
  return path


def _canonical(feature_map) -> bytes:
  """A record's features in name order, each with its kind and values (independent of the
  order protobuf writes the map in)."""
  parts = []
  for name in sorted(feature_map):
    value = feature_map[name]
    kind = value.WhichOneof("kind")
    values = list(getattr(value, kind).value) if kind else []
    parts.append(f"{name}:{kind}:{values!r}")
  return "\n".join(parts).encode("utf-8")


def _records_digest(files):
  digest, count = hashlib.sha256(), 0
  for path in files:
    digest.update(os.path.basename(path).encode("utf-8") + b"\0")
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
      canonical = _canonical(tf.train.Example.FromString(record).features.feature)
      digest.update(len(canonical).to_bytes(8, "little") + canonical)
      count += 1
  return count, digest.hexdigest()


def _dict_digest(windows):
  """The digest of feature dicts as the records would hold them (int64 / float lists)."""
  digest = hashlib.sha256()
  for f in windows:
    for name in sorted(f):
      value = np.asarray(f[name])
      kind = "float_list" if value.dtype.kind == "f" else "int64_list"
      digest.update(f"{name}:{kind}:{np.ravel(value).tolist()!r}\n".encode("utf-8"))
  return digest.hexdigest()


@pytest.fixture(scope="module")
def tokenizers():
  return {backend: OffsetTokenizer(tokenization.WordPieceTokenizer(VOCAB, backend=backend))
          for backend in BACKENDS}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp("benchmark_inputs"))
  return {name: _write_input(name, directory) for name in CASES}


def _print_update(key, got):
  if os.environ.get("UPDATE_RECORD_DIGESTS"):
    print(f"\n    {key!r}: {got!r},")


@pytest.mark.parametrize("task_name", list(CASES))
def test_records_unchanged(task_name, tokenizers, inputs, tmp_path):
  task = importlib.import_module(f"tasks.{task_name}.task").TASK
  for config in CASES[task_name][1]:
    feature_config = _feature_config(task, config)
    for backend in BACKENDS:
      output = str(tmp_path / f"{config}_{backend}")
      info = task.convert_file(inputs[task_name], output, tokenizers[backend], VOCAB,
                               feature_config, SHARDS, log=lambda _: None)
      got = _records_digest(task.record_files(output))
      assert got[0] == info["written"]
      counts = {key: info[key] for key in ("records", "written", "skipped", "counts")}
      got += (hashlib.sha256(json.dumps(counts, sort_keys=True).encode()).hexdigest(),)
      _print_update((task_name, config), got)
      if not os.environ.get("UPDATE_RECORD_DIGESTS"):
        assert got == EXPECTED[(task_name, config)], (
            f"{task_name} {config} backend {backend}: the records differ from the ones the "
            "converter wrote before (records written, digest)")


def test_nq_prediction_windows_unchanged(tokenizers, inputs):
  from tasks.nq import data, records  # pylint: disable=g-import-not-at-top
  task = importlib.import_module("tasks.nq.task").TASK
  examples = list(data.iter_examples(inputs["nq"], with_labels=False,
                                     report=ReadReport(inputs["nq"])))
  for config in CASES["nq"][1] + ("etc_base_without_html",):
    feature_config = _feature_config(task, config.replace("_without_html", ""))
    if config.endswith("_without_html"):
      feature_config = dataclasses.replace(feature_config, include_html_tokens=False)
    for backend in BACKENDS:
      windows = []
      for _, _, example_windows in records.prediction_windows(
          examples, tokenizers[backend], feature_config):
        windows.extend(example_windows)
      got = (len(windows), _dict_digest(windows))
      _print_update(("nq prediction", config), got)
      if not os.environ.get("UPDATE_RECORD_DIGESTS"):
        assert got == EXPECTED_NQ_PREDICTION[config], (
            f"nq prediction windows, {config} backend {backend}: they differ from before")


def test_tokenize_each_matches_one_text_at_a_time(tokenizers):
  """`OffsetTokenizer.tokenize_each` (the texts joined by spaces, tokenized once) gives every
  text the pieces it gets alone, also where the joined text could differ: a capital sigma
  whose lower-case form depends on its neighbours, punctuation, CJK, dropped characters, empty
  texts, whitespace inside a text, and more than the fast path's cached text length."""
  texts = ["ΟΔΟΣ", "Σ", "ΑΣ.", ".Σα", "", "café,", "Zoë's", "中文字", "a\u200bb", "\x00",
           " ", "tab\there", "1,921.5", "[CLS]", "<P>", "well-known", "ΣΣ" * 40, "x" * 300,
           "don't", "\u00ad", "Ǆemal", "İstanbul", "e\u0301", "", "end"]
  for backend, tokenizer in tokenizers.items():
    ids, owner = tokenizer.tokenize_each(texts)
    expected = tokenizer.tokenize_many(texts)
    assert ids.tolist() == [i for p in expected for i in p.ids], backend
    assert owner.tolist() == [k for k, p in enumerate(expected) for _ in p.ids], backend
  empty = tokenizers["python"].tokenize_each([])
  assert empty[0].shape == empty[1].shape == (0,)
