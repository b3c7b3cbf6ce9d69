"""Standard SavedModel tags (TF's tf.saved_model.tag_constants)."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"
