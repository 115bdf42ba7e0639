"""The pretrain -> fine-tune path: Wikipedia dumps to a corpus, several masked passes, the
vocabulary travelling with the encoder, configs naming files beside them, and the shipped
English-pretrained tiny encoder every task demo starts from."""

import bz2
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import pretrain_fixtures as fx
from etc_realformer.config import EtcConfig
from etc_realformer.data import corpus
from etc_realformer.data import pretraining_data
from etc_realformer.data import wikitext
from etc_realformer.data.tokenization import WordPieceTokenizer
from etc_realformer.training import initialization
from etc_realformer.training import pretraining_run
from etc_realformer.training import run_config as run_config_lib
from tasks.common import finetuning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(ROOT, "pretrained", "tiny_english")
TASKS = ("hotpotqa", "nq", "openkp", "wikihop")

ARTICLE = """{{Infobox person|name=Ada {{nowrap|Lovelace}}}}
'''Ada Lovelace''' (10 December 1815<ref name="a">Some ref</ref> - 27 November 1852) was an \
[[England|English]] [[mathematician]] and writer.<ref>x</ref>
== Early life ==
She was the only legitimate child of the poet [[Lord Byron]] and his wife, [[Anne Isabella \
Milbanke|Anne]].
[[File:Ada.jpg|thumb|A portrait of [[Ada Lovelace|Ada]]]]
* A list item that is long enough to count as words here.
{| class="wikitable"
| a || b
|}
See [http://example.com the example site] for more about her notes and programs.
[[Category:Mathematicians]]
Short line.
"""
PROSE = ("Ada Lovelace (10 December 1815 - 27 November 1852) was an English mathematician and "
         "writer.\nShe was the only legitimate child of the poet Lord Byron and his wife, Anne.\n"
         "See the example site for more about her notes and programs.")


def test_strip_markup_keeps_the_prose_only():
  assert wikitext.strip_markup(ARTICLE) == PROSE


def page(title, text, namespace=0):
  return (f"<page><title>{title}</title><ns>{namespace}</ns><id>1</id><revision>"
          f"<text xml:space=\"preserve\">{text}</text></revision></page>")


def write_dump(path, pages):
  from xml.sax.saxutils import escape  # pylint: disable=g-import-not-at-top
  body = "".join(page(title, escape(text), ns) for title, text, ns in pages)
  xml = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">'
         f"<siteinfo><sitename>Wikipedia</sitename></siteinfo>{body}</mediawiki>")
  with bz2.open(path, "wt", encoding="utf-8") as f:
    f.write(xml)
  return str(path)


def test_read_dump_keeps_articles_and_counts_what_it_leaves_out(tmp_path):
  dump = write_dump(tmp_path / "dump.xml.bz2", [
      ("Ada Lovelace", ARTICLE, 0), ("AdaLovelace", "#REDIRECT [[Ada Lovelace]]", 0),
      ("Talk:Ada Lovelace", ARTICLE, 1), ("Stub", "A stub.", 0), ("Again", ARTICLE, 0)])
  report = wikitext.DumpReport()
  articles = list(wikitext.read_dump(dump, report, min_words=20))
  assert articles == [("Ada Lovelace", PROSE), ("Again", PROSE)]
  assert report.pages == 5 and report.articles == 2 and report.words == 2 * len(PROSE.split())
  assert dict(report.skipped) == {wikitext.REASON_REDIRECT: 1, wikitext.REASON_NAMESPACE: 1,
                                  wikitext.REASON_SHORT: 1}


def test_prepare_wikipedia_writes_a_corpus_the_readers_take(tmp_path):
  dump = write_dump(tmp_path / "dump.xml.bz2", [("A", ARTICLE, 0), ("B", ARTICLE, 0)])
  out = str(tmp_path / "wiki.txt")
  env = dict(fx.worker_env())
  result = subprocess.run([sys.executable, "-m", "etc_realformer.prepare_wikipedia",
                           f"--input={dump}", f"--output={out}", "--min_words=20"],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr
  assert "2 article(s) kept" in result.stdout
  documents = list(corpus.read_corpus([out], corpus.CorpusReport()))
  assert len(documents) == 2
  assert documents[0].sentences == PROSE.split("\n")
  missing = subprocess.run([sys.executable, "-m", "etc_realformer.prepare_wikipedia",
                            f"--input={tmp_path / 'none.xml'}", f"--output={out}"],
                           capture_output=True, text=True, env=env, cwd=ROOT, check=False)
  assert missing.returncode != 0 and "none.xml does not exist" in missing.stderr
  assert "Traceback" not in missing.stderr


def read_records(directory):
  files = sorted(tf.io.gfile.glob(os.path.join(directory, "*.tfrecord")))
  records = []
  for raw in tf.data.TFRecordDataset(files):
    example = tf.train.Example.FromString(raw.numpy())
    records.append({k: list(v.int64_list.value) for k, v in example.features.feature.items()
                    if v.int64_list.value})
  return records


def test_dupe_factor_masks_each_pass_with_its_own_seed(tmp_path):
  corpus_file = str(tmp_path / "corpus.txt")
  fx.synthetic_corpus.write_corpus(corpus_file, num_documents=12, seed=3)
  tokenizer = WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB)
  once = pretraining_data.convert_corpus([corpus_file], str(tmp_path / "once"), tokenizer,
                                         fx.DATA_CONFIG, seed=5, log=lambda *_: None)
  twice = pretraining_data.convert_corpus([corpus_file], str(tmp_path / "twice"), tokenizer,
                                          fx.DATA_CONFIG, seed=5, log=lambda *_: None,
                                          dupe_factor=2)
  assert twice["written"] == 2 * once["written"]
  assert twice["corpus"] == once["corpus"]          # the report counts the corpus once
  first, both = read_records(tmp_path / "once"), read_records(tmp_path / "twice")
  n = len(first)
  assert both[:n] == first                          # pass 1 is the single pass (seed 5)
  positions = [r["masked_lm_positions"] for r in both]
  assert positions[n:] != positions[:n]             # pass 2 masks elsewhere (seed 6)
  with pytest.raises(ValueError, match="dupe_factor"):
    pretraining_data.convert_corpus([corpus_file], str(tmp_path / "bad"), tokenizer,
                                    fx.DATA_CONFIG, dupe_factor=0)


