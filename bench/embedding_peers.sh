#!/usr/bin/env bash
# all-MiniLM-L6-v2 embedding peers, in-process (see bench/embedding_peers.py):
# sentence-transformers on Debian's CPU PyTorch, and onnxruntime INT8.
# Makes the venv with scripts/minilm_reference --ensure-venv ($MINILM_REFENV, default
# /work/refenv) and adds onnxruntime and onnx to it, keeping Debian's numpy 1.24.2.
# Usage: bench/embedding_peers.sh SENTENCES_FILE [--batch 64] [--ort-threads N] [--ort-fp32] [--no-ort]
#   (make a sentences file with: python3 bench/embedding_sentences.py 2000 /tmp/s.txt)
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${MINILM_REFENV:-/work/refenv}
"$repo_root/scripts/minilm_reference" --ensure-venv

peer_requirements=(onnxruntime==1.32.0 onnx==1.23.2)
if ! "$venv/bin/python" - "${peer_requirements[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for req in sys.argv[1:]:
    name, want = req.split("==")
    if version(name) != want:
        sys.exit(1)
PY
then
  echo "embedding_peers: installing ${peer_requirements[*]} into $venv"
  constraints=$(mktemp)
  trap 'rm -f "$constraints"' EXIT
  echo "numpy==$("$venv/bin/python" -c 'import numpy; print(numpy.__version__)')" >"$constraints"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" \
    "${peer_requirements[@]}"
fi

exec "$venv/bin/python" "$repo_root/bench/embedding_peers.py" "$@"
