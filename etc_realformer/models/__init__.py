"""Models composed of the layers: the encoder and the pretraining model (MLM + CPC)."""

from etc_realformer.models.encoder import EtcModel
from etc_realformer.models.pretraining import EtcPretrainingModel
