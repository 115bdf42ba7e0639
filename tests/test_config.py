"""EtcConfig: official keys, file round trips and errors that name the key."""

import json

import pytest

from etc_realformer import EtcConfig

# The keys of an official ETC-base etc_config.json.
OFFICIAL_BASE = {
    "vocab_size": 30522, "segment_vocab_size": 16, "embedding_size": None, "hidden_size": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "local_radius": 84,
    "att_size_per_head": None, "relative_pos_max_distance": 12, "relative_vocab_size": 32,
    "max_absolute_position_embeddings": 0, "intermediate_size": 3072,
    "inner_activation": "gelu", "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
    "share_feed_forward_params": True, "share_kv_projections": False,
    "share_qkv_projections": True, "share_att_output_projection": False,
    "use_pre_activation_order": False, "use_hard_g2l_mask": False, "use_hard_l2g_mask": False,
    "grad_checkpointing_period": 0,
}


def test_official_config_loads_unchanged(tmp_path):
  path = tmp_path / "etc_config.json"
  path.write_text(json.dumps(OFFICIAL_BASE))
  config = EtcConfig.from_json_file(str(path))
  assert config.hidden_size == 768 and config.local_radius == 84
  assert config.hidden_act == "gelu" and config.head_size == 64
  assert config == EtcConfig(vocab_size=30522)  # ETC-base is the default


def test_json_and_yaml_round_trip(tmp_path):
  config = EtcConfig(vocab_size=100, hidden_size=32, num_attention_heads=4,
                     residual_attention="mean", residual_paths=("local",),
                     num_persistent_memory=3, use_feed_forward=False)
  json_path = tmp_path / "c.json"
  json_path.write_text(config.to_json_string())
  assert EtcConfig.from_json_file(str(json_path)) == config
  import yaml  # pylint: disable=g-import-not-at-top
  yaml_path = tmp_path / "c.yaml"
  yaml_path.write_text(yaml.safe_dump(config.to_dict()))
  assert EtcConfig.from_yaml_file(str(yaml_path)) == config
  assert EtcConfig.from_file(str(yaml_path)) == config


@pytest.mark.parametrize("changes,key", [
    ({"relative_pos_max_distance": 20, "relative_vocab_size": 32}, "relative_vocab_size"),
    ({"hidden_size": 100, "num_attention_heads": 12}, "hidden_size"),
    ({"residual_attention": "product"}, "residual_attention"),
    ({"residual_paths": ["global", "everywhere"]}, "residual_paths"),
    ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob"),
    ({"num_hidden_layers": 0}, "num_hidden_layers"),
    ({"local_radius": -1}, "local_radius"),
    ({"hidden_act": "sigmoidish"}, "hidden_act"),
    ({"use_hard_g2l_mask": "yes"}, "use_hard_g2l_mask"),
    ({"num_persistent_memory": 2.5}, "num_persistent_memory"),
])
def test_invalid_values_name_the_key(changes, key):
  with pytest.raises(ValueError, match=key):
    EtcConfig(**changes)
  with pytest.raises(ValueError, match=key):
    EtcConfig.from_dict(changes)


def test_unknown_key_is_named_with_the_file(tmp_path):
  path = tmp_path / "bad.json"
  path.write_text(json.dumps({"hidden_size": 64, "num_attention_heads": 4, "hiden_layers": 3}))
  with pytest.raises(ValueError, match=r"bad\.json.*hiden_layers"):
    EtcConfig.from_json_file(str(path))


def test_not_json_is_a_clear_error(tmp_path):
  path = tmp_path / "broken.json"
  path.write_text("{not json")
  with pytest.raises(ValueError, match="broken.json: not valid JSON"):
    EtcConfig.from_json_file(str(path))


def test_att_size_per_head_allows_indivisible_hidden():
  config = EtcConfig(hidden_size=100, num_attention_heads=3, att_size_per_head=16)
  assert config.head_size == 16


def test_exponent_floats_read_as_numbers_in_configs_and_overrides(tmp_path):
  # YAML 1.1 reads 4e-5 as a string; configs and --set read it as the number a user means.
  from etc_realformer import io_utils  # pylint: disable=g-import-not-at-top
  from etc_realformer.training import run_config as run_config_lib  # pylint: disable=g-import-not-at-top
  text = "a: 4e-5\nb: 1E3\nc: 0.5\nd: 12\ne: 1_000\nf: .inf\ng: abc\nh: 1e\n"
  assert io_utils.yaml_load(text) == {
      "a": 4e-5, "b": 1000.0, "c": 0.5, "d": 12, "e": 1000, "f": float("inf"), "g": "abc",
      "h": "1e"}
  loaded = {"model": {}, "train": {}}
  run_config_lib.apply_overrides(loaded, ["train.learning_rate=4e-5",
                                          "model.hidden_dropout_prob=1e-1"])
  assert loaded["train"]["learning_rate"] == 4e-5
  assert loaded["model"]["hidden_dropout_prob"] == 0.1
  path = tmp_path / "model.yaml"
  path.write_text("vocab_size: 100\nhidden_size: 8\nnum_attention_heads: 2\n"
                  "attention_probs_dropout_prob: 5e-2\n")
  assert EtcConfig.from_file(str(path)).attention_probs_dropout_prob == 0.05
