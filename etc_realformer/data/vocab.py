"""Special token ids shared by every tokenizer, task and pretraining pipeline.

The layout is the BERT uncased vocabulary's, so an official BERT/ETC `vocab.txt` works unchanged:
id 0 is padding, ids 1..99 are the `[unusedN]` slots (ETC uses the first few as global-token
types), 100..103 are `[UNK] [CLS] [SEP] [MASK]`. A vocabulary learned by
`python -m etc_realformer.learn_vocab` reserves the same 104 entries first.

Global tokens share the embedding table of the word pieces. Every ETC checkpoint was pretrained
with id 1 for the sentence tokens (2 for a sentence hidden for CPC), whatever its vocabulary.
The other global ids are the official converters' choices, which for the RoBERTa SentencePiece
vocabulary of the ETC-large checkpoints differ per task; each task keeps its own table
(docs/tokenizers.md).
"""

PAD_ID = 0
SENTENCE_ID = 1      # one global token per sentence
CPC_MASK_ID = 2      # the global token of a sentence hidden for CPC
QUESTION_ID = 3
CANDIDATE_ID = 4
PARAGRAPH_ID = 5
UNK_ID = 100
CLS_ID = 101
SEP_ID = 102
MASK_ID = 103

NUM_UNUSED = 99
# The first 104 vocabulary entries, in id order.
RESERVED_TOKENS = (["[PAD]"] + [f"[unused{i}]" for i in range(NUM_UNUSED)]
                   + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"])
assert len(RESERVED_TOKENS) == MASK_ID + 1
