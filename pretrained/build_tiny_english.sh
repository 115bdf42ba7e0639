#!/usr/bin/env bash
# Rebuilds pretrained/tiny_english/: the tiny encoder the task demos start from, pretrained with
# MLM + CPC on English Wikipedia text. About 25 minutes on 2 CPU cores.
#
#   bash pretrained/build_tiny_english.sh [work_dir] [dump]
#
# The text: with no `dump` argument, the Wikipedia excerpt that the gensim package ships as test
# data (206 pages of the April 2016 English dump, about 400,000 words of prose); pip fetches the
# gensim wheel (no install, nothing else is downloaded). Pass any `pages-articles*.xml[.bz2]`
# file as `dump` to pretrain on other text. Steps: dump -> sentences (prepare_wikipedia), a
# 2000-piece WordPiece vocabulary (learn_vocab), 5 differently masked passes of 512-token
# examples (create_pretraining_data), 4000 steps of pretraining with
# configs/pretraining/tiny_english.yaml, then the final encoder, its config and vocabulary are
# copied here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
WORK=${1:-runs/pretrain_tiny_english}
DUMP=${2:-}
TARGET=pretrained/tiny_english
GENSIM_VERSION=4.4.0
EXCERPT=gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
mkdir -p "$WORK"

if [ -z "$DUMP" ]; then
  DUMP="$WORK/enwiki-excerpt.xml.bz2"
  if [ ! -f "$DUMP" ]; then
    echo "== fetching the gensim $GENSIM_VERSION wheel for its Wikipedia excerpt"
    $PY -m pip download --quiet --no-deps --only-binary=:all: "gensim==$GENSIM_VERSION" \
        -d "$WORK/wheel"
    $PY - "$WORK/wheel" "$EXCERPT" "$DUMP" <<'EOF'
import glob, os, sys, zipfile
wheel_dir, member, target = sys.argv[1:]
wheel = glob.glob(os.path.join(wheel_dir, "gensim-*.whl"))[0]
with zipfile.ZipFile(wheel) as z, open(target + ".tmp", "wb") as out:
  out.write(z.read(member))
os.replace(target + ".tmp", target)
print(f"{target}: {os.path.getsize(target)} bytes from {os.path.basename(wheel)}")
EOF
  fi
fi

echo "== 1/4 text: $DUMP -> $WORK/wiki.txt"
$PY -m etc_realformer.prepare_wikipedia --input="$DUMP" --output="$WORK/wiki.txt"
echo "== 2/4 vocabulary: 2000 WordPiece pieces"
$PY -m etc_realformer.learn_vocab --input="$WORK/wiki.txt" --output="$WORK/vocab.txt" \
    --vocab_size=2000
echo "== 3/4 pretraining data: 512 long / 48 global tokens, 5 masked passes"
$PY -m etc_realformer.create_pretraining_data --input="$WORK/wiki.txt" \
    --vocab_file="$WORK/vocab.txt" --output_dir="$WORK/data" --long_seq_len=512 \
    --global_seq_len=48 --max_predictions_per_seq=80 --max_cpc_per_seq=4 \
    --cpc_sentence_len=32 --dupe_factor=5
echo "== 4/4 pretraining (resumes if interrupted)"
$PY -m etc_realformer.pretrain --config=configs/pretraining/tiny_english.yaml \
    --train_data="$WORK/data" --output_dir="$WORK/run" --verbose=2

mkdir -p "$TARGET"
cp "$WORK"/run/final/encoder.* "$WORK/run/final/etc_config.json" "$WORK/run/final/vocab.txt" \
   "$WORK/run/final/metrics.json" "$TARGET/"
echo "== wrote $TARGET:"
ls -l "$TARGET"
