"""Raw ONNX Runtime baseline for `folio bench ingest embed`.

Embeds the texts of an input JSON file the way fastembed does inside Folio,
with nothing in between: the kit's tokenizer.json (truncation to max_length,
padding to the longest text of each batch), one InferenceSession on the kit's
model.onnx with the same thread count and graph optimisation level, mean
pooling under the attention mask, L2 normalisation. Texts arrive already in
the order Folio runs them (sorted by length) and are batched the same way, so
both sides pad identically.

Usage: embed_baseline.py INPUT.json VECTORS.f32
  INPUT.json: {"texts": [...], "model_dir": str, "batch_size": int,
               "threads": int, "max_length": int}
  VECTORS.f32: written as little-endian float32, one row per text.
Prints one JSON object: {"texts_per_s", "seconds", "texts", "tokens",
"threads", "onnxruntime"}.
"""

import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def load_tokenizer(model_dir, max_length):
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    with open(os.path.join(model_dir, "config.json")) as f:
        pad_id = json.load(f).get("pad_token_id", 0)
    with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
        tok_config = json.load(f)
    pad_token = tok_config["pad_token"]
    if isinstance(pad_token, dict):
        pad_token = pad_token["content"]
    # tokenizer.json pads every text to 128; fastembed replaces that with
    # batch-longest padding and its own truncation length, and so do we.
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
    tokenizer.enable_truncation(min(max_length, int(tok_config["model_max_length"])))
    return tokenizer


def load_session(model_dir, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(
        os.path.join(model_dir, "model.onnx"), options, providers=["CPUExecutionProvider"]
    )


def embed_batch(tokenizer, session, input_names, texts):
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feed["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
    hidden = session.run(None, feed)[0]
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled / (norms + 1e-12), int(mask.sum())


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        job = json.load(f)
    texts, batch = job["texts"], job["batch_size"]
    tokenizer = load_tokenizer(job["model_dir"], job["max_length"])
    session = load_session(job["model_dir"], job["threads"])
    input_names = {i.name for i in session.get_inputs()}

    # One untimed batch, as on the Folio side: first runs allocate.
    embed_batch(tokenizer, session, input_names, texts[:batch])

    start = time.perf_counter()
    out, tokens = [], 0
    for i in range(0, len(texts), batch):
        vectors, n = embed_batch(tokenizer, session, input_names, texts[i : i + batch])
        out.append(vectors)
        tokens += n
    seconds = time.perf_counter() - start

    np.concatenate(out).astype("<f4").tofile(sys.argv[2])
    print(
        json.dumps(
            {
                "texts_per_s": len(texts) / seconds,
                "seconds": seconds,
                "texts": len(texts),
                "tokens": tokens,
                "threads": job["threads"],
                "onnxruntime": ort.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
