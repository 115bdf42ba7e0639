"""The encoder layers take their options, and the options' defaults, from EtcConfig."""

import pytest

from etc_realformer import EtcConfig, EtcModel
from etc_realformer.layers import FeedForward, GlobalLocalAttention, TransformerBlock

LAYER_CLASSES = [GlobalLocalAttention, TransformerBlock, FeedForward]

SMALL = EtcConfig(vocab_size=60, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                  intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
                  relative_vocab_size=8, hidden_act="relu", hidden_dropout_prob=0.05,
                  attention_probs_dropout_prob=0.0, initializer_range=0.2,
                  share_qkv_projections=False, share_kv_projections=True,
                  share_feed_forward_params=False, residual_attention="mean",
                  residual_paths=("local",), num_persistent_memory=2)


@pytest.mark.parametrize("cls", LAYER_CLASSES)
def test_defaults_are_etc_config_defaults(cls):
  assert set(cls.CONFIG_KEYS) <= set(EtcConfig.field_names())
  config = cls().get_config()
  defaults = EtcConfig().to_dict()  # residual_paths as a list, like get_config
  assert {key: config[key] for key in cls.CONFIG_KEYS} == {
      key: defaults[key] for key in cls.CONFIG_KEYS}


def test_block_takes_every_sublayer_option():
  for sublayer in (GlobalLocalAttention, FeedForward):
    assert set(sublayer.CONFIG_KEYS) <= set(TransformerBlock.CONFIG_KEYS)


def test_from_etc_config_passes_every_option_down():
  block = TransformerBlock.from_etc_config(SMALL, layer_index=2, implementation="dense",
                                           name="layer_2")
  expected = SMALL.to_dict()
  config = block.get_config()
  assert {key: config[key] for key in TransformerBlock.CONFIG_KEYS} == {
      key: expected[key] for key in TransformerBlock.CONFIG_KEYS}
  assert (config["name"], config["layer_index"], config["implementation"]) == (
      "layer_2", 2, "dense")
  attention = block.attention.get_config()
  assert {key: attention[key] for key in GlobalLocalAttention.CONFIG_KEYS} == {
      key: expected[key] for key in GlobalLocalAttention.CONFIG_KEYS}
  assert (attention["layer_index"], attention["implementation"]) == (2, "dense")
  for feed_forward in block.feed_forwards.values():
    ff = feed_forward.get_config()
    assert {key: ff[key] for key in FeedForward.CONFIG_KEYS} == {
        key: expected[key] for key in FeedForward.CONFIG_KEYS}
  # Keras's from_config still reads get_config()'s dict.
  assert TransformerBlock.from_config(config).get_config() == config
  direct = GlobalLocalAttention.from_etc_config(SMALL, layer_index=2, implementation="dense",
                                                name="attention")
  assert direct.get_config() == attention


def test_model_blocks_come_from_the_config():
  model = EtcModel(SMALL)
  for i, block in enumerate(model.blocks):
    assert block.get_config() == TransformerBlock.from_etc_config(
        SMALL, layer_index=i, name=f"layer_{i}").get_config()


def test_arguments_bind_like_a_signature():
  block = TransformerBlock(16, 2, 3, 32, "relu", residual_paths="global")
  config = block.get_config()
  assert [config[k] for k in TransformerBlock.CONFIG_KEYS[:5]] == [16, 2, 3, 32, "relu"]
  assert config["residual_paths"] == ["global"]
  assert block.attention.residual_paths == ("global",)
  with pytest.raises(TypeError, match="multiple values for argument 'hidden_size'"):
    TransformerBlock(16, hidden_size=16)
  with pytest.raises(TypeError, match="at most 4 positional"):
    FeedForward(16, 32, "relu", 0.02, 1)
  with pytest.raises(TypeError, match="hiden_size"):
    GlobalLocalAttention(hiden_size=16)
  with pytest.raises(ValueError, match="residual_attention"):
    GlobalLocalAttention(16, 2, 3, residual_attention="product")
