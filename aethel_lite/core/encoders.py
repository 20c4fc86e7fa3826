"""MiniLM's encoders: the model folder's facts read from its files, and an ONNX Runtime backend.

:func:`model_files_digest` and :func:`sentence_model_facts` describe a sentence-transformers folder
without loading it (what :meth:`~aethel_lite.retrievers.dense.DenseRetriever.embedding_store_config`
records). :class:`OnnxSentenceEncoder` encodes as sentence-transformers does (the model's own
``tokenizer.json``, truncation to ``max_seq_length``, mean pooling over the attention mask, L2
normalisation) with ONNX Runtime, so neither torch nor sentence-transformers is imported to encode.

The ONNX file is exported from the installed folder's weights with ``torch.onnx.export`` at first use
(never fetched) into ``$AETHEL_CACHE/models/`` or ``$AETHEL_MODELS`` (:func:`onnx_model_file`), named by the model files'
digest, the versions of the exporting and running packages and the variant: ``"onnx-fp32"`` (the
exported float32 graph) or ``"onnx-int8"`` (ONNX Runtime's dynamic quantization of it: int8 weights of
every MatMul, activations quantized per batch). Deleting the folder is safe: the files are exported anew.

Which encoder a retriever runs: :func:`resolve_precision` (its ``precision``, else ``$AETHEL_DENSE_PRECISION``, else
ONNX Runtime in float32), loaded once per process by :func:`load_onnx_encoder` or, for PyTorch's precisions,
:func:`load_sentence_model`. Its passage vectors are cached per text: :func:`stored_vectors` reads the valid ones of a
store, :func:`encoder_batches` forms the misses into the batches one ``encode`` call would (so a vector is the same
bit for bit whether it was cached or not).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from ..caching.locations import models_dir
from ..caching.store import PassageStore
from ..caching.versions import DEFAULT_DENSE_PRECISION, ONNX_PACKAGES, package_versions
from ..errors import DataError, DataNotFoundError, ParameterError
from ..io import sha256_file

__all__ = [
    "ONNX_PRECISIONS",
    "EXPORT_FORMAT",
    "model_files_digest",
    "sentence_model_facts",
    "onnx_model_file",
    "start_session",
    "OnnxSentenceEncoder",
    "PRECISIONS",
    "PRECISION_ENV",
    "resolve_precision",
    "INDEX_PRECISION",
    "index_precision",
    "stored_precision",
    "load_sentence_model",
    "load_onnx_encoder",
    "embedding_dimension",
    "encoder_batches",
    "stored_vectors",
    "similarity_products",
]

#: the ONNX Runtime variants of the encoder (values of ``precision``)
ONNX_PRECISIONS = ("onnx-fp32", "onnx-int8")
#: the layout of an exported file (inputs, outputs, opset); a change exports anew
EXPORT_FORMAT = "minilm-onnx/2"
_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_SESSIONS: dict[tuple[str, str], Any] = {}
#: sessions being created on a background thread (:func:`start_session`), by the key of ``_SESSIONS``
_STARTED: dict[tuple[str, str], Future] = {}
_STARTED_LOCK = threading.Lock()
#: the sentence-transformers modules this backend reproduces, in order (a Normalize module is optional)
_MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)


@functools.cache
def model_files_digest(path: str) -> str:
    r"""Hex SHA-256 over the names and contents of every file in a model folder.

    .. math:: h = \mathrm{SHA256}\big(\Vert_{f} \; \mathrm{len}(n_f) \Vert n_f \Vert \mathrm{SHA256}(f)\big)

    over the files :math:`f` below ``path`` in sorted order of their relative POSIX names
    :math:`n_f` (``__pycache__`` folders skipped), once per process and path. Part of the embedding
    store's configuration: a changed weight, tokenizer or pooling file opens a new store.
    """
    root = Path(path)
    if not root.is_dir():
        raise DataNotFoundError(f"model_path {path!r}: no such sentence-transformers folder")
    files = sorted(
        (f for f in root.rglob("*") if f.is_file() and "__pycache__" not in f.parts),
        key=lambda f: f.relative_to(root).as_posix(),
    )
    h = hashlib.sha256()
    for f in files:
        name = f.relative_to(root).as_posix().encode("utf-8")
        h.update(len(name).to_bytes(8, "little") + name + bytes.fromhex(sha256_file(f)))
    return h.hexdigest()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: unreadable model file ({exc})") from None


@functools.cache
def sentence_model_facts(path: str) -> dict | None:
    """``{"max_seq_length", "dim"}`` of a sentence-transformers folder read from its files (no model is
    loaded), or None for a layout other than Transformer, mean Pooling and optionally Normalize.

    ``max_seq_length`` is ``sentence_bert_config.json``'s (sentence-transformers' truncation length), ``dim``
    the pooling's ``word_embedding_dimension``, checked against the transformer's ``hidden_size``.
    """
    root = Path(path)
    modules_file = root / "modules.json"
    if not modules_file.is_file():
        return None
    modules = _read_json(modules_file)
    types = [m.get("type") for m in modules] if isinstance(modules, list) else None
    if types not in (list(_MODULES[:2]), list(_MODULES)) or modules[0].get("path") not in ("", "."):
        return None
    pooling = _read_json(root / modules[1]["path"] / "config.json")
    st_config = _read_json(root / "sentence_bert_config.json")
    hidden = _read_json(root / "config.json").get("hidden_size")
    modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_")}
    if modes.get("pooling_mode_mean_tokens") is not True or any(
        v for k, v in modes.items() if k != "pooling_mode_mean_tokens"
    ):
        return None
    dim, length = pooling.get("word_embedding_dimension"), st_config.get("max_seq_length")
    if not isinstance(dim, int) or dim != hidden or not isinstance(length, int) or length < 2:
        return None
    return {"max_seq_length": length, "dim": dim}


def _export_key(path: str, precision: str) -> str:
    """What names an exported file: the format, the variant, the model files and the packages' versions."""
    described = {
        "format": EXPORT_FORMAT,
        "opset": _OPSET,
        "precision": precision,
        "model_files": model_files_digest(path),
        "versions": package_versions(ONNX_PACKAGES),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode("utf-8")).hexdigest()


