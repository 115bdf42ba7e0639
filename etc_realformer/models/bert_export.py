"""The way back: one of this package's encoders written as a BERT in Google's format.

`export_bert_checkpoint` writes the long stream of an encoder (this package's checkpoint, an
official ETC checkpoint, or an EtcModel) as `bert_model.ckpt.*`, `bert_config.json` and
`vocab.txt`, under the names `bert_lifting` reads, and reports what that format cannot hold
(relative tables, the global stream, residual attention). Lifting the written BERT gives back
the same long stream (tests/test_bert_lifting.py).
"""

import dataclasses
import json
import os
import re
import shutil
from typing import Dict, List, Optional, Tuple

import numpy as np

from etc_realformer import checkpoint_conversion
from etc_realformer.models import official_checkpoint
from etc_realformer.models.bert_lifting import (
    CONFIG_NAME, GLOBAL_TOKEN_SOURCES, POOLER_FILE, PREFIX, TF_PREFIXES, UNUSED_PIECE,
    _TF_ACTIVATIONS, layout_problems, weight_name)
from etc_realformer.models.encoder import EtcModel
from etc_realformer.training import initialization

# What `export_bert_checkpoint` writes, beside the checkpoint (bert_model.ckpt.*).
VOCAB_NAME = "vocab.txt"
# BERT's format needs a position table; an encoder without one gets this many rows of zeros.
DEFAULT_MAX_POSITIONS = 512
# This package's activation -> its name in Google's bert_config.json (the lifting's table
# reversed; "gelu_approximate" is this package's other name for the tanh form). The erf form
# ("gelu_exact") has no name there: Google's "gelu" is the tanh approximation.
_TF_ACTIVATION_NAMES = dict({ours: google for google, ours in _TF_ACTIVATIONS.items()},
                            gelu_approximate="gelu")


@dataclasses.dataclass
class ExportReport:
  """What `export_bert_checkpoint` wrote, and what of the encoder BERT's format cannot hold."""
  source: str
  output_dir: str
  written: List[Tuple[str, Tuple[int, ...], str]]  # (BERT name, shape, the encoder weight)
  lost: List[str]                                  # what the written BERT does not have
  notes: List[str]
  bert_config: Dict
  vocab: Optional[str]                             # the vocab.txt copied, or None

  def summary(self, verbose: bool = False) -> str:
    lines = [f"{self.source}: {len(self.written)} BERT variables written to "
             f"{os.path.join(self.output_dir, TF_PREFIXES[0])}, vocabulary: "
             f"{self.vocab or 'none'}"]
    if verbose:
      lines += [f"  written  {name} {list(shape)} <- {weight}"
                for name, shape, weight in self.written]
    lines += [f"  not kept {what}" for what in self.lost]
    lines += [f"  note     {note}" for note in self.notes]
    return "\n".join(lines)

  def to_dict(self) -> Dict:
    return {"source": self.source, "output_dir": self.output_dir,
            "written": {name: weight for name, _, weight in self.written},
            "lost": self.lost, "notes": self.notes, "bert_config": self.bert_config,
            "vocab": self.vocab}


def _load_encoder(path: str):
  """(EtcModel, folder) of this package's encoder checkpoint (a prefix, its folder or a
  pretraining run) or of an official ETC checkpoint at `path`."""
  official = initialization.official_prefix(path)
  if official is not None:
    return EtcModel.from_official_checkpoint(official), os.path.dirname(official)
  try:
    prefix = initialization.package_prefix(path)
  except FileNotFoundError:
    raise FileNotFoundError(
        f"{path}: no encoder checkpoint of this package there (expected <folder>/encoder.index "
        "with etc_config.json beside it, a pretraining run, or an official ETC model.ckpt)"
    ) from None
  return checkpoint_conversion.load_encoder_checkpoint(prefix), os.path.dirname(prefix)


