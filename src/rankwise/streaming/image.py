"""Streaming image metrics: PSNR, SSIM (scikit-image's ``structural_similarity``, the ``image``
extra), IoU and Dice per class, and SNR. Images are [batch, height, width] or
[batch, height, width, channels] arrays; class maps are integer arrays of any shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of
from rankwise.streaming.regression import paired


class PSNR(Metric):
    """Peak signal-to-noise ratio, 10 log10(data_range^2 / MSE), in dB. Pooled over every pixel
    of every image (torchmetrics' default), or ``per_image=True``: the mean of each image's PSNR
    (scikit-image's ``peak_signal_noise_ratio`` per image). ``data_range`` is required: taking it
    from the data would make batches disagree.

    >>> round(PSNR(data_range=1.0).update(predictions=[[[0.5, 0.5]]], targets=[[[0.5, 0.6]]]).compute(), 4)
    23.0103
    """

    inputs = ("predictions", "targets")

    def __init__(self, data_range: float, per_image: bool = False) -> None:
        if not data_range or data_range <= 0:
            raise MetricInputError("PSNR: data_range must be positive (e.g. 1.0 or 255)")
        super().__init__(data_range=float(data_range), per_image=per_image)

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        pred, target = paired(self, inputs, per_row=True)
        err = (pred - target) ** 2
        if not len(err):  # an empty batch adds nothing
            return
        if self.params["per_image"]:
            mse = err.reshape(len(err), -1).mean(axis=1)
            with np.errstate(divide="ignore"):
                psnr = 10 * np.log10(self.params["data_range"] ** 2 / mse)
            self.state["total"] = self.state["total"] + psnr.sum()
            self.state["count"] += len(psnr)
        else:
            self.state["total"] = self.state["total"] + err.sum()
            self.state["count"] += err.size

    def compute(self) -> float:
        n = int(self.state["count"])
        if not n:
            return float("nan")
        if self.params["per_image"]:
            return float(self.state["total"]) / n
        mse = float(self.state["total"]) / n
        return float("inf") if mse == 0 else float(10 * np.log10(self.params["data_range"] ** 2 / mse))


def gaussian_ssim(x: np.ndarray, y: np.ndarray, max_val: float, filter_size: int = 11, filter_sigma: float = 1.5,
                  k1: float = 0.01, k2: float = 0.03) -> np.ndarray:
    """SSIM of each image of two [N, H, W, C] batches with a ``filter_size`` Gaussian window of
    ``filter_sigma`` over the valid positions (no padding), per channel then averaged (Wang et
    al. 2004 as TensorFlow's ``tf.image.ssim`` and metrax's ``SSIM`` compute it): local means,
    variances and covariance from the window, c1 = (k1 max_val)^2, c2 = (k2 max_val)^2.

    >>> img = np.linspace(0, 1, 144).reshape(1, 12, 12, 1)
    >>> gaussian_ssim(img, img, 1.0).tolist()
    [1.0]
    """
    from numpy.lib.stride_tricks import sliding_window_view

    radius = (filter_size - 1) // 2
    g = np.exp(-0.5 * (np.arange(-radius, radius + 1) / filter_sigma) ** 2)
    g /= g.sum()
    kernel = np.outer(g, g)

    def local(values: np.ndarray) -> np.ndarray:   # [N, H', W', C]: the window's weighted mean
        windows = sliding_window_view(values, kernel.shape, axis=(1, 2))   # [N, H', W', C, kh, kw]
        return np.einsum("nhwcij,ij->nhwc", windows, kernel)

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu_x, mu_y = local(x), local(y)
    var_x, var_y = local(x * x) - mu_x ** 2, local(y * y) - mu_y ** 2
    cov = local(x * y) - mu_x * mu_y
    ssim_map = ((2 * mu_x * mu_y + c1) * (2 * cov + c2)) / ((mu_x ** 2 + mu_y ** 2 + c1) * (var_x + var_y + c2))
    return np.asarray(ssim_map.mean(axis=(1, 2)).mean(axis=-1))


class SSIM(Metric):
    """Mean structural similarity over images, each computed by
    ``skimage.metrics.structural_similarity`` with the options given (``data_range`` required;
    ``gaussian_weights``, ``sigma``, ``win_size``, ``use_sample_covariance``, ``channel_axis``).
    ``SSIM.metrax(max_val, filter_size, filter_sigma, k1, k2)`` takes metrax's parameters and
    its [N, H, W, C] images (``gaussian_ssim``).

    >>> img = np.linspace(0, 1, 64).reshape(1, 8, 8)
    >>> SSIM(data_range=1.0).update(predictions=img, targets=img).compute()
    1.0
    """

    @classmethod
    def metrax(cls, max_val: float, filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
               k2: float = 0.03) -> SSIM:
        """metrax's ``SSIM``: a Gaussian window over valid positions, NHWC images."""
        if filter_size < 1 or filter_sigma <= 0 or max_val <= 0:
            raise MetricInputError("SSIM.metrax: filter_size >= 1, filter_sigma > 0 and max_val > 0")
        return cls(data_range=max_val, filter_size=int(filter_size), filter_sigma=float(filter_sigma),
                   k1=float(k1), k2=float(k2))

    inputs = ("predictions", "targets")

    def __init__(self, data_range: float, **options: Any) -> None:
        super().__init__(data_range=float(data_range), **options)

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        try:
            from skimage.metrics import structural_similarity
        except ImportError:
            raise MetricInputError("SSIM needs scikit-image: pip install 'rankwise[image]'") from None
        pred, target = paired(self, inputs, per_row=True)
        if "filter_size" in self.params:   # metrax's parameters: the Gaussian-window SSIM of NHWC images
            size = self.params["filter_size"]
            if pred.ndim != 4 or pred.shape[1] < size or pred.shape[2] < size:
                raise MetricInputError(f"SSIM.update: metrax's SSIM takes [N, H, W, C] images at least {size} x "
                                       f"{size}, got shape {pred.shape}")
            values = gaussian_ssim(pred, target, self.params["data_range"], size, self.params["filter_sigma"],
                                   self.params["k1"], self.params["k2"])
            self.state["total"] = self.state["total"] + values.sum()
            self.state["count"] += len(values)
            return
        for p, t in zip(pred, target, strict=True):
            try:
                value = structural_similarity(p, t, **self.params)
            except ValueError as err:  # window larger than the image, wrong channel axis ...
                raise MetricInputError(f"SSIM.update: {err}") from None
            self.state["total"] = self.state["total"] + value
        self.state["count"] += len(pred)

    def compute(self) -> float:
        n = int(self.state["count"])
        return float(self.state["total"]) / n if n else float("nan")


class _Overlap(Metric):
    """True positives, false positives and false negatives per class of two class maps.

    ``from_logits``: predictions are scores per class on the last axis ([..., C]), their argmax
    the predicted class. ``soft`` (two classes): predictions are probabilities of class 1 and
    the counts are expected ones (TP_1 = sum p t, FP_1 = sum p (1 - t), FN_1 = sum (1 - p) t,
    class 0 alike), the soft Dice / IoU of probability maps. ``target_class_ids``: the classes
    ``compute()`` averages (all present ones by default). ``epsilon`` is added to every
    denominator (then an absent class scores 0, not NaN), as metrax does."""

    inputs = ("predictions", "targets")

    def __init__(self, num_classes: int, ignore_index: int | None = None, from_logits: bool = False,
                 soft: bool = False, target_class_ids: Sequence[int] | None = None, epsilon: float = 0.0) -> None:
        if soft and (num_classes != 2 or from_logits):
            raise MetricInputError(f"{type(self).__name__}: soft counts take probabilities of class 1 of two classes")
        ids = None if target_class_ids is None else [int(c) for c in target_class_ids]
        if ids is not None and (not ids or min(ids) < 0 or max(ids) >= num_classes):
            raise MetricInputError(f"{type(self).__name__}: target_class_ids must be classes in 0..{num_classes - 1}")
        if not epsilon >= 0:
            raise MetricInputError(f"{type(self).__name__}: epsilon must be non-negative, got {epsilon}")
        super().__init__(num_classes=num_classes, ignore_index=ignore_index, from_logits=bool(from_logits),
                         soft=bool(soft), target_class_ids=ids, epsilon=float(epsilon))

    def _initial_state(self) -> dict[str, Any]:
        dtype = np.float64 if self.params.get("soft") else np.int64
        return {"counts": np.zeros((3, self.params["num_classes"]), dtype=dtype)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        pred = inputs["predictions"]
        target = inputs["targets"]
        if self.params.get("from_logits"):
            if pred.ndim < 1 or pred.shape[-1] != self.params["num_classes"]:
                raise MetricInputError(f"{type(self).__name__}.update: from_logits needs scores per class on the "
                                       f"last axis ({self.params['num_classes']}), got shape {pred.shape}")
            pred = pred.argmax(axis=-1)
            if target.shape == pred.shape + (1,):
                target = target[..., 0]
        if self.params.get("soft"):
            self._soft_update(pred, target, inputs.get("where"))
            return
        if pred.shape != target.shape:
            raise MetricInputError(f"{type(self).__name__}.update: predictions {pred.shape} and targets "
                                   f"{target.shape} differ")
        keep = mask_of(inputs.get("where"), pred.shape)
        keep = np.ones(pred.shape, dtype=bool) if keep is None else keep.copy()
        if self.params["ignore_index"] is not None:
            keep &= target != self.params["ignore_index"]
        for what, values in (("predictions", pred), ("targets", target)):
            if values.dtype.kind in "fc" and not (np.isfinite(values) & (values == np.round(values))).all():
                raise MetricInputError(f"{type(self).__name__}.update: {what} must be class ids (whole numbers); "
                                       f"got {values[values != np.round(values)].ravel()[:1].tolist() or 'NaN'} "
                                       "(probabilities: take the argmax over classes or threshold them first)")
        p, t = pred[keep].astype(np.int64), target[keep].astype(np.int64)
        c = self.params["num_classes"]
        if len(p) and (min(p.min(), t.min()) < 0 or max(p.max(), t.max()) >= c):
            raise MetricInputError(f"{type(self).__name__}.update: class ids must lie in 0..{c - 1}")
        tp = np.bincount(t[p == t], minlength=c)
        self.state["counts"] += np.stack([tp, np.bincount(p, minlength=c) - tp, np.bincount(t, minlength=c) - tp])

    def _soft_update(self, prob: np.ndarray, target: np.ndarray, where: Any) -> None:
        name = type(self).__name__
        if prob.shape != target.shape:
            raise MetricInputError(f"{name}.update: probabilities {prob.shape} and targets {target.shape} differ")
        keep = mask_of(where, prob.shape)
        p = prob.astype(np.float64) if keep is None else prob[keep].astype(np.float64)
        t = target.astype(np.float64) if keep is None else target[keep].astype(np.float64)
        if not ((p >= 0) & (p <= 1)).all() or not np.isin(t, (0, 1)).all():
            raise MetricInputError(f"{name}.update: soft counts need probabilities in [0, 1] and 0/1 targets")
        tp1, fp1, fn1 = (p * t).sum(), (p * (1 - t)).sum(), ((1 - p) * t).sum()
        tp0 = ((1 - p) * (1 - t)).sum()
        self.state["counts"] = self.state["counts"] + np.array([[tp0, tp1], [fn1, fp1], [fp1, fn1]])

    def compute_per_class(self) -> np.ndarray:
        """The value of each class (NaN for a class never seen); each overlap metric defines it."""
        raise NotImplementedError

    def _ratio(self, num: np.ndarray, den: np.ndarray) -> np.ndarray:
        epsilon = self.params.get("epsilon", 0.0)
        if epsilon:
            return num / (den + epsilon)
        return np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0)

    def compute(self) -> float:
        per_class = self.compute_per_class()
        if self.params.get("target_class_ids") is not None:
            per_class = per_class[self.params["target_class_ids"]]
        return float(np.nanmean(per_class)) if (~np.isnan(per_class)).any() else float("nan")


class IoU(_Overlap):
    """Intersection over union per class, TP / (TP + FP + FN) (``compute_per_class()``, NaN for
    a class absent from both maps); ``compute()`` the mean over present classes (or over
    ``target_class_ids``). Counts add up over batches: metrax's ``IoU`` averages each batch's
    mean instead, the same for one batch (``IoU.metrax`` takes its arguments).

    >>> IoU(num_classes=2).update(predictions=[[0, 1, 1]], targets=[[0, 1, 0]]).compute_per_class().tolist()
    [0.5, 0.5]
    """

    @classmethod
    def metrax(cls, num_classes: int, target_class_ids: Sequence[int], from_logits: bool = False,
               epsilon: float = 1e-7) -> IoU:
        """metrax's ``IoU`` arguments: the mean over ``target_class_ids`` with ``epsilon`` added."""
        return cls(num_classes, from_logits=from_logits, target_class_ids=target_class_ids, epsilon=epsilon)

    def compute_per_class(self) -> np.ndarray:
        tp, fp, fn = self.state["counts"].astype(np.float64)
        return self._ratio(tp, tp + fp + fn)


class Dice(_Overlap):
    """Dice coefficient per class, 2 TP / (2 TP + FP + FN); ``compute()`` the mean over present
    classes (or over ``target_class_ids``). ``Dice.metrax()`` is metrax's binary ``Dice``: the
    positive class, soft counts on probabilities, 2 sum p t / (sum p + sum t + 1e-7).

    >>> Dice(num_classes=2).update(predictions=[[0, 1, 1]], targets=[[0, 1, 0]]).compute_per_class().tolist()
    [0.6666666666666666, 0.6666666666666666]
    >>> round(Dice.metrax().update(predictions=[0.9, 0.2, 0.6], targets=[1, 0, 0]).compute(), 6)   # 1.8 / 2.7
    0.666667
    """

    @classmethod
    def metrax(cls) -> Dice:
        """metrax's ``Dice``: probabilities of the positive class, soft counts, epsilon 1e-7."""
        return cls(2, soft=True, target_class_ids=[1], epsilon=1e-7)

    def compute_per_class(self) -> np.ndarray:
        tp, fp, fn = self.state["counts"].astype(np.float64)
        return self._ratio(2 * tp, 2 * tp + fp + fn)


class SNR(Metric):
    """Signal-to-noise ratio per sample over its last axis, 10 log10(sum target^2 / sum
    (target - prediction)^2) dB, averaged over samples (torchmetrics' ``signal_noise_ratio``);
    ``zero_mean=True`` removes each signal's mean first.

    >>> round(SNR().update(predictions=[[1.0, 2.0]], targets=[[1.0, 3.0]]).compute(), 4)   # 10 log10(10 / 1)
    10.0
    """

    inputs = ("predictions", "targets")

    def __init__(self, zero_mean: bool = False) -> None:
        super().__init__(zero_mean=zero_mean)

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        pred, target = paired(self, inputs, per_row=True)
        if self.params["zero_mean"]:
            pred = pred - pred.mean(axis=-1, keepdims=True)
            target = target - target.mean(axis=-1, keepdims=True)
        eps = np.finfo(np.float64).eps
        snr = 10 * np.log10(((target**2).sum(axis=-1) + eps) / (((target - pred) ** 2).sum(axis=-1) + eps))
        self.state["total"] = self.state["total"] + snr.sum()
        self.state["count"] += snr.size

    def compute(self) -> float:
        n = int(self.state["count"])
        return float(self.state["total"]) / n if n else float("nan")