def _temp_path(final: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{final.stem}-", suffix=".onnx.tmp", dir=final.parent)
    os.close(fd)
    return Path(name)


def _export_fp32(path: str, out: Path) -> None:
    """``torch.onnx.export`` of the folder's transformer (last hidden states for ids, mask and token types)."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    bert = AutoModel.from_pretrained(path, local_files_only=True, attn_implementation="eager")
    bert.eval()

    class Hidden(torch.nn.Module):  # the inputs by name: the positional order of forward() changes
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    ids = torch.tensor([[101, 7592, 2088, 102, 0], [101, 7592, 102, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    batch, seq = "batch", "sequence"
    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Hidden().eval(),
            (ids, mask, torch.zeros_like(ids)),
            str(out),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: batch, 1: seq} for name in (*_INPUTS, "last_hidden_state")},
            opset_version=_OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def _quantize(fp32: Path, out: Path) -> None:
    """ONNX Runtime's dynamic quantization: signed int8 weights with a scale per output channel (per-tensor
    scales lose far more: cosine to float32 0.90-0.95 against min 0.983, median 0.994, benchmarks/README.md), activations
    quantized per batch at run time."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # its advice to pre-process the model goes to the root logger
    try:
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        logging.disable(logging.NOTSET)


def _exported_file(path: str, precision: str, root: str | os.PathLike | None) -> Path:
    """Where the exported file of ``path`` in ``precision`` is (or will be) in the cache."""
    return models_dir(root) / f"minilm-{precision}-{_export_key(path, precision)[:24]}.onnx"


def onnx_model_file(path: str, precision: str, *, root: str | os.PathLike | None = None) -> Path:
    """The ONNX file of the model folder ``path`` in the variant ``precision`` (see the module docstring),
    exported (and quantized) into the cache on first use; every write is a temporary file renamed into place."""
    if precision not in ONNX_PRECISIONS:
        raise ParameterError(
            f"precision must be one of {', '.join(map(repr, ONNX_PRECISIONS))}; got {precision!r}"
        )
    final = _exported_file(path, precision, root)
    if final.is_file():
        return final
    tmp = _temp_path(final)
    try:
        if precision == "onnx-fp32":
            _export_fp32(path, tmp)
        else:
            _quantize(onnx_model_file(path, "onnx-fp32", root=root), tmp)
        tmp.chmod(0o644)  # mkstemp's 0600 would hide a shared cache's file from other users
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def _session_key(file: Path) -> tuple[str, str]:
    import onnxruntime as ort

    return (str(file), str(ort.__version__))


