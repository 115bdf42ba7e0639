"""HotpotQA (distractor setting) fine-tuning and evaluation."""
