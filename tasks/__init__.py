"""Fine-tuning tasks built on the ETC-RealFormer encoder."""