def _new_session(file: Path):
    """An ONNX Runtime CPU session of ``file``."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # no warnings about unused initialisers on stderr
    # $AETHEL_ONNX_THREADS, else $OMP_NUM_THREADS (what torch follows), else ONNX Runtime's one per core
    threads = os.environ.get("AETHEL_ONNX_THREADS") or os.environ.get("OMP_NUM_THREADS")
    if threads and threads.isdigit() and int(threads) > 0:
        options.intra_op_num_threads = int(threads)
    return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])


def _session(file: Path):
    """The ONNX Runtime CPU session of ``file``, once per process and file (one that
    :func:`start_session` began is waited for; what creating it raised is raised here)."""
    key = _session_key(file)
    with _STARTED_LOCK:
        started = _STARTED.pop(key, None)
    if key not in _SESSIONS:
        _SESSIONS[key] = _new_session(file) if started is None else started.result()
    return _SESSIONS[key]


def _create_into(future: Future, file: Path) -> None:
    try:
        future.set_result(_new_session(file))
    except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits for the session
        future.set_exception(exc)


def start_session(path: str, precision: str, *, root: str | os.PathLike | None = None) -> bool:
    """Begin creating the ONNX Runtime session of ``path`` in ``precision`` on a background thread;
    return whether one was begun.

    Creating a session reads the weights (~90 MB) and prepares them for the CPU kernels, ~0.25 s in
    which ONNX Runtime holds no lock on the interpreter: a caller that starts it first can meanwhile
    do its other start-up work (``aethel search``: spaCy's import and pipeline) on the other core.
    The session is the one an :class:`OnnxSentenceEncoder` would create (same file, same options);
    an encoder built later takes it. Begun only when the model file is already exported (an export
    imports torch, which must not happen beside another thread's imports) and ONNX Runtime is
    installed (imported here, on the calling thread); otherwise nothing happens and the encoder
    creates its session as usual.
    """
    if precision not in ONNX_PRECISIONS or sentence_model_facts(path) is None:
        return False
    file = _exported_file(path, precision, root)
    if not file.is_file():
        return False
    try:
        key = _session_key(file)
    except ImportError:  # pragma: no cover - the encoder says so when it is built
        return False
    with _STARTED_LOCK:
        if key in _SESSIONS or key in _STARTED:
            return False
        future = _STARTED[key] = Future()
    threading.Thread(target=_create_into, args=(future, file), name="aethel-onnx-session").start()
    return True


class OnnxSentenceEncoder:
    """A sentence-transformers folder (Transformer, mean Pooling, Normalize) run with ONNX Runtime.

    Parameters
    ----------
    path : str
        The sentence-transformers folder (its ``tokenizer.json`` and weights).
    precision : {"onnx-fp32", "onnx-int8"}
    root : path-like, optional
        The cache root of the exported files (default ``$AETHEL_CACHE``).
    """

    def __init__(self, path: str, precision: str, *, root: str | os.PathLike | None = None) -> None:
        facts = sentence_model_facts(path)
        if facts is None:
            raise ParameterError(
                f"model_path {path!r}: ONNX encoding needs a Transformer + mean Pooling (+ Normalize) folder"
            )
        from tokenizers import Tokenizer

        self.path, self.precision = path, precision
        self.max_seq_length, self.dim = facts["max_seq_length"], facts["dim"]
        tokenizer = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_seq_length, strategy="longest_first")
        pad = tokenizer.padding or {}
        tokenizer.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))
        self.tokenizer = tokenizer
        file = onnx_model_file(path, precision, root=root)
        try:
            self.session = _session(file)
        except Exception as exc:  # noqa: BLE001 - a damaged cached file (ONNX Runtime raises its own types)
            warnings.warn(
                f"{file}: unreadable ONNX model ({exc}); exporting it anew", RuntimeWarning, stacklevel=2
            )
            file.unlink(missing_ok=True)
            self.session = _session(onnx_model_file(path, precision, root=root))
        self._names = [i.name for i in self.session.get_inputs()]

    def _batch(self, texts: list[str], normalize: bool) -> np.ndarray:
        encoded = self.tokenizer.encode_batch([t.strip() for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {n: feeds[n] for n in self._names})[0]
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        if normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, np.float32(1e-12))
        return pooled.astype(np.float32, copy=False)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, normalize: bool = True) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(n, dim)`` float32, in batches of ``batch_size`` formed as
        sentence-transformers forms them (by decreasing length; each padded to its longest text)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._batch([texts[i] for i in rows], normalize)
        return out


#: the values of ``precision``: PyTorch's, then ONNX Runtime's
PRECISIONS = ("float32", "bfloat16", *ONNX_PRECISIONS)
#: environment variable giving the default ``precision`` of every DenseRetriever (``make book`` sets it)
PRECISION_ENV = "AETHEL_DENSE_PRECISION"
_MODELS: dict[str, Any] = {}


def resolve_precision(precision: Any = None) -> str:
    """The encoder's arithmetic: ``precision``, else ``$AETHEL_DENSE_PRECISION``, else
    :data:`~aethel_lite.caching.versions.DEFAULT_DENSE_PRECISION` (``"onnx-fp32"``).

    Raises
    ------
    ParameterError
        Not one of ``"float32"``, ``"bfloat16"`` (PyTorch), ``"onnx-fp32"``, ``"onnx-int8"`` (ONNX Runtime);
        the environment variable is named when it was the source.
    """
    source = "precision"
    if precision is None:
        precision, source = os.environ.get(PRECISION_ENV) or DEFAULT_DENSE_PRECISION, PRECISION_ENV
    if precision not in PRECISIONS:
        raise ParameterError(f"{source} must be one of {', '.join(map(repr, PRECISIONS))}; got {precision!r}")
    return precision


#: MiniLM's arithmetic in the indexes ``aethel index`` builds unless ``$AETHEL_DENSE_PRECISION`` says otherwise:
#: the default of every retriever (ONNX Runtime in float32), so that ``aethel search`` encodes its questions
#: without importing torch
INDEX_PRECISION = DEFAULT_DENSE_PRECISION


def index_precision() -> str:
    """The precision of a new index's embeddings: :func:`resolve_precision` of no setting (the same as a
    retriever's: ``$AETHEL_DENSE_PRECISION``, else :data:`INDEX_PRECISION`)."""
    return resolve_precision()


def stored_precision(store_config: Any) -> str:
    """The precision an embedding store configuration (an index part's ``store_config``) was made with
    (``"float32"`` when it names none; an unknown name is returned as is, to fail the configuration check)."""
    precision = store_config.get("precision", "float32") if isinstance(store_config, dict) else "float32"
    return precision if isinstance(precision, str) else "float32"


def load_sentence_model(path: str):
    """A SentenceTransformer on CPU, loaded once per process and path (never from the hub)."""
    if path not in _MODELS:
        from sentence_transformers import SentenceTransformer

        if not Path(path).is_dir():
            raise DataNotFoundError(f"model_path {path!r}: no such sentence-transformers folder")
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars would clutter notebook output
        _MODELS[path] = SentenceTransformer(path, device="cpu", local_files_only=True)
    return _MODELS[path]


def embedding_dimension(model) -> int:
    """Embedding width (``get_embedding_dimension`` in sentence-transformers >= 5, else the old name)."""
    if isinstance(model, OnnxSentenceEncoder):
        return model.dim
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


def load_onnx_encoder(path: str, precision: str) -> OnnxSentenceEncoder:
    """An :class:`OnnxSentenceEncoder`, built once per process, path and variant."""
    key = f"{precision}:{path}"
    if key not in _MODELS:
        if not Path(path).is_dir():
            raise DataNotFoundError(f"model_path {path!r}: no such sentence-transformers folder")
        _MODELS[key] = OnnxSentenceEncoder(path, precision)
    return _MODELS[key]


def encoder_batches(model, keys: list[str], texts: list[str], batch_size: int) -> list[list[str]]:
    """``keys`` in the batches ``model.encode(texts, batch_size=batch_size)`` would form (one batch: as given):
    sentence-transformers' order by decreasing length (interleaved where the model flattens its inputs)."""
    if len(keys) <= batch_size:
        return [list(keys)]
    length = getattr(model, "_input_length", None) or len
    order = np.argsort([-length(t) for t in texts])
    can_flatten = getattr(model, "_can_flatten_inputs", None)
    if can_flatten is not None and can_flatten():
        order = model._interleave_sorted_indices(order)
    return [[keys[i] for i in order[s : s + batch_size]] for s in range(0, len(order), batch_size)]


def stored_vectors(store: PassageStore, keys: Sequence[str], dim: int, normalize: bool) -> dict[str, bytes]:
    """Valid stored vectors of ``keys`` as raw bytes (unit norm with ``normalize``); bad ones are warned about
    and left out."""
    found = store.get_many(keys)
    width = 4 * dim
    bad = {k: f"{len(v)} bytes, expected {width}" for k, v in found.items() if len(v) != width}
    ok = [k for k in found if k not in bad]
    if ok:
        arr = np.frombuffer(b"".join(found[k] for k in ok), dtype="<f4").reshape(len(ok), dim)
        finite = np.isfinite(arr).all(axis=1)
        unit = np.abs(np.linalg.norm(arr, axis=1) - 1.0) <= 1e-3 if normalize else np.ones(len(ok), bool)
        for i in np.flatnonzero(~(finite & unit)).tolist():
            bad[ok[i]] = "non-finite values" if not finite[i] else "not of unit norm"
    if bad:
        first = next(iter(bad.items()))
        warnings.warn(
            f"{store.path}: {len(bad)} corrupt embedding cache entries (first: {first[0][:12]}: {first[1]}); "
            "recomputing them",
            RuntimeWarning,
            stacklevel=4,
        )
    return {k: bytes(v) for k, v in found.items() if k not in bad}


def similarity_products(emb: np.ndarray, onnx: bool):
    """``block -> block @ emb.T`` (float32), the questions' dot products with the passages: NumPy's with ONNX
    Runtime, where no torch is loaded, else torch's."""
    if onnx:
        return lambda block: block @ emb.T
    import torch

    with warnings.catch_warnings():  # a read-only (stored) matrix: torch only reads it
        warnings.simplefilter("ignore", UserWarning)
        emb_t = torch.from_numpy(emb)

    def product(block: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return (torch.from_numpy(block) @ emb_t.T).numpy()

    return product