def _global_stream_differences(model) -> List[str]:
  """The global stream's weights that are not copies of the long stream's (they are lost)."""
  emb, out = model.embeddings, []
  pairs = [(emb.norms["global"].gamma, emb.norms["long"].gamma),
           (emb.norms["global"].beta, emb.norms["long"].beta)]
  if emb.position_tables:
    pairs.append((emb.position_tables["global"], emb.position_tables["long"]))
  for block in model.blocks:
    attention = block.attention
    names = attention._names  # pylint: disable=protected-access  # component -> weight
    for component in ("l2g", "g2g", "g2l"):
      for p in "qkv":
        mine, long_name = names[f"{component}_{p}"], names[f"l2l_{p}"]
        pairs += [(attention.projection_kernels[mine], attention.projection_kernels[long_name]),
                  (attention.projection_biases[mine], attention.projection_biases[long_name])]
    if "global_out" in attention.output_kernels:
      pairs += [(attention.output_kernels["global_out"], attention.output_kernels["long_out"]),
                (attention.output_biases["global_out"], attention.output_biases["long_out"])]
    norms = [(block.attention_norms["global"], block.attention_norms["long"])]
    if block.feed_forwards:
      norms.append((block.feed_forward_norms["global"], block.feed_forward_norms["long"]))
      ff_global, ff_long = block.feed_forwards["global"], block.feed_forwards["long"]
      for dense in ("inner", "outer"):
        g, l = getattr(ff_global, dense), getattr(ff_long, dense)
        pairs += [(g.kernel, l.kernel), (g.bias, l.bias)]
    for g, l in norms:
      pairs += [(g.gamma, l.gamma), (g.beta, l.beta)]
  seen = set()
  for global_weight, long_weight in pairs:
    name = weight_name(global_weight)
    if name not in seen and not np.array_equal(global_weight.numpy(), long_weight.numpy()):
      seen.add(name)
      out.append(name)
  return out


def bert_weights_of(model, max_position_embeddings: int = DEFAULT_MAX_POSITIONS
                    ) -> Tuple[Dict[str, np.ndarray], Dict[str, str], List[str], List[str]]:
  """The long stream of the EtcModel `model` under Google's BERT names (the lifting's table
  read backwards); -> ({BERT name: array}, {BERT name: encoder weight}, lost, notes).

  Raises:
    ValueError: naming every field of the model's config that BERT's format cannot express.
  """
  config = model.etc_config
  problems = []
  if config.hidden_act not in _TF_ACTIVATION_NAMES:
    problems.append(f"hidden_act {config.hidden_act!r} (Google's bert_config.json knows "
                    f"{', '.join(sorted(set(_TF_ACTIVATION_NAMES.values())))}; its 'gelu' is the "
                    "tanh approximation, this package's 'gelu')")
  problems += layout_problems(config, config.hidden_size)
  if problems:
    raise ValueError("BERT's format cannot express this encoder: " + "; ".join(problems))

  weights: Dict[str, np.ndarray] = {}
  sources: Dict[str, str] = {}
  lost, notes = [], []

  def put(name, value, source, shape=None):
    value = np.asarray(value.numpy() if hasattr(value, "numpy") else value, np.float32)
    weights[f"{PREFIX}/{name}"] = value if shape is None else value.reshape(shape)
    sources[f"{PREFIX}/{name}"] = source

  def put_layer(name, layer):  # a Dense or a LayerNorm
    if hasattr(layer, "kernel"):
      put(f"{name}/kernel", layer.kernel, weight_name(layer.kernel))
      put(f"{name}/bias", layer.bias, weight_name(layer.bias))
    else:
      put(f"{name}/gamma", layer.gamma, weight_name(layer.gamma))
      put(f"{name}/beta", layer.beta, weight_name(layer.beta))

  emb, hidden = model.embeddings, config.hidden_size
  put("embeddings/word_embeddings", emb.token_table, weight_name(emb.token_table))
  put("embeddings/token_type_embeddings", emb.segment_table, weight_name(emb.segment_table))
  if emb.position_tables:
    table = emb.position_tables["long"]
    put("embeddings/position_embeddings", table, weight_name(table))
  else:
    put("embeddings/position_embeddings", np.zeros([max_position_embeddings, hidden]),
        "(none: zeros)")
    notes.append(f"the encoder has no absolute position table: "
                 f"{PREFIX}/embeddings/position_embeddings is {max_position_embeddings} rows of "
                 "zeros (BERT's format needs one; adding zeros changes nothing, and a lift "
                 "with position_embeddings='drop' skips it)")
  put_layer("embeddings/LayerNorm", emb.norms["long"])
  for index, block in enumerate(model.blocks):
    scope, attention = f"encoder/layer_{index}", block.attention
    names = attention._names  # pylint: disable=protected-access  # component -> weight
    width = attention.num_attention_heads * attention.head_size
    for p, role in (("q", "query"), ("k", "key"), ("v", "value")):
      kernel, bias = (attention.projection_kernels[names[f"l2l_{p}"]],
                      attention.projection_biases[names[f"l2l_{p}"]])
      put(f"{scope}/attention/self/{role}/kernel", kernel, weight_name(kernel), (hidden, width))
      put(f"{scope}/attention/self/{role}/bias", bias, weight_name(bias), (width,))
    kernel, bias = attention.output_kernels["long_out"], attention.output_biases["long_out"]
    put(f"{scope}/attention/output/dense/kernel", kernel, weight_name(kernel), (width, hidden))
    put(f"{scope}/attention/output/dense/bias", bias, weight_name(bias))
    put_layer(f"{scope}/attention/output/LayerNorm", block.attention_norms["long"])
    put_layer(f"{scope}/intermediate/dense", block.feed_forwards["long"].inner)
    put_layer(f"{scope}/output/dense", block.feed_forwards["long"].outer)
    put_layer(f"{scope}/output/LayerNorm", block.feed_forward_norms["long"])

  # What BERT's format has no place for.
  tables = [(emb_, bias) for block in model.blocks
            for emb_, bias in block.attention.relative_tables.values()]
  if tables:
    nonzero = sum(bool(e.numpy().any() or b.numpy().any()) for e, b in tables)
    lost.append(f"relative position tables ({len(tables)}: every layer, local and global "
                f"path; {nonzero} not all zero): BERT has no relative term, a lift starts "
                "them at zero" + (" (nothing lost: all zero)" if not nonzero else ""))
  differing = _global_stream_differences(model)
  if differing:
    kinds = sorted(set(re.sub(r"layer_\d+/", "layer_*/", name) for name in differing))
    lost.append(f"the global stream ({len(differing)} weights that differ from the long "
                f"stream's: {', '.join(kinds)}): BERT has one stream, a lift copies the long "
                "one into it")
  else:
    notes.append("the global stream's weights are copies of the long stream's: nothing lost")
  if config.residual_attention != "none":
    lost.append(f"residual attention (residual_attention={config.residual_attention!r}, paths "
                f"{list(config.residual_paths)}): BERT adds no earlier scores, so from the "
                "second layer on the written weights compute another function in BERT (a "
                "lift given the same residual_attention adds them again)")
  if config.num_persistent_memory:
    lost.append(f"the persistent memory ({config.num_persistent_memory} key/value slots per "
                "layer): BERT has none")
  notes.append(f"BERT attends over the whole input: the local window (local_radius="
               f"{config.local_radius}), the hard masks and the global tokens are not weights; "
               "the global tokens' rows of the token table are written as word pieces")
  return weights, sources, lost, notes


