"""Models composed of the layers: the encoder (and later the pretraining model)."""

from etc_realformer.models.encoder import EtcModel
