"""Streaming metrics built on ``rankwise.state``: update batch by batch, merge, compute."""

from rankwise.state import Metric, MultiMetric
from rankwise.streaming.classification import (
    Accuracy,
    BrierScore,
    CalibrationError,
    ConfusionMatrix,
    FBeta,
    LogLoss,
    MatthewsCorrCoef,
    Precision,
    Recall,
)
from rankwise.streaming.clicks import ConditionalPerplexity, CTRCalibration, LogLikelihood, Perplexity
from rankwise.streaming.coverage import ItemExposure
from rankwise.streaming.curves import ROCAUC, AveragePrecision
from rankwise.streaming.diversity import DiversityMetrics
from rankwise.streaming.generic import Average, FunctionMetric
from rankwise.streaming.image import PSNR, SNR, SSIM, Dice, IoU
from rankwise.streaming.label_ranking import (
    CoverageError,
    DCGScore,
    LabelRankingAveragePrecision,
    LabelRankingLoss,
    NDCGScore,
)
from rankwise.streaming.ranking import (
    MAP,
    MRR,
    NDCG,
    HitRate,
    PrecisionAtK,
    RankingMetrics,
    RecallAtK,
    average_precision_at_ks,
    per_row,
)
from rankwise.streaming.regression import (
    CosineSimilarity,
    MeanAbsoluteError,
    MeanSquaredError,
    MeanSquaredLogError,
    PearsonCorrCoef,
    R2Score,
    RootMeanSquaredError,
    RootMeanSquaredLogError,
    SpearmanCorrCoef,
)
from rankwise.streaming.text import (
    BLEU,
    ROUGE,
    WER,
    CharErrorRate,
    MatchErrorRate,
    TokenPerplexity,
    WordErrorRate,
    WordInformationLost,
    WordInformationPreserved,
)

__all__ = ["average_precision_at_ks", "per_row", "ItemExposure",
           "Accuracy", "AveragePrecision", "BrierScore", "CalibrationError", "ConditionalPerplexity",
           "ConfusionMatrix", "CosineSimilarity", "CTRCalibration", "LogLikelihood", "Perplexity",
           "FBeta", "LogLoss", "MatthewsCorrCoef", "MeanAbsoluteError", "MeanSquaredError", "MeanSquaredLogError",
           "Metric", "MultiMetric", "PearsonCorrCoef", "Precision", "R2Score", "ROCAUC", "Recall",
           "RootMeanSquaredError", "RootMeanSquaredLogError", "SpearmanCorrCoef", "MAP", "MRR", "NDCG", "HitRate",
           "PrecisionAtK", "RankingMetrics", "RecallAtK", "BLEU", "ROUGE", "CharErrorRate", "TokenPerplexity",
           "WordErrorRate", "WER", "PSNR", "SNR", "SSIM", "Dice", "IoU", "CoverageError", "DCGScore",
           "LabelRankingAveragePrecision", "LabelRankingLoss", "NDCGScore", "MatchErrorRate",
           "WordInformationLost", "WordInformationPreserved", "DiversityMetrics", "Average", "FunctionMetric"]