def _vocab_lines(path: str) -> int:
  with open(path, encoding="utf-8") as f:
    return sum(1 for _ in f)


def export_bert_checkpoint(encoder_or_folder, output_dir: str,
                           vocab_file: Optional[str] = None,
                           max_position_embeddings: int = DEFAULT_MAX_POSITIONS
                           ) -> ExportReport:
  """Writes the long stream of one of this package's encoders as a BERT in Google's format.

  OUT/bert_model.ckpt.*  a name-based TF checkpoint under BERT's names (bert/embeddings/...,
                         bert/encoder/layer_i/..., and bert/pooler/dense/... when the encoder
                         was lifted from a BERT with a pooler)
  OUT/bert_config.json   vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
                         intermediate_size, hidden_act, dropouts, initializer_range,
                         max_position_embeddings (the encoder's table, or `max_position_
                         embeddings` rows of zeros when it has none), type_vocab_size (every
                         row of its segment table)
  OUT/vocab.txt          `vocab_file`, or the vocab.txt of the encoder's folder

  written atomically (a temporary folder beside OUT, then renamed into place, the checkpoint's
  index last). `EtcModel.from_bert_checkpoint(OUT)` lifts it back: the long stream's weights
  come back unchanged.

  Args:
    encoder_or_folder: an EtcModel, or what this package's encoder checkpoint loads from (a
      folder such as pretrained/tiny_english, an `.../encoder` prefix, a pretraining run) or
      an official ETC checkpoint.
    output_dir: the folder to write.
    vocab_file: the WordPiece vocabulary to write as vocab.txt (default: the folder's).
    max_position_embeddings: rows of the zero position table of an encoder without one.

  Returns:
    An ExportReport: what was written, and what BERT's format cannot hold (relative tables,
    the global stream where it differs from the long one, residual attention, memory).

  Raises:
    ValueError: an encoder BERT's format cannot express (naming the config fields), or a
      vocabulary with more pieces than the token table has rows (naming the file).
    FileNotFoundError: no encoder checkpoint at `encoder_or_folder`, or no `vocab_file`.
  """
  if isinstance(encoder_or_folder, (str, os.PathLike)):
    source = os.fspath(encoder_or_folder)
    model, folder = _load_encoder(source)
  else:
    model, folder, source = encoder_or_folder, None, "the given EtcModel"
  try:
    weights, sources, lost, notes = bert_weights_of(model, max_position_embeddings)
  except ValueError as e:
    raise ValueError(f"{source}: {e}") from None
  config = model.etc_config

  pooler, pooler_from = None, None
  report = getattr(model, "lift_report", None)
  if report is not None and report.pooler:
    pooler, pooler_from = report.pooler, "lift_report.pooler"
  elif folder and os.path.isfile(os.path.join(folder, POOLER_FILE)):
    pooler_from = os.path.join(folder, POOLER_FILE)
    with np.load(pooler_from) as values:
      pooler = {key: values[key] for key in ("kernel", "bias")}
  if pooler is not None:
    for key in ("kernel", "bias"):
      name = f"{PREFIX}/pooler/dense/{key}"
      weights[name], sources[name] = np.asarray(pooler[key], np.float32), pooler_from
  else:
    notes.append("no pooler (the encoder was not lifted from a BERT with one): "
                 f"{PREFIX}/pooler/dense is not written")

  vocab = vocab_file
  if vocab is None and folder and os.path.isfile(os.path.join(folder, VOCAB_NAME)):
    vocab = os.path.join(folder, VOCAB_NAME)
  if vocab is not None:
    if not os.path.isfile(vocab):
      raise FileNotFoundError(f"vocab_file {vocab}: no such file")
    pieces = _vocab_lines(vocab)
    if pieces > config.vocab_size:
      raise ValueError(f"{vocab}: {pieces} pieces, but the token table of {source} has "
                       f"{config.vocab_size} rows (vocab_size): ids past it have no embedding")
    if pieces < config.vocab_size:
      notes.append(f"{vocab} holds {pieces} pieces for the {config.vocab_size} rows of the "
                   f"token table (vocab_size): rows {pieces}.. are never produced by its "
                   "tokenizer")
    with open(vocab, encoding="utf-8") as f:
      ids = [line.strip() for line, _ in zip(f, range(max(GLOBAL_TOKEN_SOURCES) + 1))]
    unused = [i for i in sorted(GLOBAL_TOKEN_SOURCES) if i < len(ids) and UNUSED_PIECE.match(
        ids[i])]
    if unused:
      notes.append(f"the global tokens' rows (ids {', '.join(map(str, unused))}) are unused "
                   "slots of the vocabulary: a lift with global_token_init='cls' (the default, "
                   "and train.init_checkpoint's) starts them from [CLS]/[MASK] instead; "
                   "'keep' keeps the written rows")
  else:
    notes.append("no vocabulary: no vocab.txt in the encoder's folder and no vocab_file, so "
                 "none is written")

  positions = weights[f"{PREFIX}/embeddings/position_embeddings"].shape[0]
  bert_config = {
      "vocab_size": config.vocab_size,
      "hidden_size": config.hidden_size,
      "num_hidden_layers": config.num_hidden_layers,
      "num_attention_heads": config.num_attention_heads,
      "intermediate_size": config.intermediate_size,
      "hidden_act": _TF_ACTIVATION_NAMES[config.hidden_act],
      "hidden_dropout_prob": config.hidden_dropout_prob,
      "attention_probs_dropout_prob": config.attention_probs_dropout_prob,
      "max_position_embeddings": positions,
      "type_vocab_size": config.segment_vocab_size,
      "initializer_range": config.initializer_range,
  }
  with checkpoint_conversion._staging_dir(output_dir) as tmp:  # pylint: disable=protected-access
    official_checkpoint.write_official_checkpoint(weights, os.path.join(tmp, TF_PREFIXES[0]))
    with open(os.path.join(tmp, CONFIG_NAME), "w", encoding="utf-8") as f:
      json.dump(bert_config, f, indent=2, sort_keys=True)
    if vocab is not None:
      shutil.copyfile(vocab, os.path.join(tmp, VOCAB_NAME))
    # pylint: disable-next=protected-access
    checkpoint_conversion._publish(tmp, output_dir, last=TF_PREFIXES[0] + ".index")
  written = [(name, tuple(weights[name].shape), sources[name]) for name in sorted(weights)]
  return ExportReport(source=source, output_dir=output_dir, written=written, lost=lost,
                      notes=notes, bert_config=bert_config, vocab=vocab)