def test_the_vocabulary_travels_from_the_data_to_the_fine_tuning_run(tmp_path):
  data_dir = fx.make_tiny_data(str(tmp_path))
  pretraining_data.copy_vocab(pretraining_data.EMBEDDED_VOCAB, data_dir)
  run_dir = str(tmp_path / "run")
  pretraining_run.run_pretraining(fx.tiny_run_config(data_dir, num_train_steps=2), run_dir,
                                  verbose=0)
  with open(os.path.join(run_dir, "final", "vocab.txt")) as f, \
      open(pretraining_data.EMBEDDED_VOCAB) as g:
    assert f.read() == g.read()
  train = finetuning.TaskTrainConfig(init_checkpoint=run_dir)
  assert finetuning.vocab_source(train) == os.path.join(run_dir, "final", "vocab.txt")
  # An explicit vocab_file wins; no checkpoint means "learn one".
  assert finetuning.vocab_source(finetuning.TaskTrainConfig(init_checkpoint=run_dir,
                                                            vocab_file="v.txt")) == "v.txt"
  assert finetuning.vocab_source(finetuning.TaskTrainConfig()) == ""


def test_config_paths_starting_with_a_dot_are_relative_to_the_config(tmp_path):
  folder = tmp_path / "configs" / "task"
  folder.mkdir(parents=True)
  config = folder / "run.yaml"
  config.write_text("model: {hidden_size: 16, num_attention_heads: 2, intermediate_size: 32}\n"
                    "train: {init_checkpoint: ../../pretrained/x, train_file: data/train.json,"
                    " batch_size: 4}\n")
  loaded = run_config_lib.load_run_config(str(config), ("train",))
  assert loaded["train"] == {"init_checkpoint": str(tmp_path / "pretrained" / "x"),
                             "train_file": "data/train.json", "batch_size": 4}
  run_config_lib.apply_overrides(loaded, ["train.init_checkpoint=", "train.batch_size=8"])
  assert loaded["train"]["init_checkpoint"] == "" and loaded["train"]["batch_size"] == 8


@pytest.mark.parametrize("name", TASKS)
def test_every_demo_config_starts_from_the_shipped_english_encoder(name):
  task = importlib.import_module(f"tasks.{name}.task").TASK
  run_config = task.load_run_config(task.default_config())
  train = run_config["train"]
  assert os.path.realpath(train["init_checkpoint"]) == os.path.realpath(SHIPPED)
  model_config = EtcConfig.from_dict(run_config["model"])
  model = task.build_model(model_config, task.predictor_class.feature_config_class(
      **run_config.get("features", {})))
  model.build()
  initialization.make_initializer(train["init_checkpoint"], model_config)(model)
  reference = tf.train.load_checkpoint(os.path.join(SHIPPED, "encoder"))
  stored = sorted((tuple(shape), float(np.sum(reference.get_tensor(name))))
                  for name, shape in tf.train.list_variables(os.path.join(SHIPPED, "encoder"))
                  if name.startswith("encoder/"))
  loaded = sorted((tuple(v.shape), float(np.sum(v.numpy()))) for v in model.encoder.weights)
  assert len(stored) == len(loaded) > 20             # every encoder weight comes from the file
  for (shape_a, sum_a), (shape_b, sum_b) in zip(stored, loaded):
    assert shape_a == shape_b and sum_a == pytest.approx(sum_b, rel=1e-6, abs=1e-6)
  vocab = finetuning.vocab_source(finetuning.TaskTrainConfig(
      init_checkpoint=train["init_checkpoint"]))
  assert vocab == os.path.join(SHIPPED, "vocab.txt")
  with open(os.path.join(SHIPPED, "etc_config.json")) as f:
    assert json.load(f)["vocab_size"] == model_config.vocab_size
