"""filters: the numpy plugin of examples/bulk/image.c (docs/values.md, "Bulk data").

Each hook takes the host's grayscale image as a memoryview (format "B", shape
(height, width)); numpy.asarray reads it where the host keeps it.
"""
import numpy as np


def invert(image):
    """Inverts the image in place: the host's own pixels change."""
    a = np.asarray(image)  # no copy: the host's memory itself
    np.subtract(255, a, out=a)


def edges(image):
    """A new image: the horizontal gradient, |right - left| / 2 (0 at the borders)."""
    a = np.asarray(image).astype(np.int16)
    out = np.zeros(a.shape, dtype=np.uint8)
    out[:, 1:-1] = np.abs(a[:, 2:] - a[:, :-2]) // 2
    return out
