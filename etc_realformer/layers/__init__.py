"""Keras layers: global-local attention, the transformer block, embeddings."""

from etc_realformer.layers.embeddings import EtcEmbeddings
from etc_realformer.layers.global_local_attention import GlobalLocalAttention
from etc_realformer.layers.transformer_block import FeedForward, TransformerBlock
from etc_realformer.layers.heads import CpcHead, MlmHead
